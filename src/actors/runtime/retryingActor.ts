import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Duration, Effect, Metric } from "effect"
import type { Entry, Resident } from "./applied.ts"
import { applyOne } from "./applyCommand.ts"
import { commitApplied } from "./commitApplied.ts"
import { applyingFrom, released, startHolding } from "./holds.ts"
import { firstLine, park } from "./park.ts"
import { crashed, type Held, type PartitionState } from "./partitionState.ts"
import { loadStates } from "./residents.ts"
import { cannotStore, refusal } from "./sqlRefusal.ts"

const retryBackoff = (attempt: number) => Duration.millis(Math.min(5_000, 50 * 2 ** attempt))

/**
 * An actor whose command failed (or, with no failure given, one of whose commands did): a fiber
 * of its own takes over until its mailbox is empty.
 */
export const startRetrying = (
  p: PartitionState,
  key: string,
  r: Resident,
  rest: ReadonlyArray<Entry>,
  failure: Cause.Cause<unknown> | undefined,
  permanent = false
) => {
  const mailbox = [...rest]
  p.retrying.set(key, mailbox)
  r.busy = true
  // The kind's services are provided once per fiber, not per command.
  p.runRetrying(key, Effect.provide(Effect.catchAllCause(retryLoop(p, key, r, mailbox, failure, permanent), crashed(p, `actor ${key}`)), p.registered.services))
}

/**
 * Takes the actor's commands in order. `firstFailure` is the failure of the first try of the
 * command at the head of the mailbox, if known, and `firstPermanent` whether it was a write that
 * cannot be stored (parked without another try).
 */
const retryLoop = (p: PartitionState, key: string, r: Resident, mailbox: Array<Entry>, firstFailure: Cause.Cause<unknown> | undefined, firstPermanent: boolean) =>
  Effect.gen(function*() {
    let failure = firstFailure
    let permanent = firstPermanent
    for (;;) {
      const entry = yield* Effect.sync(() => nextOrHandBack(p, key, r, mailbox))
      if (entry === undefined) return
      const held = p.holding.get(key)
      // A continuation of a hold that has ended is dropped.
      const stale = entry._tag === "local" && held?.into.hold?.id !== entry.holdId
      if (entry._tag === "stream" && held !== undefined) {
        // Behind a hold: waits for the continuation like any other.
        held.waiting.push(entry.message)
      } else if (!stale) yield* retryEntry(p, key, r, mailbox, entry, held, failure, permanent)
      failure = undefined
      permanent = false
    }
  })

// Routing is synchronous: nothing can be queued between this check and the hand-back.
const nextOrHandBack = (p: PartitionState, key: string, r: Resident, mailbox: Array<Entry>) => {
  const next = mailbox.shift()
  if (next === undefined) {
    p.retrying.delete(key)
    r.busy = p.holding.has(key)
    r.idleSince = Date.now()
  }
  return next
}

/** Tries one command with backoff until it is committed, holds, or is parked. */
const retryEntry = (
  p: PartitionState,
  key: string,
  r: Resident,
  mailbox: Array<Entry>,
  entry: Entry,
  held: Held | undefined,
  firstFailure: Cause.Cause<unknown> | undefined,
  firstPermanent: boolean
) =>
  Effect.gen(function*() {
    let failure = firstFailure
    let permanent = firstPermanent
    for (let attempt = 1;; attempt++) {
      if (failure === undefined) {
        const tried = yield* tryOnce(p, key, r, mailbox, entry, held, attempt)
        if (tried === "done") return
        failure = tried.failure
        if (tried.refusedBy !== undefined) permanent = cannotStore(tried.refusedBy)
        yield* Metric.increment(p.metrics.failed)
      }
      if (attempt >= p.registered.maxAttempts || permanent) return yield* parkEntry(p, key, r, mailbox, entry, held, attempt, failure, permanent)
      yield* Effect.logDebug("actor command failed; retrying", { kind: p.kind.name, key, seq: entry._tag === "stream" ? entry.message.seq : r.seq, attempt, error: firstLine(Cause.pretty(failure)) })
      if (Cause.isDie(failure) && held === undefined) {
        // A defect: the actor restarts from its persisted state.
        const reloaded = (yield* loadStates(p, [key])).get(key)!
        r.state = reloaded.state
        r.seq = reloaded.seq
      }
      if (entry._tag === "stream") entry.message.working()
      yield* Effect.sleep(retryBackoff(attempt))
      failure = undefined
    }
  })

type Tried = "done" | { readonly failure: Cause.Cause<unknown>; readonly refusedBy: SqlError | undefined }

/** One try from the committed state (or what is held): done once committed or holding anew. */
const tryOnce = (p: PartitionState, key: string, r: Resident, mailbox: Array<Entry>, entry: Entry, held: Held | undefined, attempt: number): Effect.Effect<Tried, never, any> =>
  Effect.gen(function*() {
    const into = applyingFrom(p, key, r)
    const failure = yield* applyOne(p, into, entry, attempt)
    if (failure !== undefined) return { failure, refusedBy: undefined }
    if (into.hold !== undefined) {
      // Holds (anew): it waits in memory, its later commands queue behind the hold.
      yield* Effect.sync(() => startHolding(p, into, mailbox.splice(0)))
      return "done" as const
    }
    const refusedBy = (yield* commitApplied(p, [into], Date.now())).get(into)
    if (refusedBy === undefined) {
      released(p, key, held, mailbox)
      r.state = into.state
      r.seq = into.applied
      return "done" as const
    }
    return { failure: refusal(refusedBy), refusedBy }
  })

/** The command's last try failed, or its write cannot be stored: parked, and the actor moves on. */
const parkEntry = (
  p: PartitionState,
  key: string,
  r: Resident,
  mailbox: Array<Entry>,
  entry: Entry,
  held: Held | undefined,
  attempt: number,
  failure: Cause.Cause<unknown>,
  permanent: boolean
) =>
  Effect.gen(function*() {
    const into = applyingFrom(p, key, r)
    yield* park(p, into, entry, attempt, failure, permanent ? "at once: its write cannot be stored" : "after its last try")
    // A poison row and the sequence only (with what was held): nothing to refuse.
    yield* commitApplied(p, [into], Date.now())
    released(p, key, held, mailbox)
    r.state = into.state
    r.seq = into.applied
  })
