import type { SqlError } from "@effect/sql/SqlError"
import { type Cause, Effect, Metric, Queue } from "effect"
import { type Applied, type Entry, streamEntry } from "./applied.ts"
import { applyOne } from "./applyCommand.ts"
import { commitApplied } from "./commitApplied.ts"
import { applyingFrom, startHolding } from "./holds.ts"
import type { PartitionState } from "./partitionState.ts"
import { residentsFor } from "./residents.ts"
import { startRetrying } from "./retryingActor.ts"
import { cannotStore, refusal } from "./sqlRefusal.ts"

// One fiber per partition applies commands in batches: whatever arrived since the last batch,
// grouped by actor; the states of actors not in memory are read in one query; each actor's
// commands are applied in order, one actor after another (partitions apply concurrently, as
// many at once as the node's permits allow);
// everything is committed in one transaction before anything is acknowledged. An actor whose
// command fails leaves the batches: its remaining commands, and those arriving meanwhile, go to
// a fiber of its own that retries the command with backoff from the committed state (the
// others do not wait for it), parks it after its last try, and hands the actor back when its
// mailbox is empty. States stay in memory until idle for the kind's passivation time.

/** Commands applied in one batch of a partition at most. */
const MAX_BATCH = 1_000

interface GroupResult {
  readonly into: Applied
  readonly failure: Cause.Cause<unknown> | undefined
  /** The failed command and those after it, or the commands left waiting behind a new hold. */
  readonly rest: ReadonlyArray<Entry>
}

/** Waits for commands, then applies and commits one batch of them. */
export const processBatch = (p: PartitionState) =>
  Effect.gen(function*() {
    // Commands that waited behind a hold whose continuation has been committed come first.
    const resumed = p.resumed.splice(0)
    const first = resumed.length > 0 ? [] : [yield* Queue.take(p.inbox)]
    const arrivedAt = Date.now()
    const groups = groupByActor(p, [...resumed, ...first, ...(yield* Queue.takeUpTo(p.inbox, Math.max(1, MAX_BATCH - resumed.length - 1)))])
    if (groups.size === 0) return
    yield* residentsFor(p, groups.keys())
    // One actor after another: a fiber per actor cost more than most behaviours do (a behaviour
    // that waits on I/O holds up its partition's batch, not the node's other partitions).
    const results = yield* p.env.permits.withPermit(Effect.forEach(groups, ([key, entries]) => applyGroup(p, key, entries)))
    const finished = results.filter((g) => g.into.hold === undefined)
    const rejected = yield* commitApplied(p, finished.map((g) => g.into), arrivedAt)
    const now = Date.now()
    for (const result of results) afterCommit(p, result, groups, rejected, now)
    yield* Metric.set(p.metrics.active, p.residents.size)
  })

/**
 * The batch's entries by actor, in arrival order. Entries of a retrying actor go to its mailbox,
 * stream commands of a held actor wait behind its hold; a held actor's continuation is a group of
 * its own, and the commands that waited are applied in a later batch, once what the continuation
 * wrote is committed: a behaviour that reads the database must see it (a flush applied on top of
 * an uncommitted continuation would read as unsent what the continuation had just settled).
 */
const groupByActor = (p: PartitionState, entries: Iterable<Entry>) => {
  const groups = new Map<string, Array<Entry>>()
  for (const entry of entries) {
    const { key } = entry
    const mailbox = p.retrying.get(key)
    const held = p.holding.get(key)
    if (mailbox !== undefined) mailbox.push(entry)
    else if (entry._tag === "local") {
      // Only the continuation of the current hold applies; a late one (the hold expired and
      // its commands were applied again) is dropped.
      if (held === undefined || held.into.hold?.id !== entry.holdId || p.continuing.has(key)) continue
      p.continuing.add(key)
      groups.set(key, [entry])
    } else if (held !== undefined) held.waiting.push(entry.message)
    else if (groups.has(key)) groups.get(key)!.push(entry)
    else groups.set(key, [entry])
  }
  return groups
}

/** Applies an actor's commands in order until one fails or holds. */
const applyGroup = (p: PartitionState, key: string, entries: ReadonlyArray<Entry>) =>
  Effect.gen(function*() {
    const into = applyingFrom(p, key, p.residents.get(key)!)
    for (let i = 0; i < entries.length; i++) {
      const failure = yield* applyOne(p, into, entries[i]!, 1)
      if (failure !== undefined) {
        yield* Metric.increment(p.metrics.failed)
        return { into, failure, rest: entries.slice(i) } satisfies GroupResult
      }
      if (into.hold !== undefined) return { into, failure: undefined, rest: entries.slice(i + 1) } satisfies GroupResult
    }
    return { into, failure: undefined, rest: [] } satisfies GroupResult
  })

/** What became of one actor of the batch: it moves on, holds, or retries in a fiber of its own. */
const afterCommit = (
  p: PartitionState,
  { failure, into, rest }: GroupResult,
  groups: Map<string, Array<Entry>>,
  rejected: Map<Applied, SqlError>,
  now: number
) => {
  const { key } = into
  const r = p.residents.get(key)!
  p.continuing.delete(key)
  if (into.hold !== undefined) {
    // Its continuation failed (the hold stands, the continuation is retried) or it holds anew.
    if (failure !== undefined) startRetrying(p, key, r, rest, failure)
    else startHolding(p, into, rest)
    return
  }
  const refusedBy = rejected.get(into)
  if (refusedBy !== undefined) {
    // Nothing of it was committed: its actor retries its commands from what it held, or else
    // from its last state. A write that cannot be stored is the one command's, parked at
    // once; of several commands, each is applied again alone to find the one.
    const entries = groups.get(key)!
    const permanent = cannotStore(refusedBy)
    if (permanent && entries.length > 1) startRetrying(p, key, r, entries, undefined)
    else startRetrying(p, key, r, entries, refusal(refusedBy), permanent)
    return
  }
  const held = p.holding.get(key)
  p.holding.delete(key)
  if (held !== undefined && held.waiting.length > 0) p.resumed.push(...held.waiting.splice(0).map(streamEntry))
  r.state = into.state
  r.seq = into.applied
  r.idleSince = now
  r.busy = false
  if (failure !== undefined) startRetrying(p, key, r, rest, failure)
}
