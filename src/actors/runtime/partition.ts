import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import {
  Cause,
  type Context,
  Deferred,
  Duration,
  Effect,
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
import { emptyWrite, type FencedOut, makeCommitter, type StateWrite } from "./committer.ts"
import { labelled } from "../../observability/labelled.ts"
import * as M from "./metrics.ts"
import { partitionOf } from "./partitioning.ts"
import { makeStateLoader } from "./stateLoader.ts"
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
  /** Bounds how many actors of this node process at once. */
  readonly permits: FairPermits
  /** Wakes the outbox relay after a commit wrote outbox rows. */
  readonly nudgeRelay: Effect.Effect<void>
  /** Makes sure a kind's stream exists before the outbox relay publishes to it. */
  readonly ensureKind: (kind: ActorKind.Any) => Effect.Effect<void, unknown>
  readonly maxAckPending: number
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
const MAX_MAILBOX_BATCH = 256

const retryBackoff = (attempt: number) => Duration.millis(Math.min(5_000, 50 * 2 ** attempt))

/** Commit retries while the database is unreachable: capped backoff, forever (the fence still holds). */
const commitRetry = Schedule.exponential(Duration.millis(100), 2).pipe(
  Schedule.either(Schedule.spaced(Duration.seconds(2))),
  Schedule.whileInput((e: FencedOut | SqlError) => e._tag === "SqlError")
)

/** Put in an idle actor's mailbox by the sweeper: the actor stops. */
const PASSIVATE = "passivate" as const

interface Mailbox {
  readonly queue: Queue.Queue<JsMsg | typeof PASSIVATE>
  closed: boolean
  /** Commands waiting in the queue, and when the oldest of them arrived (latency metric). */
  queued: number
  oldest: number
  /** Taken commands not yet settled (waiting for a permit, applying, committing). */
  busy: boolean
  idleSince: number
}

interface TimerEntry {
  readonly key: string
  readonly fireAt: Date
  readonly command: unknown
  /** Its command was published; the entry stays until the command is applied. */
  fired: boolean
}

/**
 * Runs one owned (kind, partition) until its scope closes: the durable consumer, one mailbox fiber
 * per live actor key, the group committer, and the partition's durable timers.
 */
export const startPartition = (env: PartitionEnv, registered: RegisteredKind, partition: number, epoch: number) =>
  Effect.gen(function*() {
    const { kind } = registered
    const { sql, bus, names } = env
    const lost = yield* Deferred.make<string>()
    const committer = yield* makeCommitter({ kind: kind.name, table: kind.table, partition, epoch }).pipe(
      Effect.provideService(SqlClient.SqlClient, sql)
    )
    const loader = yield* makeStateLoader(kind.table).pipe(Effect.provideService(SqlClient.SqlClient, sql))
    const mailboxes = new Map<string, Mailbox>()
    const actorFibers = yield* FiberMap.make<string>()
    const runActor = yield* FiberMap.runtime(actorFibers)<never>()
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
    const decodeCommand = Schema.decodeUnknown(kind.command)
    const encodeCommand = Schema.encode(kind.command)
    const decodeState = Schema.decodeUnknown(kind.state)
    const encodeState = Schema.encode(kind.state)

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

    // --- one actor ---------------------------------------------------------------------------

    const loadState = (key: string) =>
      Effect.gen(function*() {
        const row = yield* loader.load(key)
        if (row === undefined) return { state: kind.initial(key), seq: 0 }
        return { state: yield* Effect.orDie(decodeState(row.state)), seq: row.lastSeq }
      })

    const runActorLoop = (key: string, mailbox: Mailbox) =>
      Effect.gen(function*() {
        let loaded: { state: unknown; seq: number } | undefined
        yield* Metric.set(active, mailboxes.size)

        /** Writes what the batch changed, then acknowledges and answers. */
        const flush = (write: StateWrite, state: unknown, acks: Array<JsMsg>, replies: Array<() => Effect.Effect<void>>, arrivedAt: number) =>
          Effect.gen(function*() {
            const changed = write.state !== undefined || write.poison.length > 0 || write.timersRemove.length > 0
            if (changed) {
              write.state = yield* Effect.orDie(encodeState(state))
              yield* committer.commit(write).pipe(
                Effect.tapError((e) => (e._tag === "SqlError" ? Effect.sync(() => acks.forEach((m) => m.working())) : Effect.void)),
                Effect.retry(commitRetry),
                Effect.catchTag("FencedOut", (e) => Effect.zipRight(Deferred.succeed(lost, e.message), Effect.interrupt)),
                Effect.orDie
              )
              loaded = { state, seq: write.lastSeq }
              for (const t of write.timersRemove) yield* cancelTimer(t)
              for (const t of write.timersAdd) yield* scheduleTimer(t.timerId, { key, fireAt: t.fireAt, command: t.command, fired: false })
              if (write.outbox.length > 0) yield* env.nudgeRelay
            }
            // One observation per batch, for its oldest command: per-command updates cost more
            // than the rest of the bookkeeping together.
            if (acks.length > 0) yield* Metric.update(latency, (Date.now() - arrivedAt) / 1000)
            yield* settle(acks)
            yield* Metric.incrementBy(processed, acks.length)
            for (const reply of replies) yield* reply()
          })

        const processBatch = (batch: ReadonlyArray<JsMsg>, arrivedAt: number) =>
          Effect.gen(function*() {
            if (loaded === undefined) loaded = yield* Effect.orDie(loadState(key))
            let state = loaded.state
            let applied = loaded.seq
            let write = emptyWrite(key, applied)
            let acks: Array<JsMsg> = []
            let replies: Array<() => Effect.Effect<void>> = []

            for (const message of batch) {
              const seq = message.seq
              if (seq <= applied) {
                acks.push(message)
                continue
              }
              const timerId = message.headers?.get(Header.timer) || undefined
              if (timerId !== undefined && !timers.has(timerId)) {
                // The timer was cancelled or already handled: a fire is a no-op.
                acks.push(message)
                continue
              }
              const replyTo = message.headers?.get(Header.replyTo) || undefined
              const raw = decodeJson(message.data)
              const decoded = yield* Effect.either(decodeCommand(raw))
              if (decoded._tag === "Left") {
                write.poison.push({ key, seq, command: raw, error: `undecodable command: ${decoded.left.message}`, attempts: 0 })
                write.lastSeq = applied = seq
                acks.push(message)
                if (replyTo) replies.push(() => publishReply(replyTo, { parked: "undecodable command" }))
                yield* Metric.increment(parked)
                continue
              }
              const command = decoded.right
              for (let attempt = 1;; attempt++) {
                const effects = recordEffects(key, seq, attempt, timerId)
                const exit = yield* Effect.exit(registered.kind.behaviour(state, command, effects.context))
                if (Exit.isSuccess(exit)) {
                  state = exit.value
                  write.state = state
                  write.lastSeq = applied = seq
                  yield* effects.applyTo(write)
                  if (timerId !== undefined) {
                    write.timersRemove.push(timerId)
                    const due = timers.get(timerId)
                    if (due) yield* Metric.update(lateness, Math.max(0, Date.now() - due.fireAt.getTime()) / 1000)
                  }
                  acks.push(message)
                  if (replyTo && effects.reply) {
                    const answer = effects.reply
                    replies.push(() => publishReply(replyTo, answer))
                  }
                  break
                }
                yield* Metric.increment(failed)
                const error = Cause.pretty(exit.cause)
                if (attempt >= registered.maxAttempts) {
                  yield* Effect.logWarning("actor command parked after its last try", { kind: kind.name, key, seq, attempts: attempt })
                  write.poison.push({ key, seq, command: raw, error, attempts: attempt })
                  if (timerId !== undefined) write.timersRemove.push(timerId)
                  write.lastSeq = applied = seq
                  acks.push(message)
                  if (replyTo) replies.push(() => publishReply(replyTo, { parked: `command failed ${attempt} times: ${firstLine(error)}` }))
                  yield* Metric.increment(parked)
                  break
                }
                yield* Effect.logDebug("actor command failed; retrying", { kind: kind.name, key, seq, attempt, error: firstLine(error) })
                // Make what this batch already applied durable, so that a restart from the
                // persisted state below does not lose it.
                yield* flush(write, state, acks, replies, arrivedAt)
                write = emptyWrite(key, applied)
                acks = []
                replies = []
                if (Cause.isDie(exit.cause)) {
                  // A defect: the actor restarts from its persisted state.
                  loaded = yield* Effect.orDie(loadState(key))
                  state = loaded.state
                }
                message.working()
                yield* Effect.sleep(retryBackoff(attempt))
              }
            }
            yield* flush(write, state, acks, replies, arrivedAt)
          })

        for (;;) {
          const first = yield* Queue.take(mailbox.queue)
          if (first === PASSIVATE) return
          mailbox.busy = true
          const arrivedAt = mailbox.oldest
          const rest = yield* Queue.takeUpTo(mailbox.queue, MAX_MAILBOX_BATCH - 1)
          mailbox.queued -= rest.length + 1
          if (mailbox.queued > 0) mailbox.oldest = Date.now()
          // The sweeper passivates only a mailbox that is closed and empty: nothing follows PASSIVATE.
          const batch = [first, ...rest].filter((m): m is JsMsg => m !== PASSIVATE)
          yield* env.permits.withPermit(processBatch(batch, arrivedAt))
          mailbox.busy = false
          mailbox.idleSince = Date.now()
        }
      }).pipe(
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.void
            : Effect.zipRight(
              Effect.logError("actor mailbox crashed; dropping the partition", cause),
              Deferred.succeed(lost, `mailbox of ${key} crashed`)
            )
        )
      )

    const publishReply = (replyTo: string, wire: ReplyWire) => Effect.sync(() => bus.nc.publish(replyTo, encodeJson(wire)))

    /** The context a behaviour sees; its effects are recorded and applied at commit. */
    const recordEffects = (key: string, seq: number, attempt: number, timerId: string | undefined) => {
      const outbox: Array<Effect.Effect<StateWrite["outbox"][number]>> = []
      const timersAdd: Array<Effect.Effect<StateWrite["timersAdd"][number]>> = []
      const timersRemove: Array<string> = []
      const persist: Array<StateWrite["persist"][number]> = []
      const targets = new Map<string, ActorKind.Any>()
      let counter = 0
      let reply: ReplyWire | undefined
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
              msgId: options?.msgId ?? `${kind.name}:${key}:${seq}:${n}`,
              payload,
              headers: null
            }))
          )
        },
        // A chosen id names the timer within its actor: stored ids are prefixed with kind and key.
        schedule: (command, when, id) => {
          const timer = id !== undefined ? `${kind.name}:${key}:${id}` : `${kind.name}:${key}:${seq}:t${counter++}`
          const fireAt = "at" in when ? when.at : new Date(Date.now() + Duration.toMillis(when.after))
          timersAdd.push(Effect.map(Effect.orDie(encodeCommand(command)), (encoded) => ({ timerId: timer, key, fireAt, command: encoded })))
          return timer
        },
        cancelTimer: (id) => {
          timersRemove.push(id.startsWith(`${kind.name}:${key}:`) ? id : `${kind.name}:${key}:${id}`)
        },
        persist: (effect) => {
          persist.push(effect)
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
        })
      return {
        context,
        applyTo,
        get reply() {
          return reply
        }
      }
    }

    // --- routing -----------------------------------------------------------------------------

    const route = (message: JsMsg) => {
      inflight++
      const key = keyOfSubject(message.subject)
      let mailbox = mailboxes.get(key)
      if (mailbox === undefined || mailbox.closed) {
        const created: Mailbox = { queue: Effect.runSync(Queue.unbounded<JsMsg | typeof PASSIVATE>()), closed: false, queued: 0, oldest: 0, busy: false, idleSince: Date.now() }
        mailboxes.set(key, created)
        // The kind's services are provided once per actor fiber, not per command.
        runActor(key, Effect.provide(runActorLoop(key, created), registered.services))
        mailbox = created
      }
      if (mailbox.queued++ === 0) mailbox.oldest = Date.now()
      mailbox.queue.unsafeOffer(message)
    }

    // --- passivation -------------------------------------------------------------------------

    // One sweep over the partition's actors instead of a timeout on every actor's wait: racing
    // each take against a timer cost more than the rest of an idle actor's bookkeeping.
    const passivateAfter = Duration.toMillis(registered.passivateAfter)
    const sweep = Effect.suspend(() => {
      const now = Date.now()
      for (const [key, mailbox] of mailboxes) {
        if (!mailbox.busy && mailbox.queued === 0 && now - mailbox.idleSince >= passivateAfter) {
          mailbox.closed = true
          mailboxes.delete(key)
          mailbox.queue.unsafeOffer(PASSIVATE)
        }
      }
      return Metric.set(active, mailboxes.size)
    })
    yield* sweep.pipe(
      Effect.repeat(Schedule.spaced(Duration.millis(Math.min(30_000, Math.max(100, passivateAfter / 4))))),
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

// A request's reply travels as its Exit, encoded with the request's own success/failure schemas.
const encodeExit = (request: Schema.TaggedRequest.All, exit: Exit.Exit<unknown, unknown>): unknown =>
  Schema.encodeSync(Schema.exitSchema(request as any) as Schema.Schema<Exit.Exit<unknown, unknown>, unknown>)(exit)

