import { Duration, Effect, Queue, Schedule } from "effect"
import { headers as natsHeaders } from "nats"
import type { ActorKind } from "./ActorKind.ts"
import type { PartitionEnv } from "./partitionEnv.ts"
import { makeTimerHeap } from "./timerHeap.ts"
import { TRACEPARENT } from "../../observability/Tracing.ts"
import { commandSubject, consumerName, encodeJson, Header } from "./transport.ts"

/** How far ahead timers are loaded into memory; later ones are picked up by the periodic reload. */
const TIMER_HORIZON = Duration.minutes(5)

export interface TimerEntry {
  readonly key: string
  readonly fireAt: Date
  readonly command: unknown
  readonly traceparent?: string | undefined
  /** Its command was published; the entry stays until the command is applied. */
  fired: boolean
  /** When it was last published (epoch ms). */
  firedAt?: number
  /** Times it was published again because its command never arrived. */
  refires?: number
}

export type PartitionTimers = Effect.Effect.Success<ReturnType<typeof makePartitionTimers>>

/**
 * The durable timers of one owned partition due within the horizon: one heap and one fiber per
 * partition, however many timers. A timer fires by publishing its command to the actor's stream.
 */
export const makePartitionTimers = (env: PartitionEnv, kind: ActorKind.Any, partition: number, epoch: number) =>
  Effect.gen(function*() {
    const { sql, names } = env
    const timers = new Map<string, TimerEntry>()
    const timerHeap = makeTimerHeap()
    const timerWake = yield* Queue.sliding<void>(1)

    const fireTimer = (timerId: string, entry: TimerEntry) =>
      Effect.suspend(() => {
        const h = natsHeaders()
        h.set(Header.timer, timerId)
        if (entry.traceparent) h.set(TRACEPARENT, entry.traceparent)
        // A fire published again (its first command lost) needs an id of its own: JetStream's
        // duplicate window would drop it as the first one.
        const again = entry.refires === undefined || entry.refires === 0 ? "" : `#${entry.refires}`
        return env.publish(commandSubject(names, kind.name, partition, entry.key), encodeJson(entry.command), {
          msgID: `${timerId}@${entry.fireAt.getTime()}${again}`,
          headers: h
        }).pipe(Effect.retry(Schedule.spaced(Duration.millis(200))))
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
          entry.firedAt = now
          due.push([top.id, entry])
        }
        yield* Effect.forEach(due, ([id, entry]) => fireTimer(id, entry), { concurrency: 64, discard: true })
        const next = timerHeap.peek()
        const wait = next === undefined ? Duration.toMillis(env.timerRecheck) : Math.max(0, next.at - Date.now())
        if (wait > 0) yield* Queue.take(timerWake).pipe(Effect.timeoutOption(Duration.millis(wait)))
      }
    })

    const schedule = (timerId: string, entry: TimerEntry) =>
      Effect.suspend(() => {
        timers.set(timerId, entry)
        if (entry.fireAt.getTime() - Date.now() > Duration.toMillis(TIMER_HORIZON)) return Effect.void
        const earliest = timerHeap.peek()
        timerHeap.push({ at: entry.fireAt.getTime(), id: timerId })
        return earliest === undefined || entry.fireAt.getTime() < earliest.at ? Queue.offer(timerWake, undefined) : Effect.void
      })

    const cancel = (timerId: string) => Effect.sync(() => timers.delete(timerId))

    const loadTimers = Effect.gen(function*() {
      const rows = yield* sql<{ timerId: string; actorKey: string; fireAt: Date; command: unknown; traceparent: string | null }>`
        SELECT timer_id, actor_key, fire_at, command, traceparent FROM actor_timers
        WHERE kind = ${kind.name} AND partition = ${partition} AND fire_at < now() + ${`${Duration.toSeconds(TIMER_HORIZON)} seconds`}::interval`
      for (const row of rows) {
        if (!timers.has(row.timerId)) {
          yield* schedule(row.timerId, { key: row.actorKey, fireAt: new Date(row.fireAt), command: row.command, traceparent: row.traceparent ?? undefined, fired: false })
        }
      }
      return rows
    })

    /**
     * Timers fired a recheck ago whose row is still there (their command was never applied) while
     * the partition's consumer has nothing left to deliver or acknowledge: their command was lost
     * between its publish and the stream (a NATS server killed as it took it: the stream keeps the
     * message id in its duplicate window, not the message, seen with nats-server 2.9). Published
     * again under an id of their own. Applying a timer's command removes it, so a copy arriving
     * after the first is a no-op (applyCommand): at most one of them is applied.
     */
    const refireLost = (rows: ReadonlyArray<{ readonly timerId: string }>) =>
      Effect.gen(function*() {
        const now = Date.now()
        const recheckMs = Duration.toMillis(env.timerRecheck)
        const lost = rows.flatMap((row) => {
          const entry = timers.get(row.timerId)
          return entry !== undefined && entry.fired && entry.firedAt !== undefined && now - entry.firedAt >= recheckMs ? [[row.timerId, entry] as const] : []
        })
        if (lost.length === 0) return
        const info = yield* Effect.tryPromise(() => env.bus.jsm.consumers.info(names.stream(kind.name), consumerName(kind.name, partition, epoch)))
        if (info.num_pending > 0 || info.num_ack_pending > 0) return
        yield* Effect.logWarning("fired timers whose command never arrived: fired again", { kind: kind.name, partition, timers: lost.length })
        yield* Effect.forEach(lost, ([id, entry]) => {
          entry.refires = (entry.refires ?? 0) + 1
          entry.firedAt = Date.now()
          return fireTimer(id, entry)
        }, { concurrency: 64, discard: true })
      })

    /**
     * Loads the timers due soon, then fires them for as long as the partition's scope lasts; the
     * reload picks up those that came within the horizon since (a failed reload is tried again).
     */
    const run = Effect.gen(function*() {
      yield* loadTimers.pipe(Effect.orDie)
      yield* timerLoop.pipe(Effect.forkScoped)
      yield* loadTimers.pipe(
        Effect.flatMap(refireLost),
        Effect.delay(env.timerRecheck),
        Effect.forever,
        Effect.catchAllCause((cause) => Effect.logWarning("timer reload failed", cause)),
        Effect.forever,
        Effect.forkScoped
      )
    })

    return {
      /** Whether the timer is still scheduled: a fire of one cancelled or handled is a no-op. */
      has: (timerId: string) => timers.has(timerId),
      get: (timerId: string) => timers.get(timerId),
      schedule,
      cancel,
      run
    }
  })
