import { Deferred, Duration, Effect, Exit, FiberSet, Queue, type Tracer } from "effect"
import { tracedSpan } from "../observability/Tracing.ts"
import { AppConfig } from "../config/AppConfig.ts"
import type { MessageContent } from "../domain/content.ts"
import type { SendOutcome } from "../gateway/rcs.ts"
import { RcsGateway } from "../gateway/RcsGateway.ts"
import type { LeaseGuard } from "../actors/runtime/leaseGuard.ts"
import { BotsCache } from "../bots/BotsCache.ts"
import { type Bucket, msUntilToken, take } from "../ratelimit/tokenBucket.ts"

/** One send to the gateway, as the sender actor hands it over. */
export interface SendJob {
  readonly messageId: string
  readonly botId: string
  readonly accountId: string
  readonly to: string
  readonly content: MessageContent
  readonly attempt: number
  /** Called with the gateway's answer (or its absence); must not fail. */
  readonly report: (outcome: SendOutcome) => Effect.Effect<void>
  /** The sender partition's lease: checked just before the request leaves (ActorContext.lease). */
  readonly lease: LeaseGuard
  /**
   * Called instead of `report` when the lease check failed and the request never left: the
   * partition's next owner sends it (a sweep finds it in flight).
   */
  readonly abandon?: () => Effect.Effect<void>
  /** The span the send continues (the command that decided it), when tracing is on. */
  readonly trace?: Tracer.AnySpan | undefined
}

/** Gateway requests in flight for one bot on this node: in-order admission, bounded overlap. */
const PER_BOT_IN_FLIGHT = 64

interface Lane {
  readonly botId: string
  readonly accountId: string
  /** Jobs waiting, from `head` on: Array.shift is linear once a queue holds a broadcast's chunks. */
  queue: Array<SendJob>
  head: number
  readonly slots: Queue.Queue<void>
  /** The bot's token bucket (ratelimit/tokenBucket.ts), a tenth of a second's worth deep. */
  readonly bucket: Bucket
  pumping: boolean
  /** The bot's throughput as last read. */
  rate: number
}

/**
 * Sends to the gateway for the sender actors this node owns. Each bot has a lane: jobs leave it in
 * the order they came, paced by the bot's upstream throughput (a token bucket of a tenth of a
 * second's worth, so the rate holds over any window longer than that) with a bounded number in
 * flight. Since one node owns a bot's sender actor at a time, the bot's limit holds across the
 * cluster. The actor is told every answer through `report`; the lane never retries by itself.
 */
export class SendDispatcher extends Effect.Service<SendDispatcher>()("herald/messaging/SendDispatcher", {
  scoped: Effect.gen(function*() {
    const gateway = yield* RcsGateway
    const bots = yield* BotsCache
    const config = yield* AppConfig
    const fibers = yield* FiberSet.make()
    const lanes = new Map<string, Lane>()
    const handling = new Set<string>()

    // Read for every send from the bots cache (the change feed drops it when a bot changes), so
    // `herald admin bot-throughput` applies at once. While the database cannot be read (the cache
    // holds nothing while its feed is down) the lane goes on at the last rate it read: a pump that
    // died here would leave its queued sends, and a broadcast's slice waiting on them, stuck.
    const rateOf = (lane: Lane) =>
      bots.find(lane.accountId, lane.botId).pipe(
        Effect.map((bot) => (lane.rate = bot?.throughput ?? config.botThroughputDefault)),
        Effect.catchAllCause(() => Effect.succeed(lane.rate))
      )

    /** Time to wait for the next token (0 when one is there, and then it is taken). */
    const takeToken = (lane: Lane, rate: number) => {
      if (rate === 0) return 0
      const now = Date.now()
      const limit = { rate, capacity: Math.max(1, rate / 10) }
      return take(lane.bucket, limit, 1, now) === 1 ? 0 : msUntilToken(lane.bucket, limit, now)
    }

    const send = (job: SendJob) => {
      // Checked again as the request gets its socket: a node frozen while it waited for one must
      // not write it on waking if it lost the bot meanwhile (the gateway then says NotSent).
      let withheld = false
      const proceed = () => job.lease.fresh() || !(withheld = true)
      const sent = gateway.send({ messageId: job.messageId, agentId: job.botId, to: job.to, content: job.content, proceed }).pipe(
        Effect.flatMap((outcome) => (withheld ? abandoned(job) : job.report(outcome)))
      )
      return job.trace === undefined ? sent : Effect.withParentSpan(sent, job.trace)
    }

    const abandoned = (job: SendJob) => job.abandon?.() ?? Effect.logDebug("send not made: this node gave up the bot's partition", { message_id: job.messageId })

    // The lease is checked here, as the request is about to leave: a node that woke from a pause
    // with sends still queued for a bot it no longer owns sends none of them.
    const call = (lane: Lane, job: SendJob) =>
      (job.lease.fresh()
        ? send(job)
        : job.lease.current.pipe(
          Effect.matchEffect({
            onSuccess: () => send(job),
            onFailure: () => abandoned(job)
          })
        )).pipe(
          Effect.ensuring(Effect.zipRight(Effect.sync(() => handling.delete(job.messageId)), Queue.offer(lane.slots, undefined)))
        )

    const pump = (lane: Lane): Effect.Effect<void> =>
      Effect.gen(function*() {
        for (;;) {
          // Idle again in the same step that finds the lane empty: a job queued after this step
          // starts a new pump, and none is left behind between the check and the pump's end.
          if (lane.head >= lane.queue.length) {
            lane.pumping = false
            return
          }
          const wait = takeToken(lane, yield* rateOf(lane))
          if (wait > 0) {
            yield* Effect.sleep(Duration.millis(wait))
            continue
          }
          yield* Queue.take(lane.slots)
          const job = lane.queue[lane.head]!
          lane.queue[lane.head++] = undefined as unknown as SendJob
          if (lane.head === lane.queue.length) {
            lane.queue = []
            lane.head = 0
          } else if (lane.head >= 4096 && lane.head * 2 >= lane.queue.length) {
            lane.queue = lane.queue.slice(lane.head)
            lane.head = 0
          }
          yield* FiberSet.run(fibers, call(lane, job))
        }
      }).pipe(Effect.onExit((exit) =>
        Effect.sync(() => {
          if (Exit.isFailure(exit)) lane.pumping = false
        })
      ))

    const newLane = (botId: string, accountId: string) =>
      Effect.gen(function*() {
        const slots = yield* Queue.bounded<void>(PER_BOT_IN_FLIGHT)
        yield* Queue.offerAll(slots, Array.from({ length: PER_BOT_IN_FLIGHT }, () => undefined))
        // Another send of the bot may have made its lane meanwhile.
        const made = lanes.get(botId)
        if (made !== undefined) return made
        const lane: Lane = { botId, accountId, queue: [], head: 0, slots, bucket: { tokens: 1, updatedAt: Date.now() }, pumping: false, rate: config.botThroughputDefault }
        lanes.set(botId, lane)
        return lane
      })

    // The lane of a bot already sending is found without an Effect of its own: a broadcast queues
    // a million jobs, and a generator per job was a tenth of the node's CPU (docs/benchmarks.md).
    const withLane = <A>(botId: string, accountId: string, f: (lane: Lane) => Effect.Effect<A>) =>
      Effect.suspend(() => {
        const lane = lanes.get(botId)
        return lane === undefined ? Effect.flatMap(newLane(botId, accountId), f) : f(lane)
      })

    /** Puts jobs at the end of a lane (synchronously, in order) and starts its pump if it is idle. */
    const enqueue = (lane: Lane, jobs: ReadonlyArray<SendJob>) =>
      Effect.suspend(() => {
        for (const job of jobs) {
          handling.add(job.messageId)
          lane.queue.push(job)
        }
        if (lane.pumping) return Effect.void
        lane.pumping = true
        return Effect.asVoid(FiberSet.run(fibers, pump(lane)))
      })

    /** Queues a send; returns at once. */
    const submit = (job: SendJob) =>
      Effect.flatMap(tracedSpan, (trace) => withLane(job.botId, job.accountId, (lane) => enqueue(lane, [trace === undefined ? job : { ...job, trace }])))

    /**
     * Sends many messages of one bot through its lane (paced like any other send) and answers
     * their outcomes in the same order, once every one is answered; `undefined` for a send that
     * never left because the lease check failed.
     */
    const sendAll = (
      botId: string,
      accountId: string,
      sends: ReadonlyArray<Omit<SendJob, "botId" | "accountId" | "report" | "lease" | "abandon">>,
      lease: LeaseGuard
    ) =>
      Effect.gen(function*() {
        const outcomes = new Array<SendOutcome | undefined>(sends.length)
        if (sends.length === 0) return outcomes
        let left = sends.length
        const all = yield* Deferred.make<void>()
        const trace = yield* tracedSpan
        const settled = (i: number, outcome: SendOutcome | undefined) =>
          Effect.suspend(() => {
            outcomes[i] = outcome
            return --left === 0 ? Deferred.succeed(all, undefined) : Effect.void
          }).pipe(Effect.asVoid)
        const jobs = sends.map((send, i): SendJob => ({
          ...send,
          botId,
          accountId,
          lease,
          trace,
          report: (outcome) => settled(i, outcome),
          abandon: () => settled(i, undefined)
        }))
        yield* withLane(botId, accountId, (lane) => enqueue(lane, jobs))
        yield* Deferred.await(all)
        return outcomes
      })

    /** Whether this node is sending the message now (queued or waiting for the gateway). */
    const isHandling = (messageId: string) => handling.has(messageId)

    return { submit, sendAll, isHandling } as const
  }),
  dependencies: [BotsCache.Default]
}) {}
