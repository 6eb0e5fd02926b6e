import { Duration, Effect, Metric, Schedule } from "effect"
import { sweepHolds } from "./holds.ts"
import type { PartitionState } from "./partitionState.ts"

/**
 * Persisted states of actors, in one query however many (a burst of new keys is one round
 * trip); an actor that never committed starts from the kind's initial state.
 */
export const loadStates = (p: PartitionState, keys: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const { sql } = p.env
    const { kind } = p
    const rows = yield* sql<{ actorKey: string; state: unknown; lastSeq: string }>`
      SELECT actor_key, state, last_seq FROM ${sql(kind.table)} WHERE actor_key = ANY(${keys}::text[])`
    const found = new Map(rows.map((row) => [row.actorKey, row]))
    const loaded = new Map<string, { state: unknown; seq: number }>()
    for (const key of keys) {
      const row = found.get(key)
      loaded.set(key, row === undefined ? { state: kind.initial(key), seq: 0 } : { state: yield* Effect.orDie(p.decodeState(row.state)), seq: Number(row.lastSeq) })
    }
    return loaded
  }).pipe(Effect.orDie)

/** The actors of a batch, in memory and busy until it is committed (those absent loaded in one query). */
export const residentsFor = (p: PartitionState, keys: Iterable<string>) =>
  Effect.gen(function*() {
    const absent: Array<string> = []
    for (const key of keys) {
      const r = p.residents.get(key)
      if (r === undefined) absent.push(key)
      else r.busy = true
    }
    if (absent.length > 0) {
      for (const [key, loaded] of yield* loadStates(p, absent)) p.residents.set(key, { ...loaded, idleSince: Date.now(), busy: true })
    }
  })

/**
 * States stay in memory until idle for the kind's passivation time; the same sweep keeps held
 * commands alive or ends the holds past their deadline.
 */
export const passivation = (p: PartitionState) => {
  const passivateAfter = Duration.toMillis(p.registered.passivateAfter)
  const sweep = Effect.suspend(() => {
    const now = Date.now()
    for (const [key, r] of p.residents) if (!r.busy && now - r.idleSince >= passivateAfter) p.residents.delete(key)
    sweepHolds(p, now)
    return Metric.set(p.metrics.active, p.residents.size)
  })
  return sweep.pipe(Effect.repeat(Schedule.spaced(Duration.millis(Math.min(1_000, Math.max(100, passivateAfter / 4))))))
}
