import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Data, Duration, Effect, FiberSet, Option, Schedule, type Scope } from "effect"
import { refused } from "../actors/runtime/sqlRefusal.ts"
import { type ChunkOrder, chunkKey } from "../messaging/chunkProtocol.ts"

// What the two chunk runners (ChunkRunner for RCS, WaChunkRunner for WhatsApp campaigns) share:
// how a run is kept going in the background, how it ends when its partition leaves the node, and
// how a stopping node lets the slices on their way finish. How a slice is sent, and what a target
// in doubt becomes, is each runner's own.

/** The run stopped because this node no longer holds the sender's partition: its next owner runs the chunk. */
export class PartitionGone extends Data.TaggedError("PartitionGone")<{ readonly message: string }> {}

/** How long a stopping node waits for its slices on their way. */
const STOP_SLICES_WITHIN_MS = 2_000

/**
 * What a slice's send came to is written however long the database takes to take it (a pool with
 * no free connection for seconds, a lost connection): given up on, the chunk would start again
 * and find its sent targets claimed with no outcome, in doubt. A statement the database refuses
 * is not tried again here.
 */
export const untilWritten = Schedule.exponential(Duration.millis(100), 2).pipe(
  Schedule.either(Schedule.spaced(Duration.seconds(2))),
  Schedule.whileInput((e: SqlError) => !refused(e))
)

/**
 * The background runs of one runner on this node. A stopping node (SIGTERM) lets the slices on
 * their way finish and write their outcomes, and gives each run's claim back at its slice's end,
 * before its runs are interrupted: a run cut off mid-slice left its sent targets claimed with no
 * outcome, in doubt. The finalizer is registered after the FiberSet, so it runs before the set
 * interrupts what is left (runs waiting on a report window or a backoff). `what` names the runs in
 * logs ("broadcast", "campaign").
 */
export const makeChunkRuns = (what: string, options: { readonly gatewayTimeoutMs: number }): Effect.Effect<ChunkRunsOf, never, Scope.Scope> =>
  Effect.gen(function*() {
    const fibers = yield* FiberSet.make()
    const running = new Set<string>()
    let stopping = false
    let busy = 0
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        stopping = true
        if (busy === 0) return Effect.void
        const started = Date.now()
        return Effect.suspend(() => (busy === 0 ? Effect.void : Effect.fail("busy" as const))).pipe(
          Effect.retry(Schedule.spaced(Duration.millis(20))),
          // A slice is half a second of a paced sender's throughput; at most 2 s of the node's 10 s
          // to exit, so the partitions' hand-off (up to 5 s of draining) still fits after it.
          Effect.timeout(Duration.millis(Math.min(options.gatewayTimeoutMs + 1_000, STOP_SLICES_WITHIN_MS))),
          Effect.zipRight(Effect.suspend(() => Effect.logInfo(`${what} slices on their way finished`, { ms: Date.now() - started }))),
          Effect.catchAll(() => Effect.logWarning(`${what} slices still on their way at the stop; their targets are left in doubt`, { slices: busy }))
        )
      })
    )

    const busyWhile = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.acquireUseRelease(Effect.sync(() => busy++), () => effect, () => Effect.sync(() => busy--))

    const start = <R>(order: ChunkOrder, run: Effect.Effect<void, unknown, R>, finished: Effect.Effect<void>, moved: Effect.Effect<void>) =>
      Effect.gen(function*() {
        const key = chunkKey(order)
        running.add(key)
        yield* FiberSet.run(
          fibers,
          run.pipe(
            // A read that dies (a cache's query while the database is away) is tried again too.
            Effect.catchAllDefect((defect) => Effect.fail(defect)),
            Effect.tapErrorCause((cause) =>
              Cause.failureOption(cause).pipe(Option.exists((e) => e instanceof PartitionGone))
                ? Effect.void
                : Effect.logWarning(`${what} chunk failed; trying again`, { broadcast_id: order.broadcastId, chunk: order.chunkNo, cause })
            ),
            Effect.retry({
              schedule: Schedule.exponential(Duration.millis(200)).pipe(Schedule.union(Schedule.spaced(Duration.seconds(5)))),
              while: (e) => !(e instanceof PartitionGone)
            }),
            Effect.matchEffect({
              onSuccess: () => finished,
              // Stopped by this node's stop, the partition is still this node's until it is handed
              // off: told now, the move would come back here. The sender's sweep runs it on the next owner.
              onFailure: () => {
                const stopped = (why: string) => Effect.logInfo(`${what} chunk stopped: ${why}`, { broadcast_id: order.broadcastId, chunk: order.chunkNo })
                return stopping
                  ? stopped("this node is stopping; its sender's next owner runs the rest")
                  : Effect.zipRight(stopped("the sender's partition left this node; its next owner runs the rest"), moved)
              }
            }),
            Effect.ensuring(Effect.sync(() => running.delete(key)))
          )
        )
      })

    return {
      stopping: () => stopping,
      /** Whether this node runs the chunk now, or is stopping (the sender's sweep then runs it on the next owner). */
      skip: (order: ChunkOrder) => stopping || running.has(chunkKey(order)),
      isRunning: (order: { readonly broadcastId: string; readonly chunkNo: number }) => running.has(chunkKey(order)),
      busyWhile,
      start
    }
  })

export interface ChunkRunsOf {
  readonly stopping: () => boolean
  readonly skip: (order: ChunkOrder) => boolean
  readonly isRunning: (order: { readonly broadcastId: string; readonly chunkNo: number }) => boolean
  readonly busyWhile: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Runs `run` in the background, tried again until it ends; `finished` once it succeeds, `moved` when it stopped because the partition left. */
  readonly start: <R>(order: ChunkOrder, run: Effect.Effect<void, unknown, R>, finished: Effect.Effect<void>, moved: Effect.Effect<void>) => Effect.Effect<void, never, R>
}
