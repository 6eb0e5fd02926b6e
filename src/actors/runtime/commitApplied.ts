import type { SqlError } from "@effect/sql/SqlError"
import { Context, Deferred, Duration, Effect, Exit, Metric, Option, Schedule } from "effect"
import type { Applied } from "./applied.ts"
import type { FencedOut, StateWrite } from "./committer.ts"
import type { PartitionState } from "./partitionState.ts"
import type { StreamCommand } from "./streamCommand.ts"
import { refused } from "./sqlRefusal.ts"

/** Commit retries while the database is unreachable: capped backoff, forever (the fence still holds). */
const commitRetry = Schedule.exponential(Duration.millis(100), 2).pipe(
  Schedule.either(Schedule.spaced(Duration.seconds(2))),
  Schedule.whileInput((e: FencedOut | SqlError) => e._tag === "SqlError" && !refused(e))
)

/**
 * Writes what was applied, all in one transaction, then acknowledges and answers. When the
 * database refuses a statement (a constraint, a type), each actor's write is tried alone: the
 * ones refused are returned, neither committed nor acknowledged, for their actors to retry.
 */
export const commitApplied = (p: PartitionState, batch: ReadonlyArray<Applied>, arrivedAt: number) =>
  Effect.gen(function*() {
    const writeOf = writesOf(p, batch)
    const tracing = batch.some((a) => a.traced.length > 0)
    const clock = yield* Effect.clock
    const commitStart = tracing ? clock.unsafeCurrentTimeNanos() : 0n
    const rejected = yield* commitOrSingleOut(p, writeOf, batch)
    const committed = batch.filter((a) => !rejected.has(a))
    if (tracing) yield* endTraced(p, batch, rejected, commitStart, clock.unsafeCurrentTimeNanos())
    yield* scheduleCommitted(p, writeOf, committed)
    const acks = committed.flatMap((a) => a.acks)
    // One observation per batch, for its oldest command: per-command updates cost more than
    // the rest of the bookkeeping together.
    if (acks.length > 0) yield* Metric.update(p.metrics.latency, (Date.now() - arrivedAt) / 1000)
    yield* settle(p, acks)
    yield* Metric.incrementBy(p.metrics.processed, acks.length)
    for (const a of committed) for (const reply of a.replies) yield* reply()
    return rejected
  })

/**
 * The spans of traced commands end with their commit, each with a child for the transaction (the
 * batch's one, shared: its span in every trace it carried a command of).
 */
const endTraced = (p: PartitionState, batch: ReadonlyArray<Applied>, rejected: Map<Applied, SqlError>, start: bigint, end: bigint) =>
  Effect.map(Effect.tracer, (tracer) => {
    for (const a of batch) {
      const exit = rejected.has(a) ? Exit.fail(rejected.get(a)) : Exit.void
      for (const span of a.traced.splice(0)) {
        const commit = tracer.span(`commit ${p.kind.name}`, Option.some(span), Context.empty(), [], start, "internal", {})
        commit.attribute("db.system.name", "postgresql")
        commit.attribute("db.operation.name", "COMMIT")
        commit.attribute("herald.commit.actors", batch.length)
        commit.end(end, exit)
        span.end(end, exit)
      }
    }
  })

/** The writes that change anything, each with its state encoded once, at commit. */
const writesOf = (p: PartitionState, batch: ReadonlyArray<Applied>) => {
  const writeOf = new Map<Applied, StateWrite>()
  for (const a of batch) {
    const w = a.write
    if (w.state !== undefined || w.poison.length > 0 || w.timersRemove.length > 0) {
      w.state = p.encodeState(a.state)
      writeOf.set(a, w)
    }
  }
  return writeOf
}

/** Commits the writes together; if that is refused, each alone, returning the ones refused. */
const commitOrSingleOut = (p: PartitionState, writeOf: Map<Applied, StateWrite>, batch: ReadonlyArray<Applied>) =>
  Effect.gen(function*() {
    const rejected = new Map<Applied, SqlError>()
    const together = yield* Effect.either(durably(p, [...writeOf.values()], batch.flatMap((a) => a.acks)))
    if (together._tag === "Left") {
      for (const [a, w] of writeOf) {
        const alone = yield* Effect.either(durably(p, [w], a.acks))
        if (alone._tag === "Left") rejected.set(a, alone.left)
      }
    }
    return rejected
  })

/** Waits until the writes are durable; retries while the database is unreachable. */
const durably = (p: PartitionState, writes: ReadonlyArray<StateWrite>, acks: ReadonlyArray<StreamCommand>) =>
  p.committer.commit(p.fence, writes).pipe(
    Effect.tapError((e) => (e._tag === "SqlError" && !refused(e) ? Effect.sync(() => acks.forEach((m) => m.working())) : Effect.void)),
    Effect.retry(commitRetry),
    Effect.catchTag("FencedOut", (e) => Effect.zipRight(Deferred.succeed(p.lost, e.message), Effect.interrupt))
  )

/** The committed timer changes take effect in memory; the relay is woken for new outbox rows. */
const scheduleCommitted = (p: PartitionState, writeOf: Map<Applied, StateWrite>, committed: ReadonlyArray<Applied>) =>
  Effect.gen(function*() {
    let outbox = false
    for (const a of committed) {
      const w = writeOf.get(a)
      if (w === undefined) continue
      for (const t of w.timersRemove) yield* p.timers.cancel(t)
      for (const t of w.timersAdd) yield* p.timers.schedule(t.timerId, { key: w.key, fireAt: t.fireAt, command: t.command, traceparent: t.traceparent, fired: false })
      // A `persist` write may enqueue outbox rows of its own (events fanned out to webhooks).
      outbox ||= w.outbox.length > 0 || w.persist.length > 0
    }
    if (outbox) yield* p.env.nudgeRelay
  })

/** Acknowledges commands whose effects are durable. */
const settle = (p: PartitionState, messages: ReadonlyArray<StreamCommand>) =>
  Effect.sync(() => {
    for (const m of messages) m.ack()
    p.inflight -= messages.length
  }).pipe(Effect.zipRight(Metric.set(p.metrics.depth, p.inflight)))
