import { Effect } from "effect"
import { ChangeFeed } from "./ChangeFeed.ts"

interface Entry<A> {
  readonly accountId: string
  readonly value: A
  readonly epoch: number
}

/**
 * A node-local cache of rows that belong to an account, for the hot read paths (API key lookup,
 * the bots of an account). Whatever writes those rows, the change feed drops the account's entries
 * at commit; while the feed is down nothing is served from memory. A load that raced with a change
 * of its tables is returned but not kept. Misses are never cached, so unknown keys cannot fill it.
 */
export const makeReadCache = <A>(options: { readonly tables: ReadonlyArray<string>; readonly capacity: number }) =>
  Effect.gen(function*() {
    const feed = yield* ChangeFeed
    const entries = new Map<string, Entry<A>>()
    const byAccount = new Map<string, Set<string>>()
    let changes = 0

    const forget = (accountId: string) => {
      const keys = byAccount.get(accountId)
      if (keys === undefined) return
      for (const key of keys) entries.delete(key)
      byAccount.delete(accountId)
    }

    yield* feed.subscribe((table, accountId) => {
      if (!options.tables.includes(table)) return
      changes++
      forget(accountId)
    })

    const keep = (key: string, entry: Entry<A>) => {
      if (entries.size >= options.capacity) {
        entries.clear()
        byAccount.clear()
      }
      entries.set(key, entry)
      let keys = byAccount.get(entry.accountId)
      if (keys === undefined) byAccount.set(entry.accountId, keys = new Set())
      keys.add(key)
    }

    /**
     * The cached value of `key`, or `load`'s answer (kept when it is safe to keep). `load` is built
     * only on a miss: a hit, on every request, must not pay for building a query (or a span, which
     * captures a stack trace).
     */
    const get = <E, R>(key: string, load: () => Effect.Effect<{ readonly accountId: string; readonly value: A } | undefined, E, R>) =>
      Effect.suspend(() => {
        const epoch = feed.epoch()
        const hit = entries.get(key)
        if (hit !== undefined && feed.isLive() && hit.epoch === epoch) return Effect.succeed<A | undefined>(hit.value)
        const before = changes
        return Effect.map(load(), (found) => {
          if (found === undefined) return undefined
          if (feed.isLive() && feed.epoch() === epoch && changes === before) keep(key, { ...found, epoch })
          return found.value
        })
      })

    return { get, size: () => entries.size } as const
  })
