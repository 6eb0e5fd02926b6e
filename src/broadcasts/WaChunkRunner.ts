import { Duration, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import type { LeaseGuard } from "../actors/runtime/leaseGuard.ts"
import { AppConfig } from "../config/AppConfig.ts"
import type { GatewayErrorRecord } from "../domain/gatewayError.ts"
import { waUnconfirmed } from "../gateway/cloud/CloudApiGateway.ts"
import { WaGateway } from "../gateway/WaGateway.ts"
import type { WaSendOutcome } from "../gateway/wa.ts"
import type { ChunkOrder } from "../messaging/chunkProtocol.ts"
import { makeChunkRuns, PartitionGone, untilWritten } from "./chunkRuns.ts"
import { MAX_SEND_ATTEMPTS, retryDelay } from "../messaging/sendRetries.ts"
import { type Bucket, type Limit, msUntilToken, take } from "../ratelimit/tokenBucket.ts"
import { toCloudMessage } from "../whatsapp/cloud/payload.ts"
import { digitsOf } from "../whatsapp/events.ts"
import { WaChunkRuns } from "../whatsapp/sender/WaChunkRuns.ts"
import { WA_THROUGHPUT_DEFAULT, WaNumbers } from "../whatsapp/numbers/WaNumbers.ts"
import { buildTemplateSend } from "../whatsapp/templates/templateValues.ts"
import { BroadcastsRepo, type CampaignContent } from "./BroadcastsRepo.ts"
import { BroadcastTargets, type PendingTarget, type TargetOutcome } from "./BroadcastTargets.ts"
import { fillTraits } from "./campaignValues.ts"
import { CHUNK_TARGETS, CHUNK_WINDOW } from "./chunking.ts"
import { BroadcastProgress } from "./progress.ts"

/** One run of a campaign chunk on this node, under the number partition's lease. */
interface Run {
  readonly order: ChunkOrder
  readonly phoneNumberId: string
  readonly lease: LeaseGuard
  readonly id: string
}


type Header = NonNullable<Effect.Effect.Success<ReturnType<BroadcastsRepo["header"]>>>

/** A target's template filled with its customer's traits that Meta's limits refuse: not sent, not charged. */
const personalisedRefused = (problems: string): GatewayErrorRecord => ({
  success: false,
  message: "personalised template values refused",
  detail: `Filled with this customer's traits, the template's values break: ${problems}. Shorten the customer's trait or the campaign's values.`,
  category: "content",
  retryable: false
})

const isRefusal = (value: Record<string, unknown> | GatewayErrorRecord): value is GatewayErrorRecord => value.success === false && "category" in value

/** Requests to Meta in flight per run: bounds memory and sockets whatever the number's tier. */
const IN_FLIGHT = 256


/** A number's pace: its tier a second, in bursts of a tenth of a second. */
const paceOf = (throughput: number | undefined): Limit => {
  const rate = throughput ?? WA_THROUGHPUT_DEFAULT
  return { rate, capacity: Math.max(1, rate / 10) }
}

/**
 * Sends WhatsApp campaign chunks for the numbers whose `wa_sender` actors this node owns: the
 * broadcast engine's WhatsApp lane (docs/campaigns.md). As ChunkRunner does for RCS, a chunk goes
 * out slice by slice, each claimed in `broadcast_chunks` before it leaves and its outcomes written
 * in one statement after, paced by the number's tier. Where it differs is what a stopped node
 * leaves: the Cloud API has no idempotency key, so a target claimed and left without an outcome
 * is never sent again: it becomes unconfirmed (a status webhook still moves it on) and fails after
 * the unconfirmed expiry, as a single send does. A campaign's message is charged when Meta
 * reports it delivered, not when it is sent.
 */
export class WaChunkRunner extends Effect.Service<WaChunkRunner>()("herald/broadcasts/WaChunkRunner", {
  scoped: Effect.gen(function*() {
    const broadcasts = yield* BroadcastsRepo
    const repo = yield* BroadcastTargets
    const gateway = yield* WaGateway
    const numbers = yield* WaNumbers
    const config = yield* AppConfig
    const progress = yield* BroadcastProgress
    const buckets = new Map<string, Bucket>()
    const runs = yield* makeChunkRuns("campaign", config)
    const busyWhile = runs.busyWhile
    const staleAfterMs = config.gatewayTimeoutMs + Duration.toMillis(retryDelay(MAX_SEND_ATTEMPTS - 1)) + 5_000
    const allowHttpMedia = config.mediaAllowHttp

    const paceFor = (phoneNumberId: string) => Effect.map(numbers.find(phoneNumberId), (number) => paceOf(number?.throughput))

    /** Waits for one of the number's tokens (shared by every run of the number on this node). */
    const token = (phoneNumberId: string, pace: Limit): Effect.Effect<void> =>
      Effect.suspend(() => {
        const now = Date.now()
        let bucket = buckets.get(phoneNumberId)
        if (bucket === undefined) {
          bucket = { tokens: pace.capacity, updatedAt: now }
          buckets.set(phoneNumberId, bucket)
        }
        if (take(bucket, pace, 1, now) === 1) return Effect.void
        return Effect.zipRight(Effect.sleep(Duration.millis(Math.max(1, msUntilToken(bucket, pace, now)))), token(phoneNumberId, pace))
      })

    /** The template object a target is sent: its values filled with the target's traits when the campaign names any. */
    const templateFor = (header: Header, vars: PendingTarget["vars"]): Record<string, unknown> | GatewayErrorRecord => {
      const content = header.content as unknown as CampaignContent
      const data = header.variables === null ? content.data : fillTraits(content.data, vars, header.variables)
      const built = buildTemplateSend(content.definition, data, { allowHttpMedia })
      return "issues" in built ? personalisedRefused(built.issues.map((i) => `${i.path}: ${i.message}`).join("; ")) : built.object
    }

    const record = (order: ChunkOrder, header: Header, outcomes: ReadonlyArray<TargetOutcome>) =>
      repo.recordOutcomes({ broadcastId: order.broadcastId, accountId: order.accountId, price: header.price, chargeSent: false, outcomes }).pipe(
        Effect.tapError((error) => Effect.logWarning("campaign outcomes not written yet; trying again", { broadcast_id: order.broadcastId, chunk: order.chunkNo, error: error.message })),
        Effect.retry(untilWritten),
        Effect.zipRight(progress.changed(order.accountId, order.broadcastId))
      )

    /** The run ends because this node gave the number's partition up: its claim comes back to what may have left. */
    const stopRun = (run: Run, sentUpto: number) =>
      repo.releaseClaim(run.order.broadcastId, run.order.chunkNo, sentUpto, run.id).pipe(
        Effect.retry(untilWritten),
        Effect.zipRight(Effect.fail(new PartitionGone({ message: `the partition of number ${run.phoneNumberId} left this node` })))
      )

    /**
     * Sends a slice, at most IN_FLIGHT requests at once, each after the number's token and a
     * check of the partition's lease. Meta's retryable refusals (a 5xx, a request that never
     * left) are sent again with the single sends' backoff; an answer that never came is
     * unconfirmed; anything else is the target's outcome.
     */
    const sendSlice = (run: Run, header: Header, pace: Limit, slice: ReadonlyArray<PendingTarget>) =>
      Effect.gen(function*() {
        const { order } = run
        const refusedOutcomes: Array<TargetOutcome> = []
        const bodies = new Map<number, Record<string, unknown>>()
        // Without trait values every target is sent the same template: built once.
        const shared = header.variables === null ? templateFor(header, null) : undefined
        for (const target of slice) {
          const object = shared ?? templateFor(header, target.vars)
          if (isRefusal(object)) refusedOutcomes.push({ targetNo: target.targetNo, status: "failed", error: object })
          else bodies.set(target.targetNo, toCloudMessage(digitsOf(target.phone), { type: "template", object }, target.messageId))
        }
        if (refusedOutcomes.length > 0) yield* record(order, header, refusedOutcomes)
        let remaining = slice.filter((t) => bodies.has(t.targetNo))
        for (let attempt = 1; remaining.length > 0; attempt++) {
          const answers = yield* Effect.forEach(
            remaining,
            (target) =>
              Effect.zipRight(
                token(run.phoneNumberId, pace),
                run.lease.current.pipe(
                  Effect.matchEffect({
                    onFailure: () => Effect.succeed<WaSendOutcome | undefined>(undefined),
                    onSuccess: () => gateway.send(run.phoneNumberId, bodies.get(target.targetNo)!, target.messageId)
                  })
                )
              ),
            { concurrency: IN_FLIGHT }
          )
          const again: Array<PendingTarget> = []
          const outcomes: Array<TargetOutcome> = []
          const unsent: Array<PendingTarget> = []
          answers.forEach((answer, i) => {
            const target = remaining[i]!
            if (answer === undefined) unsent.push(target)
            else if (answer._tag === "Accepted") outcomes.push({ targetNo: target.targetNo, status: "sent", error: null })
            else if (answer._tag === "Unconfirmed") outcomes.push({ targetNo: target.targetNo, status: "unconfirmed", error: answer.error })
            else if (answer.error.retryable && attempt < MAX_SEND_ATTEMPTS) again.push(target)
            else outcomes.push({ targetNo: target.targetNo, status: "failed", error: answer.error })
          })
          yield* record(order, header, outcomes)
          // Every target that left has its outcome written now: the claim comes back to just
          // before the first that did not, so the next owner sends those and no other.
          if (unsent.length > 0) return yield* stopRun(run, Math.min(...unsent.map((t) => t.targetNo)) - 1)
          remaining = again
          if (again.length > 0) {
            if (runs.stopping()) return yield* stopRun(run, Math.min(...again.map((t) => t.targetNo)) - 1)
            yield* Effect.sleep(retryDelay(attempt))
            yield* Effect.catchAll(run.lease.current, () => stopRun(run, Math.min(...again.map((t) => t.targetNo)) - 1))
            yield* repo.claim(order.broadcastId, order.chunkNo, slice[slice.length - 1]!.targetNo, run.id).pipe(Effect.retry(untilWritten))
          }
        }
      })

    /** A slice is about half a second of the number's tier, a chunk at most. */
    const sliceSize = (pace: Limit) => Math.max(1, Math.min(CHUNK_TARGETS, Math.ceil(pace.rate / 2)))

    const sendInSlices = (run: Run, header: Header, targets: ReadonlyArray<PendingTarget>) =>
      Effect.gen(function*() {
        const { order } = run
        const pace = yield* paceFor(run.phoneNumberId)
        const size = sliceSize(pace)
        for (let start = 0; start < targets.length; start += size) {
          const slice = targets.slice(start, start + size)
          const status = yield* broadcasts.status(order.broadcastId)
          if (status === undefined) return
          if (status === "cancelled") return yield* repo.cancelPending(order.broadcastId, slice[0]!.targetNo, order.last)
          if (runs.stopping()) return yield* busyWhile(stopRun(run, slice[0]!.targetNo - 1))
          yield* Effect.catchAll(run.lease.current, () => stopRun(run, slice[0]!.targetNo - 1))
          yield* busyWhile(Effect.zipRight(
            repo.claim(order.broadcastId, order.chunkNo, slice[slice.length - 1]!.targetNo, run.id),
            sendSlice(run, header, pace, slice)
          ))
        }
      })

    /**
     * Targets a stopped node claimed and left without an outcome: once no node can still be
     * sending them (the claim is stale), they become unconfirmed, never sent again.
     */
    const resolveInDoubt = (run: Run): Effect.Effect<void, unknown> =>
      Effect.gen(function*() {
        const { order } = run
        const claim = yield* repo.chunkClaim(order.broadcastId, order.chunkNo)
        if (claim === undefined) return
        const inDoubt = (yield* repo.pendingTargets(order.broadcastId, order.first, order.last)).filter((t) => t.targetNo <= claim.claimedUpto)
        if (inDoubt.length === 0) return
        const wait = staleAfterMs - claim.ageMs
        if (wait > 0) {
          yield* Effect.sleep(Duration.millis(wait))
          return yield* resolveInDoubt(run)
        }
        yield* Effect.logInfo("campaign targets a stopped node left without an outcome are unconfirmed, not sent again", {
          broadcast_id: order.broadcastId,
          chunk: order.chunkNo,
          targets: inDoubt.length
        })
        yield* repo.markUnconfirmed(
          order.broadcastId,
          order.first,
          claim.claimedUpto,
          waUnconfirmed("", "The node sending this campaign message stopped before Meta's answer was recorded. It may still reach the customer; Herald does not send it again and waits for its status.")
        )
      })

    /** Fails the chunk's unconfirmed targets once they waited out the unconfirmed expiry with no status from Meta. */
    const settleUnconfirmed = (order: ChunkOrder): Effect.Effect<void, unknown> =>
      Effect.gen(function*() {
        const windowMs = config.waUnconfirmedExpiryMs
        const left = yield* repo.unconfirmedIn(order.broadcastId, order.first, order.last, windowMs)
        if (left.count === 0) return
        if (left.waitMs > 0) yield* Effect.sleep(Duration.millis(Math.ceil(left.waitMs)))
        yield* repo.failUnconfirmed(order.broadcastId, order.first, order.last, windowMs)
        yield* progress.changed(order.accountId, order.broadcastId)
        return yield* settleUnconfirmed(order)
      })

    const runChunk = (run: Run, permits: Effect.Semaphore) =>
      Effect.gen(function*() {
        const { order } = run
        const header = yield* broadcasts.header(order.broadcastId)
        if (header === undefined) return
        yield* resolveInDoubt(run)
        const toSend = yield* repo.pendingTargets(order.broadcastId, order.first, order.last)
        if (toSend.length > 0) yield* permits.withPermits(1)(sendInSlices(run, header, toSend))
        yield* settleUnconfirmed(order)
      })

    const perNumber = new Map<string, Effect.Semaphore>()
    /** Chunks of one number sent at once on this node: enough to keep a high tier busy, few enough that a claimed slice leaves soon. */
    const permitsOf = (phoneNumberId: string, pace: Limit) =>
      Effect.gen(function*() {
        let semaphore = perNumber.get(phoneNumberId)
        if (semaphore === undefined) {
          semaphore = yield* Effect.makeSemaphore(Math.min(CHUNK_WINDOW, Math.max(1, Math.ceil((pace.rate * 2) / CHUNK_TARGETS))))
          perNumber.set(phoneNumberId, semaphore)
        }
        return semaphore
      })

    const start = (order: ChunkOrder, phoneNumberId: string, lease: LeaseGuard, finished: Effect.Effect<void>, moved: Effect.Effect<void>) =>
      Effect.gen(function*() {
        if (runs.skip(order)) return
        const permits = yield* permitsOf(phoneNumberId, yield* paceFor(phoneNumberId))
        yield* runs.start(order, runChunk({ order, phoneNumberId, lease, id: randomUUID() }, permits), finished, moved)
      })

    return { start, isRunning: runs.isRunning } as const
  }),
  dependencies: [BroadcastsRepo.Default, BroadcastTargets.Default, BroadcastProgress.Default, WaNumbers.Default]
}) {}

/** The number sender's WaChunkRuns port (whatsapp/sender/WaChunkRuns.ts), run by this node's WaChunkRunner. */
export const WaChunkRunsLive = Layer.effect(WaChunkRuns, WaChunkRunner).pipe(Layer.provide(WaChunkRunner.Default))
