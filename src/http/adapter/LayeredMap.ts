/**
 * A request's context map: the few entries of the request over the node's (some hundred services),
 * which are read through rather than copied. Copying them for each request was the largest single
 * cost of a no-op route. It behaves as one Map to everything that reads it (Effect's Context reads
 * with `get`/`has`, and copies with the iterator when a handler provides a service of its own).
 */
export class LayeredMap<K, V> extends Map<K, V> {
  constructor(private readonly under: ReadonlyMap<K, V>) {
    super()
  }

  override get(key: K): V | undefined {
    return super.has(key) ? super.get(key) : this.under.get(key)
  }

  override has(key: K): boolean {
    return super.has(key) || this.under.has(key)
  }

  override get size(): number {
    let size = this.under.size
    for (const key of super.keys()) if (!this.under.has(key)) size++
    return size
  }

  private *all(): Generator<[K, V]> {
    for (const entry of this.under) if (!super.has(entry[0])) yield entry
    yield* super.entries()
  }

  override entries(): MapIterator<[K, V]> {
    return this.all() as unknown as MapIterator<[K, V]>
  }

  override keys(): MapIterator<K> {
    const all = this.all()
    return (function*() {
      for (const [key] of all) yield key
    })() as unknown as MapIterator<K>
  }

  override values(): MapIterator<V> {
    const all = this.all()
    return (function*() {
      for (const [, value] of all) yield value
    })() as unknown as MapIterator<V>
  }

  override [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries()
  }

  override forEach(callback: (value: V, key: K, map: Map<K, V>) => void, thisArg?: unknown): void {
    for (const [key, value] of this.entries()) callback.call(thisArg, value, key, this)
  }

  override delete(key: K): boolean {
    if (this.under.has(key) && !super.has(key)) throw new Error("a request's context cannot remove the node's services")
    return super.delete(key)
  }
}
