import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Deferred, Effect, Exit, Queue } from "effect"

/** An actor's persisted state as loaded: undefined when it never committed anything. */
export type LoadedRow = { readonly state: unknown; readonly lastSeq: number } | undefined

interface Pending {
  readonly key: string
  readonly done: Deferred.Deferred<LoadedRow, SqlError>
}

/**
 * Loads actors' states for one owned partition. Actors coming to life together (a burst of
 * commands for new keys: a broadcast's targets, an event's deliveries) share one query, like
 * writes share one transaction in the committer: whatever queued up while the previous query ran
 * is read with `actor_key = ANY(...)`. One query per actor cost more than everything else the
 * runtime does for it.
 */
export const makeStateLoader = (table: string, maxBatch = 500) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const queue = yield* Queue.unbounded<Pending>()

    const read = (batch: ReadonlyArray<Pending>) =>
      Effect.gen(function*() {
        const keys = Array.from(new Set(batch.map((p) => p.key)))
        const rows = yield* sql<{ actorKey: string; state: unknown; lastSeq: string }>`
          SELECT actor_key, state, last_seq FROM ${sql(table)} WHERE actor_key = ANY(${keys}::text[])`
        return new Map(rows.map((r) => [r.actorKey, { state: r.state, lastSeq: Number(r.lastSeq) }]))
      })

    yield* Effect.gen(function*() {
      for (;;) {
        const batch = Array.from(yield* Queue.takeBetween(queue, 1, maxBatch))
        const exit = yield* Effect.exit(read(batch))
        for (const p of batch) {
          Deferred.unsafeDone(p.done, Exit.isSuccess(exit) ? Exit.succeed(exit.value.get(p.key)) : Exit.failCause(exit.cause))
        }
      }
    }).pipe(Effect.forkScoped)

    const load = (key: string): Effect.Effect<LoadedRow, SqlError> =>
      Effect.flatMap(Deferred.make<LoadedRow, SqlError>(), (done) => Effect.zipRight(Queue.offer(queue, { key, done }), Deferred.await(done)))

    return { load } as const
  })
