import { Duration, Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import type { LeaseGuard } from "../actors/runtime/leaseGuard.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { checkContent } from "../domain/contentLimits.ts"
import type { MessageContent } from "../domain/content.ts"
import type { GatewayErrorRecord } from "../domain/gatewayError.ts"
import { SendDispatcher } from "../messaging/SendDispatcher.ts"
import { MAX_SEND_ATTEMPTS, retryDelay } from "../messaging/sendRetries.ts"
import { BotsCache } from "../bots/BotsCache.ts"
import { personalise } from "../templates/placeholders.ts"
import { MessageBatches } from "../webhooks/MessageBatches.ts"
import { BroadcastsRepo } from "./BroadcastsRepo.ts"
import { BroadcastTargets, type Listening, type PendingTarget, type TargetOutcome } from "./BroadcastTargets.ts"
import type { ChunkOrder } from "../messaging/chunkProtocol.ts"
import { makeChunkRuns, PartitionGone, untilWritten } from "./chunkRuns.ts"
import { ChunkRuns } from "../messaging/ChunkRuns.ts"
import { CHUNK_TARGETS, CHUNK_WINDOW } from "./chunking.ts"
import { BroadcastProgress } from "./progress.ts"

type Target = PendingTarget

/**
 * One run of a chunk on this node: the sender partition's lease it runs under (checked before each
 * slice and by the bot's lane before each send) and the token naming its claim.
 */
interface Run {
  readonly order: ChunkOrder
  readonly botId: string
  readonly lease: LeaseGuard
  readonly id: string
}


type Header = NonNullable<Effect.Effect.Success<ReturnType<BroadcastsRepo["header"]>>>

/** A personalised text that breaks an RCS limit once this contact's values are in: not sent. */
const personalisedTooLong = (errors: ReadonlyArray<string>): GatewayErrorRecord => ({
  success: false,
  message: "personalised content breaks RCS limits",
  detail: `Filled with this contact's values, the template breaks: ${errors.join("; ")}. Shorten the contact's values or the template's text.`,
  category: "content",
  retryable: false
})

/**
 * What one target is sent: the broadcast's content as it is, or, for a personalised broadcast,
 * filled with the target's contact values and the broadcast's defaults (docs/broadcasts.md,
 * Personalisation), then checked against the RCS limits again.
 */
const contentFor = (header: Header, target: Target): { readonly content: MessageContent } | { readonly refused: GatewayErrorRecord } => {
  if (header.variables === null) return { content: header.content }
  const content = personalise(header.content, target.vars, header.variables)
  const { errors } = checkContent(content)
  return errors.length === 0 ? { content } : { refused: personalisedTooLong(errors) }
}

/**
 * A target sent again after its node stopped (no report in the window), whose new send the gateway
 * did not confirm either.
 */
const resentUnconfirmed = (error: GatewayErrorRecord): GatewayErrorRecord => ({
  ...error,
  message: "send not confirmed",
  detail: "The node sending this message stopped before the gateway's answer was recorded, no delivery report came, and the gateway " +
    "did not confirm the send made again with the same message_id either. A delivery report arriving later still records it as delivered.",
  retryable: false
})

/** In doubt when its broadcast was cancelled: not sent again, since sending was to stop. */
const cancelledInDoubt = (messageId: string): GatewayErrorRecord => ({
  success: false,
  message: "send not confirmed",
  detail: "The node sending this message stopped before the gateway's answer was recorded, no delivery report came, and the broadcast " +
    "was cancelled before it could be sent again. A delivery report arriving later still records it as delivered.",
  category: "unknown",
  retryable: false,
  message_id: messageId
})

/**
 * Sends broadcast chunks for the sender actors this node owns, through the bots' lanes (so a
 * broadcast and single sends share the bot's throughput). A chunk is sent slice by slice; each
 * slice is claimed in `broadcast_chunks` before it leaves and its outcomes are written in one
 * statement after. Gateway failures (category `gateway`) are sent again with the single sends'
 * backoff; an answer that never came makes the target unconfirmed; everything else is the
 * target's outcome. A target stays in doubt (claimed and pending, or unconfirmed) until the
 * gateway's delivery report says what became of it (GatewayReports), or the report window
 * (HERALD_BROADCAST_REPORT_WINDOW_MS) passes: then a target a stopped node had claimed is sent
 * again with the same message_id, which the gateway drops if it took the first send, and an
 * unconfirmed one is failed. The chunk is finished only once no target of it is in doubt, so the
 * broadcast's completion carries final counters (docs/broadcasts.md, Restart safety).
 */
export class ChunkRunner extends Effect.Service<ChunkRunner>()("herald/broadcasts/ChunkRunner", {
  scoped: Effect.gen(function*() {
    const broadcasts = yield* BroadcastsRepo
    const repo = yield* BroadcastTargets
    const dispatcher = yield* SendDispatcher
    const bots = yield* BotsCache
    const config = yield* AppConfig
    const progress = yield* BroadcastProgress
    const batches = yield* MessageBatches
    const runs = yield* makeChunkRuns("broadcast", config)
    const busyWhile = runs.busyWhile
    const perBot = new Map<string, Effect.Semaphore>()
    // A claim this old belongs to no node still sending it: a slice's claim is renewed before each
    // attempt, and an attempt lasts at most one gateway timeout after its longest backoff (a
    // margin covers the wait in the bot's lane).
    const staleAfterMs = config.gatewayTimeoutMs + Duration.toMillis(retryDelay(MAX_SEND_ATTEMPTS - 1)) + 5_000
    const reportWindowMs = config.broadcastReportWindowMs

    const rateOf = (accountId: string, botId: string) =>
      Effect.map(bots.find(accountId, botId), (bot) => bot?.throughput ?? config.botThroughputDefault)

    /**
     * Chunks of one bot sent at once on this node: enough to keep an unlimited bot's lane full,
     * few enough that a paced bot's claimed slice leaves soon after its claim.
     */
    const permitsOf = (botId: string, rate: number) =>
      Effect.gen(function*() {
        let semaphore = perBot.get(botId)
        if (semaphore === undefined) {
          semaphore = yield* Effect.makeSemaphore(rate === 0 ? CHUNK_WINDOW : Math.min(CHUNK_WINDOW, Math.max(1, Math.ceil((rate * 2) / CHUNK_TARGETS))))
          perBot.set(botId, semaphore)
        }
        return semaphore
      })

    /**
     * Records outcomes; for an account with endpoints that opted in to broadcast messages' events
     * (asked of the cached subscriptions each time: a change takes effect at the next statement),
     * the same statement stages them, and the batcher is told once it is committed.
     */
    const record = (run: Run, header: Header, outcomes: ReadonlyArray<TargetOutcome>) =>
      Effect.gen(function*() {
        if (outcomes.length === 0) return
        const listening: Listening = { botId: run.botId, listeners: yield* batches.listeners(run.order.accountId, run.botId) }
        yield* repo.recordOutcomes({ broadcastId: run.order.broadcastId, accountId: run.order.accountId, price: header.price, outcomes, listening })
        if (listening.listeners.length > 0) yield* batches.staged
      }).pipe(
        Effect.tapError((error) => Effect.logWarning("broadcast outcomes not written yet; trying again", { broadcast_id: run.order.broadcastId, chunk: run.order.chunkNo, error: error.message })),
        Effect.retry(untilWritten)
      )

    /** A slice of a paced bot is about half a second of its throughput. */
    const sliceSize = (rate: number) => rate === 0 ? CHUNK_TARGETS : Math.max(1, Math.min(CHUNK_TARGETS, Math.ceil(rate / 2)))

    /**
     * Sends a slice; outcomes are written as they become final, so a target waiting out a
     * gateway backoff holds back no other's. `resent`: these targets were claimed by a node that
     * stopped, and are sent again.
     */
    const sendSlice = (run: Run, header: Header, slice: ReadonlyArray<Target>, resent: boolean) =>
      Effect.gen(function*() {
        const { botId, order } = run
        const contents = new Map<number, MessageContent>()
        const refused: Array<TargetOutcome> = []
        for (const target of slice) {
          const made = contentFor(header, target)
          if ("content" in made) contents.set(target.targetNo, made.content)
          else refused.push({ targetNo: target.targetNo, status: "failed", error: made.refused })
        }
        if (refused.length > 0) {
          yield* record(run, header, refused)
          yield* progress.changed(order.accountId, order.broadcastId)
        }
        let remaining = refused.length === 0 ? slice : slice.filter((t) => contents.has(t.targetNo))
        for (let attempt = 1; remaining.length > 0; attempt++) {
          const answers = yield* dispatcher.sendAll(
            botId,
            order.accountId,
            remaining.map((t) => ({ messageId: t.messageId, to: t.phone, content: contents.get(t.targetNo)!, attempt })),
            run.lease
          )
          const again: Array<Target> = []
          const outcomes: Array<TargetOutcome> = []
          const unsent: Array<Target> = []
          answers.forEach((answer, i) => {
            const target = remaining[i]!
            if (answer === undefined) unsent.push(target)
            else if (answer._tag === "Accepted") outcomes.push({ targetNo: target.targetNo, status: "sent", error: null })
            else if (answer._tag === "Unconfirmed") {
              outcomes.push({ targetNo: target.targetNo, status: "unconfirmed", error: resent ? resentUnconfirmed(answer.error) : answer.error })
            } else if (answer.error.retryable && attempt < MAX_SEND_ATTEMPTS) again.push(target)
            else outcomes.push({ targetNo: target.targetNo, status: "failed", error: answer.error })
          })
          yield* record(run, header, outcomes)
          yield* progress.changed(order.accountId, order.broadcastId)
          if (unsent.length > 0) {
            // The lane sends in order: on a first try the targets that never left are the end of
            // the slice, and the claim comes back to just before them. Sent before, they stay in doubt.
            const sentUpto = attempt === 1 ? Math.min(...unsent.map((t) => t.targetNo)) - 1 : slice[slice.length - 1]!.targetNo
            return yield* stopRun(run, sentUpto)
          }
          remaining = again
          if (again.length > 0) {
            if (runs.stopping()) return yield* stopRun(run, slice[slice.length - 1]!.targetNo)
            yield* Effect.sleep(retryDelay(attempt))
            yield* Effect.catchAll(run.lease.current, () => stopRun(run, slice[slice.length - 1]!.targetNo))
            yield* repo.claim(order.broadcastId, order.chunkNo, again[again.length - 1]!.targetNo, run.id).pipe(Effect.retry(untilWritten))
          }
        }
      })

    /**
     * The run ends because this node gave the bot's partition up: its claim is given back (sent up
     * to `sentUpto`), so the next owner, told to run the chunk, sends the rest at once.
     */
    const stopRun = (run: Run, sentUpto: number) =>
      repo.releaseClaim(run.order.broadcastId, run.order.chunkNo, sentUpto, run.id).pipe(
        Effect.retry(untilWritten),
        Effect.zipRight(Effect.fail(new PartitionGone({ message: `the partition of bot ${run.botId} left this node` })))
      )

    /** Sends targets in slices of the bot's size, each claimed first under a current lease; stops at a cancel. */
    const sendInSlices = (run: Run, header: Header, targets: ReadonlyArray<Target>, resent: boolean) =>
      Effect.gen(function*() {
        const { botId, order } = run
        const size = sliceSize(yield* rateOf(order.accountId, botId))
        for (let start = 0; start < targets.length; start += size) {
          const slice = targets.slice(start, start + size)
          const status = yield* broadcasts.status(order.broadcastId)
          if (status === undefined) return
          if (status === "cancelled") return yield* cancelRest(run, header, slice[0]!.targetNo, resent ? targets.slice(start) : [])
          if (runs.stopping()) return yield* busyWhile(stopRun(run, slice[0]!.targetNo - 1))
          yield* Effect.catchAll(run.lease.current, () => stopRun(run, slice[0]!.targetNo - 1))
          yield* busyWhile(Effect.zipRight(
            repo.claim(order.broadcastId, order.chunkNo, slice[slice.length - 1]!.targetNo, run.id),
            sendSlice(run, header, slice, resent)
          ))
        }
      })

    /**
     * A cancel stops what has not left: targets never sent are cancelled; targets in doubt being
     * sent again are not sent (sending was to stop) and are failed as not confirmed.
     */
    const cancelRest = (run: Run, header: Header, from: number, inDoubt: ReadonlyArray<Target>) =>
      inDoubt.length > 0
        ? record(run, header, inDoubt.map((t) => ({ targetNo: t.targetNo, status: "failed", error: cancelledInDoubt(t.messageId) })))
        : repo.cancelPending(run.order.broadcastId, from, run.order.last)

    /**
     * Targets a node claimed and left without an outcome (it stopped): once no node can still be
     * sending them and the report window has passed with no delivery report (a report would have
     * given them their outcome), they are sent again with the same message_id. A claim still
     * fresh means a node may still be sending this chunk: nothing of it is touched until it is
     * stale. Runs before a permit is taken: waiting must not hold back the bot's other chunks.
     */
    const resolveInDoubt = (run: Run, header: Header, permits: Effect.Semaphore): Effect.Effect<void, unknown> =>
      Effect.gen(function*() {
        const { order } = run
        const claim = yield* repo.chunkClaim(order.broadcastId, order.chunkNo)
        if (claim === undefined) return
        const inDoubt = (yield* repo.pendingTargets(order.broadcastId, order.first, order.last)).filter((t) => t.targetNo <= claim.claimedUpto)
        const wait = (inDoubt.length > 0 ? Math.max(staleAfterMs, reportWindowMs) : staleAfterMs) - claim.ageMs
        if (wait > 0) {
          yield* Effect.sleep(Duration.millis(wait))
          return yield* resolveInDoubt(run, header, permits)
        }
        if (inDoubt.length === 0) return
        yield* Effect.logInfo("sending again broadcast targets a stopped node left without an outcome or a report", {
          broadcast_id: order.broadcastId,
          chunk: order.chunkNo,
          targets: inDoubt.length
        })
        yield* permits.withPermits(1)(sendInSlices(run, header, inDoubt, true))
      })

    /**
     * Waits until the chunk's unconfirmed targets have had the report window for their delivery
     * reports (which give them their outcome meanwhile), then fails those still without one.
     */
    const settleUnconfirmed = (run: Run): Effect.Effect<void, unknown> =>
      Effect.gen(function*() {
        const { order } = run
        const left = yield* repo.unconfirmedIn(order.broadcastId, order.first, order.last, reportWindowMs)
        if (left.count === 0) return
        if (left.waitMs > 0) yield* Effect.sleep(Duration.millis(Math.ceil(left.waitMs)))
        const listeners = yield* batches.listeners(order.accountId, run.botId)
        yield* repo.failUnconfirmed(order.broadcastId, order.first, order.last, reportWindowMs, { accountId: order.accountId, botId: run.botId, listeners })
        if (listeners.length > 0) yield* batches.staged
        yield* progress.changed(order.accountId, order.broadcastId)
        return yield* settleUnconfirmed(run)
      })

    /** Sends what is left of the chunk, then settles what is in doubt. */
    const runChunk = (run: Run, permits: Effect.Semaphore) =>
      Effect.gen(function*() {
        const { order } = run
        const header = yield* broadcasts.header(order.broadcastId)
        if (header === undefined) return
        yield* resolveInDoubt(run, header, permits)
        const toSend = yield* repo.pendingTargets(order.broadcastId, order.first, order.last)
        if (toSend.length > 0) yield* permits.withPermits(1)(sendInSlices(run, header, toSend, false))
        yield* settleUnconfirmed(run)
      })

    /**
     * Runs a chunk in the background (unless this node runs it already) under the sender
     * partition's lease; `finished` is called once every target of it has an outcome. If the node
     * gives the partition up meanwhile, the run stops before its next send and `moved` tells the
     * partition's next owner to run the chunk.
     */
    const start = (order: ChunkOrder, botId: string, lease: LeaseGuard, finished: Effect.Effect<void>, moved: Effect.Effect<void>) =>
      Effect.gen(function*() {
        if (runs.skip(order)) return
        const permits = yield* permitsOf(botId, yield* rateOf(order.accountId, botId))
        yield* runs.start(order, runChunk({ order, botId, lease, id: randomUUID() }, permits), finished, moved)
      })

    return { start, isRunning: runs.isRunning } as const
  }),
  dependencies: [BroadcastsRepo.Default, BroadcastTargets.Default, BotsCache.Default, BroadcastProgress.Default, MessageBatches.Default, SendDispatcher.Default]
}) {}

/** The sender's ChunkRuns port (messaging/ChunkRuns.ts), run by this node's ChunkRunner. */
export const ChunkRunsLive = Layer.effect(ChunkRuns, ChunkRunner).pipe(Layer.provide(ChunkRunner.Default))
