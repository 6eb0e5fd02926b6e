import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import {
  Cause,
  type Context,
  Deferred,
  Duration,
  Effect,
  Either,
  Exit,
  FiberMap,
  Metric,
  Queue,
  Schedule,
  Schema
} from "effect"
import { headers as natsHeaders, type JsMsg } from "nats"
import type { BusNamesShape } from "../../bus/BusNames.ts"
import type { Connected } from "../../bus/Nats.ts"
import type { ActorContext, ActorKind } from "./ActorKind.ts"
import { encoderOf, type ReplyWire } from "./ActorClient.ts"
import { type FairPermits } from "./fairPermits.ts"
import { emptyWrite, type FencedOut, type KindCommitter, type StateWrite } from "./committer.ts"
import { labelled } from "../../observability/labelled.ts"
import * as M from "./metrics.ts"
import { partitionOf } from "./partitioning.ts"
import { makeTimerHeap } from "./timerHeap.ts"
import { commandSubject, consumerName, consumerSpec, decodeJson, type EphemeralReply, ephemeralSubject, encodeJson, Header, keyOfSubject } from "./transport.ts"

/** A registered kind: the declaration plus the services its behaviour runs with. */
export interface RegisteredKind {
  readonly kind: ActorKind.Any
  readonly services: Context.Context<any>
  readonly maxAttempts: number
  readonly passivateAfter: Duration.Duration
}

/** What every owned partition of a node shares. */
export interface PartitionEnv {
  readonly sql: SqlClient.SqlClient
  readonly bus: Connected
  readonly names: BusNamesShape
  readonly partitions: number
  /** Bounds how many partitions of this node apply a batch at once. */
  readonly permits: FairPermits
  /** Wakes the outbox relay after a commit wrote outbox rows. */
  readonly nudgeRelay: Effect.Effect<void>
  /** Makes sure a kind's stream exists before the outbox relay publishes to it. */
  readonly ensureKind: (kind: ActorKind.Any) => Effect.Effect<void, unknown>
  readonly maxAckPending: number
  /** The node's group committer for a kind, shared by its owned partitions. */
  readonly committerOf: (kind: ActorKind.Any) => Effect.Effect<KindCommitter>
}

export interface OwnedPartition {
  readonly kind: string
  readonly partition: number
  readonly epoch: number
  /** Completes when the partition must be dropped at once (fenced out, consumer lost). */
  readonly lost: Deferred.Deferred<string>
  /** Stops fetching and waits (bounded) until every command received was acknowledged. */
  readonly drain: (deadline: Duration.DurationInput) => Effect.Effect<void>
}

/** How far ahead timers are loaded into memory; later ones are picked up by the periodic reload. */
const TIMER_HORIZON = Duration.minutes(5)
const TIMER_RELOAD = Duration.seconds(30)
/** Commands applied in one batch of a partition at most. */
const MAX_BATCH = 1_000

const retryBackoff = (attempt: number) => Duration.millis(Math.min(5_000, 50 * 2 ** attempt))

/**
 * Whether the database refused a statement (SQLSTATE classes 22 data, 23 integrity, 42 syntax or
 * undefined object, ...) rather than being unreachable or busy (08 connection, 40 rollback, 53
 * resources, 57 operator intervention, or no code at all): retrying the same write cannot help.
 */
const refused = (error: SqlError): boolean => {
  const code = (error.cause as { code?: unknown } | undefined)?.code
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && !/^(08|40|53|57|58|XX)/.test(code)
}

/**
 * Whether the database refused a write for the values in it (SQLSTATE class 22, data exception: a
 * NUL in text, an unpaired surrogate in jsonb, a number out of range; class 54, a value past a
 * limit such as an index row's size). Applying the command again writes the same values: it is
 * parked at once, before its side effects run a second time.
 */
const cannotStore = (error: SqlError): boolean => {
  const code = (error.cause as { code?: unknown } | undefined)?.code
  return typeof code === "string" && /^(22|54)/.test(code)
}

/** The failure a refused write counts as, with what the database said (kept with a parked command). */
const refusal = (error: SqlError) =>
  Cause.fail(`the database refused the write: ${(error.cause as { message?: string } | undefined)?.message ?? error.message}`)

/** Commit retries while the database is unreachable: capped backoff, forever (the fence still holds). */
const commitRetry = Schedule.exponential(Duration.millis(100), 2).pipe(
  Schedule.either(Schedule.spaced(Duration.seconds(2))),
  Schedule.whileInput((e: FencedOut | SqlError) => e._tag === "SqlError" && !refused(e))
)

/** An actor in memory: its state as last committed (or being committed). */
interface Resident {
  state: unknown
  seq: number
  idleSince: number
  /** Its commands are being applied, committed or retried: not to be passivated. */
  busy: boolean
}

/**
 * What the partition applies: a command from the stream, or the continuation of a held command,
 * handed over in memory (ActorContext.hold) and valid only for the hold it was made for.
 */
type Entry =
  | { readonly _tag: "stream"; readonly key: string; readonly message: JsMsg }
  | { readonly _tag: "local"; readonly key: string; readonly command: unknown; readonly holdId: number }

/** How often held commands are told to JetStream to be still in progress (well inside ACK_WAIT). */
const HOLD_HEARTBEAT = Duration.seconds(10)

interface TimerEntry {
  readonly key: string
  readonly fireAt: Date
  readonly command: unknown
  /** Its command was published; the entry stays until the command is applied. */
  fired: boolean
}

/**
 * Runs one owned (kind, partition) until its scope closes: the durable consumer, the fiber applying
 * its commands in batches, the group committer, and the partition's durable timers.
 */
export const startPartition = (env: PartitionEnv, registered: RegisteredKind, partition: number, epoch: number) =>
  Effect.gen(function*() {
    const { kind } = registered
    const { sql, bus, names } = env
    const lost = yield* Deferred.make<string>()
    const committer = yield* env.committerOf(kind)
    const fence = { partition, epoch }
    const retryFibers = yield* FiberMap.make<string>()
    const runRetrying = yield* FiberMap.runtime(retryFibers)<never>()
    // Timers due within the horizon: one heap and one fiber per partition, however many timers.
    const timers = new Map<string, TimerEntry>()
    const timerHeap = makeTimerHeap()
    const timerWake = yield* Queue.sliding<void>(1)
    let inflight = 0
    const byPartition = { kind: kind.name, partition: String(partition) }
    const depth = labelled(M.mailboxDepth, byPartition)
    const active = labelled(M.activeActors, byPartition)
    const processed = labelled(M.commandsProcessed, { kind: kind.name })
    const failed = labelled(M.commandsFailed, { kind: kind.name })
    const parked = labelled(M.commandsParked, { kind: kind.name })
    const latency = labelled(M.processingSeconds, { kind: kind.name })
    const lateness = labelled(M.timerLatenessSeconds, { kind: kind.name })
    // Synchronous: kinds' schemas have no asynchronous parts, and an Effect per command and per
    // state write costs more than the decoding itself.
    const decodeCommand = Schema.decodeUnknownEither(kind.command)
    const encodeCommand = Schema.encode(kind.command)
    const decodeState = Schema.decodeUnknown(kind.state)
    const encodeState = Schema.encodeSync(kind.state)

    const settle = (messages: ReadonlyArray<JsMsg>) =>
      Effect.sync(() => {
        for (const m of messages) m.ack()
        inflight -= messages.length
      }).pipe(Effect.zipRight(Metric.set(depth, inflight)))

    // --- timers ----------------------------------------------------------------------------

    const fireTimer = (timerId: string, entry: TimerEntry) =>
      Effect.suspend(() => {
        const h = natsHeaders()
        h.set(Header.timer, timerId)
        return Effect.tryPromise(() =>
          bus.js.publish(commandSubject(names, kind.name, partition, entry.key), encodeJson(entry.command), {
            msgID: `${timerId}@${entry.fireAt.getTime()}`,
            headers: h
          })
        ).pipe(Effect.retry(Schedule.spaced(Duration.millis(200))))
      })

    // A heap entry is live while its timer is still scheduled for that time and not yet fired.
    const liveEntry = (top: { at: number; id: string }) => {
      const entry = timers.get(top.id)
      return entry !== undefined && !entry.fired && entry.fireAt.getTime() === top.at ? entry : undefined
    }

    /** Publishes every due timer's command, then sleeps until the next one is due (or a nudge). */
    const timerLoop = Effect.gen(function*() {
      for (;;) {
        const due: Array<[string, TimerEntry]> = []
        const now = Date.now()
        for (let top = timerHeap.peek(); top !== undefined && (top.at <= now || liveEntry(top) === undefined); top = timerHeap.peek()) {
          timerHeap.pop()
          const entry = liveEntry(top)
          if (entry === undefined) continue
          entry.fired = true
          due.push([top.id, entry])
        }
        yield* Effect.forEach(due, ([id, entry]) => fireTimer(id, entry), { concurrency: 64, discard: true })
        const next = timerHeap.peek()
        const wait = next === undefined ? Duration.toMillis(TIMER_RELOAD) : Math.max(0, next.at - Date.now())
        if (wait > 0) yield* Queue.take(timerWake).pipe(Effect.timeoutOption(Duration.millis(wait)))
      }
    })

    const scheduleTimer = (timerId: string, entry: TimerEntry) =>
      Effect.suspend(() => {
        timers.set(timerId, entry)
        if (entry.fireAt.getTime() - Date.now() > Duration.toMillis(TIMER_HORIZON)) return Effect.void
        const earliest = timerHeap.peek()
        timerHeap.push({ at: entry.fireAt.getTime(), id: timerId })
        return earliest === undefined || entry.fireAt.getTime() < earliest.at ? Queue.offer(timerWake, undefined) : Effect.void
      })

    const cancelTimer = (timerId: string) => Effect.sync(() => timers.delete(timerId))

    const loadTimers = Effect.gen(function*() {
      const rows = yield* sql<{ timerId: string; actorKey: string; fireAt: Date; command: unknown }>`
        SELECT timer_id, actor_key, fire_at, command FROM actor_timers
        WHERE kind = ${kind.name} AND partition = ${partition} AND fire_at < now() + ${`${Duration.toSeconds(TIMER_HORIZON)} seconds`}::interval`
      for (const row of rows) {
        if (!timers.has(row.timerId)) {
          yield* scheduleTimer(row.timerId, { key: row.actorKey, fireAt: new Date(row.fireAt), command: row.command, fired: false })
        }
      }
    })

    // --- applying commands ---------------------------------------------------------------------

    /**
     * Persisted states of actors, in one query however many (a burst of new keys is one round
     * trip); an actor that never committed starts from the kind's initial state.
     */
    const loadStates = (keys: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ actorKey: string; state: unknown; lastSeq: string }>`
          SELECT actor_key, state, last_seq FROM ${sql(kind.table)} WHERE actor_key = ANY(${keys}::text[])`
        const found = new Map(rows.map((row) => [row.actorKey, row]))
        const loaded = new Map<string, { state: unknown; seq: number }>()
        for (const key of keys) {
          const row = found.get(key)
          loaded.set(key, row === undefined ? { state: kind.initial(key), seq: 0 } : { state: yield* Effect.orDie(decodeState(row.state)), seq: Number(row.lastSeq) })
        }
        return loaded
      }).pipe(Effect.orDie)

    /** What one actor's commands applied so far, to be committed together. */
    interface Applied {
      readonly key: string
      state: unknown
      applied: number
      readonly write: StateWrite
      readonly acks: Array<JsMsg>
      readonly replies: Array<() => Effect.Effect<void>>
      /** Set while the last command applied holds: nothing of this is written until its continuation. */
      hold: { readonly id: number; readonly deadline: number } | undefined
      /** Continuations applied on top of the last stream command, naming their effects apart. */
      continuations: number
    }

    const startApplied = (key: string, from: Resident): Applied => ({
      key,
      state: from.state,
      applied: from.seq,
      write: emptyWrite(key, from.seq),
      acks: [],
      replies: [],
      hold: undefined,
      continuations: 0
    })

    /**
     * Actors holding a command (ActorContext.hold): what they applied, not yet written, and the
     * stream commands that arrived meanwhile, applied once the continuation has been.
     */
    const holding = new Map<string, { readonly into: Applied; readonly waiting: Array<JsMsg>; beatAt: number }>()
    let nextHoldId = 0
    let closed = false
    yield* Effect.addFinalizer(() => Effect.sync(() => (closed = true)))

    /**
     * A copy of what an actor holds, for its continuation to be applied on: the original stays as
     * it was until the continuation's outcome is written, in case the continuation fails or its
     * write is refused.
     */
    const copyOf = (held: Applied): Applied => ({
      ...held,
      write: {
        ...held.write,
        outbox: [...held.write.outbox],
        timersAdd: [...held.write.timersAdd],
        timersRemove: [...held.write.timersRemove],
        poison: [...held.write.poison],
        inserts: [...held.write.inserts],
        persist: [...held.write.persist]
      },
      acks: [...held.acks],
      replies: [...held.replies]
    })

    /** Where an actor's next command is applied: on a copy of what it holds, or on its state. */
    const applyingFrom = (key: string, r: Resident): Applied => {
      const held = holding.get(key)
      return held === undefined ? startApplied(key, r) : copyOf(held.into)
    }

    /** Runs the behaviour on top of `into`; on success `into` takes its state and whether it holds. */
    const runBehaviour = (into: Applied, command: unknown, effects: ReturnType<typeof recordEffects>) =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(registered.kind.behaviour(into.state, command, effects.context))
        if (Exit.isFailure(exit)) return exit.cause
        into.state = exit.value
        into.write.state = exit.value
        into.hold = effects.hold
        return undefined
      })

    /**
     * Applies one command on top of `into`. Commands applied before, fires of cancelled timers and
     * undecodable commands (parked at once) are settled here; a failing behaviour returns its cause
     * and leaves `into` as it was. Needs the kind's services (`any`: a kind of any type), provided
     * once per fiber.
     */
    const applyOne = (into: Applied, entry: Entry, attempt: number): Effect.Effect<Cause.Cause<unknown> | undefined, never, any> =>
      entry._tag === "local" ? applyContinuation(into, entry, attempt) : applyStreamed(into, entry.message, attempt)

    const applyStreamed = (into: Applied, message: JsMsg, attempt: number): Effect.Effect<Cause.Cause<unknown> | undefined, never, any> =>
      Effect.gen(function*() {
        const { key } = into
        const seq = message.seq
        if (seq <= into.applied) {
          into.acks.push(message)
          return undefined
        }
        const timerId = message.headers?.get(Header.timer) || undefined
        if (timerId !== undefined && !timers.has(timerId)) {
          // The timer was cancelled or already handled: a fire is a no-op.
          into.acks.push(message)
          return undefined
        }
        const replyTo = message.headers?.get(Header.replyTo) || undefined
        const raw = jsonOf(message.data)
        const decoded = Either.flatMap(raw, (json) => Either.mapLeft(decodeCommand(json), (error) => error.message))
        if (decoded._tag === "Left") {
          const why = decoded.left
          into.write.poison.push({ key, seq, command: Either.getOrUndefined(raw), raw: message.data, error: `undecodable command: ${why}`, attempts: 0 })
          into.write.lastSeq = into.applied = seq
          into.acks.push(message)
          if (replyTo) into.replies.push(() => publishReply(replyTo, { parked: "undecodable command" }))
          yield* Metric.increment(parked)
          return undefined
        }
        const effects = recordEffects(key, seq, `${seq}`, attempt, timerId)
        const failure = yield* runBehaviour(into, decoded.right, effects)
        if (failure !== undefined) return failure
        into.write.lastSeq = into.applied = seq
        into.continuations = 0
        yield* effects.applyTo(into.write)
        if (timerId !== undefined) {
          into.write.timersRemove.push(timerId)
          const due = timers.get(timerId)
          if (due) yield* Metric.update(lateness, Math.max(0, Date.now() - due.fireAt.getTime()) / 1000)
        }
        into.acks.push(message)
        if (replyTo && effects.reply) {
          const answer = effects.reply
          into.replies.push(() => publishReply(replyTo, answer))
        }
        effects.queueNotices(into)
        return undefined
      })

    /** A continuation: applied like a command, but it has no sequence of its own and nothing to acknowledge. */
    const applyContinuation = (into: Applied, entry: Extract<Entry, { _tag: "local" }>, attempt: number) =>
      Effect.gen(function*() {
        const seq = into.applied
        const effects = recordEffects(into.key, seq, `${seq}.c${into.continuations + 1}`, attempt, undefined)
        const failure = yield* runBehaviour(into, entry.command, effects)
        if (failure !== undefined) return failure
        into.continuations++
        yield* effects.applyTo(into.write)
        effects.queueNotices(into)
        return undefined
      })

    /**
     * A command that failed its last try (or whose write cannot be stored) is parked: a poison
     * row, and it counts as done.
     */
    const park = (into: Applied, entry: Entry, attempts: number, cause: Cause.Cause<unknown>, why = "after its last try") =>
      Effect.gen(function*() {
        const error = Cause.pretty(cause)
        if (entry._tag === "local") {
          // A continuation has no sequence of its own: it is parked under its held command's.
          const seq = into.applied
          yield* Effect.logWarning(`actor continuation parked ${why}`, { kind: kind.name, key: into.key, seq, attempts })
          into.write.poison.push({ key: into.key, seq, command: yield* Effect.orDie(encodeCommand(entry.command)), error, attempts })
          into.hold = undefined
          yield* Metric.increment(parked)
          return
        }
        const { message } = entry
        const seq = message.seq
        yield* Effect.logWarning(`actor command parked ${why}`, { kind: kind.name, key: into.key, seq, attempts })
        into.write.poison.push({ key: into.key, seq, command: Either.getOrUndefined(jsonOf(message.data)), raw: message.data, error, attempts })
        const timerId = message.headers?.get(Header.timer) || undefined
        if (timerId !== undefined) into.write.timersRemove.push(timerId)
        into.write.lastSeq = into.applied = seq
        into.hold = undefined
        into.acks.push(message)
        const replyTo = message.headers?.get(Header.replyTo) || undefined
        if (replyTo) into.replies.push(() => publishReply(replyTo, { parked: `command failed ${attempts} times: ${firstLine(error)}` }))
        yield* Metric.increment(parked)
      })

    /** Waits until the writes are durable; retries while the database is unreachable. */
    const durably = (writes: ReadonlyArray<StateWrite>, acks: ReadonlyArray<JsMsg>) =>
      committer.commit(fence, writes).pipe(
        Effect.tapError((e) => (e._tag === "SqlError" && !refused(e) ? Effect.sync(() => acks.forEach((m) => m.working())) : Effect.void)),
        Effect.retry(commitRetry),
        Effect.catchTag("FencedOut", (e) => Effect.zipRight(Deferred.succeed(lost, e.message), Effect.interrupt))
      )

    /**
     * Writes what was applied, all in one transaction, then acknowledges and answers. When the
     * database refuses a statement (a constraint, a type), each actor's write is tried alone: the
     * ones refused are returned, neither committed nor acknowledged, for their actors to retry.
     */
    const commitApplied = (batch: ReadonlyArray<Applied>, arrivedAt: number) =>
      Effect.gen(function*() {
        const writeOf = new Map<Applied, StateWrite>()
        for (const a of batch) {
          const w = a.write
          if (w.state !== undefined || w.poison.length > 0 || w.timersRemove.length > 0) {
            w.state = encodeState(a.state)
            writeOf.set(a, w)
          }
        }
        const rejected = new Map<Applied, SqlError>()
        const together = yield* Effect.either(durably([...writeOf.values()], batch.flatMap((a) => a.acks)))
        if (together._tag === "Left") {
          for (const [a, w] of writeOf) {
            const alone = yield* Effect.either(durably([w], a.acks))
            if (alone._tag === "Left") rejected.set(a, alone.left)
          }
        }
        const committed = batch.filter((a) => !rejected.has(a))
        let outbox = false
        for (const a of committed) {
          const w = writeOf.get(a)
          if (w === undefined) continue
          for (const t of w.timersRemove) yield* cancelTimer(t)
          for (const t of w.timersAdd) yield* scheduleTimer(t.timerId, { key: w.key, fireAt: t.fireAt, command: t.command, fired: false })
          // A `persist` write may enqueue outbox rows of its own (events fanned out to webhooks).
          outbox ||= w.outbox.length > 0 || w.persist.length > 0
        }
        if (outbox) yield* env.nudgeRelay
        const acks = committed.flatMap((a) => a.acks)
        // One observation per batch, for its oldest command: per-command updates cost more than
        // the rest of the bookkeeping together.
        if (acks.length > 0) yield* Metric.update(latency, (Date.now() - arrivedAt) / 1000)
        yield* settle(acks)
        yield* Metric.incrementBy(processed, acks.length)
        for (const a of committed) for (const reply of a.replies) yield* reply()
        return rejected
      })

    // --- the partition's actors ----------------------------------------------------------------
    //
    // One fiber per partition applies commands in batches: whatever arrived since the last batch,
    // grouped by actor; the states of actors not in memory are read in one query; each actor's
    // commands are applied in order, one actor after another (partitions apply concurrently, as
    // many at once as the node's permits allow);
    // everything is committed in one transaction before anything is acknowledged. An actor whose
    // command fails leaves the batches: its remaining commands, and those arriving meanwhile, go to
    // a fiber of its own that retries the command with backoff from the committed state (the
    // others do not wait for it), parks it after its last try, and hands the actor back when its
    // mailbox is empty. States stay in memory until idle for the kind's passivation time.
    //
    // An actor that holds a command (ActorContext.hold) writes and acknowledges nothing until the
    // continuation comes, in memory, and has been applied; its stream commands wait meanwhile. If
    // the node dies first, JetStream gives the held commands to the next owner, which applies them
    // again from the last committed state; if the continuation does not come by the hold's
    // deadline, this node does the same.

    const residents = new Map<string, Resident>()
    const inbox = yield* Queue.unbounded<Entry>()
    /**
     * Actors retrying a failed command in their own fiber, and the commands queued for them (their
     * fiber takes them in order and hands the actor back once none is left).
     */
    const retrying = new Map<string, Array<Entry>>()
    /** Held actors whose continuation is being applied in the current batch (not to be expired). */
    const continuing = new Set<string>()

    const streamEntry = (message: JsMsg): Entry => ({ _tag: "stream", key: keyOfSubject(message.subject), message })

    interface GroupResult {
      readonly into: Applied
      readonly failure: Cause.Cause<unknown> | undefined
      /** The failed command and those after it, or the commands left waiting behind a new hold. */
      readonly rest: ReadonlyArray<Entry>
    }

    const applyGroup = (key: string, entries: ReadonlyArray<Entry>) =>
      Effect.gen(function*() {
        const into = applyingFrom(key, residents.get(key)!)
        for (let i = 0; i < entries.length; i++) {
          const failure = yield* applyOne(into, entries[i]!, 1)
          if (failure !== undefined) {
            yield* Metric.increment(failed)
            return { into, failure, rest: entries.slice(i) } satisfies GroupResult
          }
          if (into.hold !== undefined) return { into, failure: undefined, rest: entries.slice(i + 1) } satisfies GroupResult
        }
        return { into, failure: undefined, rest: [] } satisfies GroupResult
      })

    /** An actor now holding: what it applied stays in memory, its later stream commands wait. */
    const startHolding = (into: Applied, rest: ReadonlyArray<Entry>) => {
      const waiting: Array<JsMsg> = []
      for (const e of rest) if (e._tag === "stream") waiting.push(e.message)
      holding.set(into.key, { into, waiting, beatAt: Date.now() })
    }

    const processBatch = Effect.gen(function*() {
      const first = yield* Queue.take(inbox)
      const arrivedAt = Date.now()
      const groups = new Map<string, Array<Entry>>()
      for (const entry of [first, ...(yield* Queue.takeUpTo(inbox, MAX_BATCH - 1))]) {
        const { key } = entry
        const mailbox = retrying.get(key)
        const held = holding.get(key)
        if (mailbox !== undefined) mailbox.push(entry)
        else if (entry._tag === "local") {
          // Only the continuation of the current hold applies; a late one (the hold expired and
          // its commands were applied again) is dropped.
          if (held === undefined || held.into.hold?.id !== entry.holdId || continuing.has(key)) continue
          continuing.add(key)
          groups.set(key, [entry, ...held.waiting.splice(0).map(streamEntry)])
        } else if (held !== undefined && !continuing.has(key)) held.waiting.push(entry.message)
        else if (groups.has(key)) groups.get(key)!.push(entry)
        else groups.set(key, [entry])
      }
      if (groups.size === 0) return
      const absent: Array<string> = []
      for (const key of groups.keys()) {
        const r = residents.get(key)
        if (r === undefined) absent.push(key)
        else r.busy = true
      }
      if (absent.length > 0) {
        // Loaded for this batch: busy until it is committed.
        for (const [key, loaded] of yield* loadStates(absent)) residents.set(key, { ...loaded, idleSince: Date.now(), busy: true })
      }
      // One actor after another: a fiber per actor cost more than most behaviours do (a behaviour
      // that waits on I/O holds up its partition's batch, not the node's other partitions).
      const results = yield* env.permits.withPermit(Effect.forEach(groups, ([key, entries]) => applyGroup(key, entries)))
      const finished = results.filter((g) => g.into.hold === undefined)
      const rejected = yield* commitApplied(finished.map((g) => g.into), arrivedAt)
      const now = Date.now()
      for (const { failure, into, rest } of results) {
        const { key } = into
        const r = residents.get(key)!
        continuing.delete(key)
        if (into.hold !== undefined) {
          // Its continuation failed (the hold stands, the continuation is retried) or it holds anew.
          if (failure !== undefined) startRetrying(key, r, rest, failure)
          else startHolding(into, rest)
          continue
        }
        const refusedBy = rejected.get(into)
        if (refusedBy !== undefined) {
          // Nothing of it was committed: its actor retries its commands from what it held, or else
          // from its last state. A write that cannot be stored is the one command's, parked at
          // once; of several commands, each is applied again alone to find the one.
          const entries = groups.get(key)!
          const permanent = cannotStore(refusedBy)
          if (permanent && entries.length > 1) startRetrying(key, r, entries, undefined)
          else startRetrying(key, r, entries, refusal(refusedBy), permanent)
          continue
        }
        holding.delete(key)
        r.state = into.state
        r.seq = into.applied
        r.idleSince = now
        r.busy = false
        if (failure !== undefined) startRetrying(key, r, rest, failure)
      }
      yield* Metric.set(active, residents.size)
    })

    /**
     * An actor whose command failed (or, with no failure given, one of whose commands did): a fiber
     * of its own takes over until its mailbox is empty.
     */
    const startRetrying = (key: string, r: Resident, rest: ReadonlyArray<Entry>, failure: Cause.Cause<unknown> | undefined, permanent = false) => {
      const mailbox = [...rest]
      retrying.set(key, mailbox)
      r.busy = true
      // The kind's services are provided once per fiber, not per command.
      runRetrying(key, Effect.provide(Effect.catchAllCause(retryLoop(key, r, mailbox, failure, permanent), crashed(`actor ${key}`)), registered.services))
    }

    /** A hold ended in the retrying fiber: the commands that waited behind it come next. */
    const released = (key: string, held: { readonly waiting: Array<JsMsg> } | undefined, mailbox: Array<Entry>) => {
      if (held === undefined) return
      holding.delete(key)
      mailbox.unshift(...held.waiting.splice(0).map(streamEntry))
    }

    const retryLoop = (key: string, r: Resident, mailbox: Array<Entry>, firstFailure: Cause.Cause<unknown> | undefined, firstPermanent: boolean) =>
      Effect.gen(function*() {
        // The failure of attempt `attempt` of the command at the head of the mailbox, if known,
        // and whether it was a write that cannot be stored (parked without another try).
        let failure: Cause.Cause<unknown> | undefined = firstFailure
        let permanent = firstPermanent
        for (;;) {
          // Routing is synchronous: nothing can be queued between this check and the hand-back.
          const entry = yield* Effect.sync(() => {
            const next = mailbox.shift()
            if (next === undefined) {
              retrying.delete(key)
              r.busy = holding.has(key)
              r.idleSince = Date.now()
            }
            return next
          })
          if (entry === undefined) return
          const held = holding.get(key)
          if (entry._tag === "local" && held?.into.hold?.id !== entry.holdId) {
            failure = undefined
            permanent = false
            continue
          }
          if (entry._tag === "stream" && held !== undefined) {
            // Behind a hold: waits for the continuation like any other.
            held.waiting.push(entry.message)
            failure = undefined
            permanent = false
            continue
          }
          for (let attempt = 1;; attempt++) {
            if (failure === undefined) {
              const into = applyingFrom(key, r)
              failure = yield* applyOne(into, entry, attempt)
              if (failure === undefined) {
                if (into.hold !== undefined) {
                  // Holds (anew): it waits in memory, its later commands queue behind the hold.
                  yield* Effect.sync(() => startHolding(into, mailbox.splice(0)))
                  break
                }
                const refusedBy = (yield* commitApplied([into], Date.now())).get(into)
                if (refusedBy === undefined) {
                  released(key, held, mailbox)
                  r.state = into.state
                  r.seq = into.applied
                  break
                }
                failure = refusal(refusedBy)
                permanent = cannotStore(refusedBy)
              }
              yield* Metric.increment(failed)
            }
            if (attempt >= registered.maxAttempts || permanent) {
              const into = applyingFrom(key, r)
              yield* park(into, entry, attempt, failure, permanent ? "at once: its write cannot be stored" : "after its last try")
              // A poison row and the sequence only (with what was held): nothing to refuse.
              yield* commitApplied([into], Date.now())
              released(key, held, mailbox)
              r.state = into.state
              r.seq = into.applied
              failure = undefined
              permanent = false
              break
            }
            yield* Effect.logDebug("actor command failed; retrying", { kind: kind.name, key, seq: entry._tag === "stream" ? entry.message.seq : r.seq, attempt, error: firstLine(Cause.pretty(failure)) })
            if (Cause.isDie(failure) && held === undefined) {
              // A defect: the actor restarts from its persisted state.
              const reloaded = (yield* loadStates([key])).get(key)!
              r.state = reloaded.state
              r.seq = reloaded.seq
            }
            if (entry._tag === "stream") entry.message.working()
            yield* Effect.sleep(retryBackoff(attempt))
            failure = undefined
          }
        }
      })

    const crashed = (what: string) => (cause: Cause.Cause<unknown>) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.void
        : Effect.zipRight(Effect.logError(`${what} crashed; dropping the partition`, cause), Deferred.succeed(lost, `${what} crashed`))

    const publishReply = (replyTo: string, wire: ReplyWire) => Effect.sync(() => bus.nc.publish(replyTo, encodeJson(wire)))

    /**
     * The context a behaviour sees; its effects are recorded and applied at commit. `tag` names what
     * this application may create (outbox message ids, timer ids): the command's sequence, with the
     * continuation's number for a continuation.
     */
    const recordEffects = (key: string, seq: number, tag: string, attempt: number, timerId: string | undefined) => {
      const outbox: Array<Effect.Effect<StateWrite["outbox"][number]>> = []
      const timersAdd: Array<Effect.Effect<StateWrite["timersAdd"][number]>> = []
      const timersRemove: Array<string> = []
      const persist: Array<StateWrite["persist"][number]> = []
      const inserts: Array<StateWrite["inserts"][number]> = []
      const targets = new Map<string, ActorKind.Any>()
      const notices: Array<{ readonly subject: string; readonly payload: unknown }> = []
      const afterwards: Array<Effect.Effect<void>> = []
      let counter = 0
      let reply: ReplyWire | undefined
      let hold: Applied["hold"]
      const context: ActorContext<unknown> = {
        key,
        partition,
        seq,
        attempt,
        timerId,
        reply: (request, value) => {
          reply = { exit: encodeExit(request, Exit.succeed(value)) }
        },
        fail: (request, error) => {
          reply = { exit: encodeExit(request, Exit.fail(error)) }
        },
        send: (target, targetKey, command, options) => {
          const n = counter++
          targets.set(target.name, target)
          outbox.push(
            Effect.map(Effect.orDie(encoderOf(target)(command)), (payload) => ({
              subject: commandSubject(names, target.name, partitionOf(targetKey, env.partitions), targetKey),
              // Deterministic: a command re-applied after a crash sends the same id, which
              // JetStream's duplicate window drops.
              msgId: options?.msgId ?? `${kind.name}:${key}:${tag}:${n}`,
              payload,
              headers: null
            }))
          )
        },
        // A chosen id names the timer within its actor: stored ids are prefixed with kind and key.
        schedule: (command, when, id) => {
          const timer = id !== undefined ? `${kind.name}:${key}:${id}` : `${kind.name}:${key}:${tag}:t${counter++}`
          const fireAt = "at" in when ? when.at : new Date(Date.now() + Duration.toMillis(when.after))
          timersAdd.push(Effect.map(Effect.orDie(encodeCommand(command)), (encoded) => ({ timerId: timer, key, fireAt, command: encoded })))
          return timer
        },
        cancelTimer: (id) => {
          timersRemove.push(id.startsWith(`${kind.name}:${key}:`) ? id : `${kind.name}:${key}:${id}`)
        },
        persist: (effect) => {
          persist.push(effect)
        },
        insert: (table, row) => {
          if (!/^[a-z_][a-z0-9_]*$/.test(table)) throw new Error(`table name ${JSON.stringify(table)} is not a plain identifier`)
          inserts.push({ table, row })
        },
        update: (table, row, where) => {
          if (!/^[a-z_][a-z0-9_]*$/.test(table)) throw new Error(`table name ${JSON.stringify(table)} is not a plain identifier`)
          inserts.push({ table, row, updateOn: where })
        },
        notify: (subject, payload) => {
          notices.push({ subject, payload })
        },
        afterCommit: (effect) => {
          afterwards.push(effect)
        },
        hold: (deadline) => {
          const id = ++nextHoldId
          hold = { id, deadline: Date.now() + Duration.toMillis(deadline) }
          return (command) => {
            if (!closed) inbox.unsafeOffer({ _tag: "local", key, command, holdId: id })
          }
        }
      }
      const applyTo = (write: StateWrite) =>
        Effect.gen(function*() {
          for (const target of targets.values()) yield* Effect.orDie(env.ensureKind(target))
          for (const o of outbox) write.outbox.push(yield* o)
          // Timer operations of the commands of one write are applied in order, the last one on an
          // id winning: a timer scheduled then cancelled (or the reverse) in one batch must not
          // reach the database twice, nor twice in one INSERT.
          const dropAdded = (id: string) => {
            const at = write.timersAdd.findIndex((t) => t.timerId === id)
            if (at >= 0) write.timersAdd.splice(at, 1)
          }
          for (const id of timersRemove) {
            dropAdded(id)
            if (!write.timersRemove.includes(id)) write.timersRemove.push(id)
          }
          for (const t of timersAdd) {
            const added = yield* t
            dropAdded(added.timerId)
            write.timersAdd.push(added)
          }
          write.persist.push(...persist)
          write.inserts.push(...inserts)
        })
      /** Notices go out after the commit, like replies; so does work a behaviour started with afterCommit. */
      const queueNotices = (into: Applied) => {
        for (const notice of notices) into.replies.push(() => Effect.sync(() => bus.nc.publish(notice.subject, encodeJson(notice.payload))))
        for (const effect of afterwards) into.replies.push(() => effect)
      }
      return {
        context,
        applyTo,
        queueNotices,
        get reply() {
          return reply
        },
        get hold() {
          return hold
        }
      }
    }

    // --- routing -----------------------------------------------------------------------------

    const route = (message: JsMsg) => {
      inflight++
      const entry = streamEntry(message)
      const mailbox = retrying.get(entry.key)
      if (mailbox !== undefined) mailbox.push(entry)
      else inbox.unsafeOffer(entry)
    }

    yield* processBatch.pipe(
      Effect.forever,
      Effect.provide(registered.services),
      Effect.catchAllCause(crashed("the batch fiber")),
      Effect.forkScoped
    )

    // --- passivation -------------------------------------------------------------------------

    const passivateAfter = Duration.toMillis(registered.passivateAfter)
    const sweep = Effect.suspend(() => {
      const now = Date.now()
      for (const [key, r] of residents) if (!r.busy && now - r.idleSince >= passivateAfter) residents.delete(key)
      sweepHolds(now)
      return Metric.set(active, residents.size)
    })

    /**
     * Held commands are kept from JetStream's redelivery while they wait; a hold past its deadline
     * (its continuation lost) ends, and its commands are applied again from the committed state.
     */
    const sweepHolds = (now: number) => {
      for (const [key, held] of holding) {
        if (continuing.has(key) || retrying.has(key)) continue
        if (held.into.hold !== undefined && now >= held.into.hold.deadline) {
          holding.delete(key)
          const r = residents.get(key)
          if (r !== undefined) r.busy = false
          for (const message of [...held.into.acks, ...held.waiting]) inbox.unsafeOffer(streamEntry(message))
          continue
        }
        if (now - held.beatAt >= Duration.toMillis(HOLD_HEARTBEAT)) {
          held.beatAt = now
          for (const message of held.into.acks) message.working()
          for (const message of held.waiting) message.working()
        }
      }
    }
    yield* sweep.pipe(
      Effect.repeat(Schedule.spaced(Duration.millis(Math.min(1_000, Math.max(100, passivateAfter / 4))))),
      Effect.forkScoped
    )

    // --- the consumer --------------------------------------------------------------------------

    const stream = names.stream(kind.name)
    const durable = consumerName(kind.name, partition)
    yield* Effect.tryPromise(async () => {
      const existing = await bus.jsm.consumers.info(stream, durable).catch(() => undefined)
      // Commands delivered to a previous owner that died are pending until their ack wait
      // runs out; re-creating the consumer redelivers them now (the stream keeps every
      // unacknowledged command), and the last_seq check skips those already applied.
      if (existing !== undefined && existing.num_ack_pending > 0) await bus.jsm.consumers.delete(stream, durable)
      if (existing === undefined || existing.num_ack_pending > 0) {
        await bus.jsm.consumers.add(stream, consumerSpec(names, kind.name, partition, env.maxAckPending))
      }
    })
    const consumer = yield* Effect.tryPromise(() => bus.js.consumers.get(stream, durable))

    yield* loadTimers.pipe(Effect.orDie)
    yield* timerLoop.pipe(Effect.forkScoped)
    yield* loadTimers.pipe(
      Effect.delay(TIMER_RELOAD),
      Effect.forever,
      Effect.catchAllCause((cause) => Effect.logWarning("timer reload failed", cause)),
      Effect.forever,
      Effect.forkScoped
    )

    const messages = yield* Effect.acquireRelease(
      Effect.tryPromise(() => consumer.consume({ max_messages: Math.min(512, env.maxAckPending), expires: 5_000, callback: route })),
      (iterator) => Effect.promise(() => iterator.close().catch(() => undefined))
    )
    // The consume loop ends only if the consumer vanished or the connection closed for good.
    yield* Effect.promise(() => messages.closed()).pipe(
      Effect.zipRight(Deferred.succeed(lost, "consumer closed")),
      Effect.forkScoped
    )

    const drain = (deadline: Duration.DurationInput) =>
      Effect.gen(function*() {
        yield* Effect.promise(() => messages.close().catch(() => undefined))
        yield* Effect.suspend(() => (inflight <= 0 ? Effect.void : Effect.fail("busy"))).pipe(
          Effect.retry(Schedule.spaced(Duration.millis(20))),
          Effect.timeout(deadline),
          Effect.ignore
        )
      })

    if (kind.ephemeral !== undefined) yield* serveEphemeral(bus, ephemeralSubject(names, kind.name, partition), kind.ephemeral.make())

    yield* Effect.annotateLogs(Effect.logDebug("partition started"), { kind: kind.name, partition, epoch })
    return { kind: kind.name, partition, epoch, lost, drain } satisfies OwnedPartition
  })

/**
 * Answers the kind's ephemeral requests for this partition while it is owned: a plain core NATS
 * subscription, closed with the partition's scope (before its lease is given back).
 */
const serveEphemeral = (bus: Connected, subject: string, handle: (key: string, request: unknown) => unknown) =>
  Effect.acquireRelease(
    Effect.sync(() =>
      bus.nc.subscribe(subject, {
        callback: (error, message) => {
          if (error !== null) return
          let answer: EphemeralReply
          try {
            const { key, request } = decodeJson(message.data) as { key: string; request: unknown }
            answer = { ok: handle(key, request) }
          } catch (cause) {
            answer = { error: cause instanceof Error ? cause.message : String(cause) }
          }
          message.respond(encodeJson(answer))
        }
      })
    ),
    (subscription) => Effect.sync(() => subscription.unsubscribe())
  )

const firstLine = (text: string) => text.split("\n")[0] ?? text

/** A command's JSON, or why its bytes are not JSON. */
const jsonOf = (data: Uint8Array): Either.Either<unknown, string> => {
  try {
    return Either.right(decodeJson(data))
  } catch (error) {
    return Either.left(`not JSON (${(error as Error).message})`)
  }
}

// A request's reply travels as its Exit, encoded with the request's own success/failure schemas.
const encodeExit = (request: Schema.TaggedRequest.All, exit: Exit.Exit<unknown, unknown>): unknown =>
  Schema.encodeSync(Schema.exitSchema(request as any) as Schema.Schema<Exit.Exit<unknown, unknown>, unknown>)(exit)

