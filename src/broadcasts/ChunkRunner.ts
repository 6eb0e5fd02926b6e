import { Duration, Effect, FiberSet, Schedule } from "effect"
import { encodeJson } from "../actors/runtime/transport.ts"
import { Nats } from "../bus/Nats.ts"
import { AppConfig } from "../config/AppConfig.ts"
import type { MessageContent } from "../domain/content.ts"
import type { GatewayErrorRecord } from "../gateway/RcsGateway.ts"
import { SendDispatcher } from "../messaging/SendDispatcher.ts"
import { MAX_SEND_ATTEMPTS, retryDelay } from "../messaging/sendRetries.ts"
import { BotsCache } from "../storage/BotsCache.ts"
import { BroadcastsRepo, type TargetOutcome } from "./BroadcastsRepo.ts"
import { CHUNK_TARGETS, CHUNK_WINDOW, chunkKey, type ChunkOrder, PROGRESS_EVERY_MS } from "./chunking.ts"
import { progressOf, progressSubject } from "./progress.ts"

interface Target {
  readonly targetNo: number
  readonly phone: string
  readonly messageId: string
}

/** A target claimed by a node that stopped before recording its outcome: it may have left. */
const unconfirmed = (messageId: string): GatewayErrorRecord => ({
  success: false,
  message: "send not confirmed",
  detail: "The node sending this message stopped before the gateway's answer was recorded; it may have reached the recipient, so it is not sent again.",
  category: "unknown",
  retryable: false,
  message_id: messageId
})

/**
 * Sends broadcast chunks for the sender actors this node owns, through the bots' lanes (so a
 * broadcast and single sends share the bot's throughput). A chunk is sent slice by slice; each
 * slice is claimed in `broadcast_chunks` before it leaves and its outcomes are written in one
 * statement after, so whoever runs the chunk again (after a crash) sends only what was never
 * claimed and fails, as unconfirmed, what was claimed and has no outcome: no target reaches the
 * gateway twice, none is skipped. Gateway failures (category `gateway`) are sent again with the
 * single sends' backoff; everything else is the target's outcome.
 */
export class ChunkRunner extends Effect.Service<ChunkRunner>()("herald/broadcasts/ChunkRunner", {
  scoped: Effect.gen(function*() {
    const repo = yield* BroadcastsRepo
    const dispatcher = yield* SendDispatcher
    const bots = yield* BotsCache
    const config = yield* AppConfig
    const nats = yield* Nats
    const fibers = yield* FiberSet.make()
    const running = new Set<string>()
    const perBot = new Map<string, Effect.Semaphore>()
    const progressAt = new Map<string, number>()
    // A claim this old with targets still unanswered belongs to a node that stopped: a slice's
    // claim is renewed before each attempt, and an attempt lasts at most one gateway timeout after
    // its longest backoff (a margin covers the wait in the bot's lane).
    const staleAfterMs = config.gatewayTimeoutMs + Duration.toMillis(retryDelay(MAX_SEND_ATTEMPTS - 1)) + 5_000

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

    /** A slice of a paced bot is about half a second of its throughput. */
    const sliceSize = (rate: number) => rate === 0 ? CHUNK_TARGETS : Math.max(1, Math.min(CHUNK_TARGETS, Math.ceil(rate / 2)))

    /**
     * Sends a slice; outcomes are written as they become final, so a target waiting out a
     * gateway backoff holds back no other's.
     */
    /**
     * Publishes the broadcast's counters (core NATS, for live progress) unless this node did less
     * than PROGRESS_EVERY_MS ago. Best effort: a lost update is superseded by the next.
     */
    const publishProgress = (broadcastId: string) =>
      Effect.gen(function*() {
        const now = Date.now()
        if (now - (progressAt.get(broadcastId) ?? 0) < PROGRESS_EVERY_MS) return
        // One entry per broadcast this node sent for; forgotten wholesale now and then.
        if (progressAt.size > 10_000) progressAt.clear()
        progressAt.set(broadcastId, now)
        const counters = yield* repo.counters(broadcastId)
        if (counters === undefined) return
        const { nc } = yield* nats.connected
        nc.publish(progressSubject(config.natsPrefix, broadcastId), encodeJson(progressOf(broadcastId, counters)))
      }).pipe(Effect.catchAll(() => Effect.void))

    const sendSlice = (order: ChunkOrder, botId: string, content: MessageContent, price: string, slice: ReadonlyArray<Target>) =>
      Effect.gen(function*() {
        let remaining = slice
        for (let attempt = 1; remaining.length > 0; attempt++) {
          const answers = yield* dispatcher.sendAll(
            botId,
            order.accountId,
            remaining.map((t) => ({ messageId: t.messageId, to: t.phone, content, attempt }))
          )
          const again: Array<Target> = []
          const outcomes: Array<TargetOutcome> = []
          answers.forEach((answer, i) => {
            const target = remaining[i]!
            if (answer._tag === "Accepted") outcomes.push({ targetNo: target.targetNo, status: "sent", error: null })
            else if (answer._tag === "Rejected" && answer.error.retryable && attempt < MAX_SEND_ATTEMPTS) again.push(target)
            else outcomes.push({ targetNo: target.targetNo, status: "failed", error: answer.error })
          })
          yield* repo.recordOutcomes({ broadcastId: order.broadcastId, accountId: order.accountId, price, outcomes })
          yield* publishProgress(order.broadcastId)
          remaining = again
          if (again.length > 0) {
            yield* Effect.sleep(retryDelay(attempt))
            yield* repo.claim(order.broadcastId, order.chunkNo, again[again.length - 1]!.targetNo)
          }
        }
      })

    /** The chunk's targets still to send, after failing those a stopped node left unconfirmed. */
    const leftToSend = (order: ChunkOrder, price: string): Effect.Effect<ReadonlyArray<Target>, unknown> =>
      Effect.gen(function*() {
        const claim = yield* repo.chunkClaim(order.broadcastId, order.chunkNo)
        const pending = yield* repo.pendingTargets(order.broadcastId, order.first, order.last)
        if (claim === undefined) return pending
        const unsure = pending.filter((t) => t.targetNo <= claim.claimedUpto)
        const rest = pending.filter((t) => t.targetNo > claim.claimedUpto)
        if (unsure.length === 0) return rest
        if (claim.ageMs < staleAfterMs) {
          // Possibly still being sent by the node that had the chunk before: wait for it.
          yield* Effect.sleep(Duration.millis(staleAfterMs - claim.ageMs))
          return yield* leftToSend(order, price)
        }
        yield* repo.recordOutcomes({
          broadcastId: order.broadcastId,
          accountId: order.accountId,
          price,
          outcomes: unsure.map((t) => ({ targetNo: t.targetNo, status: "failed", error: unconfirmed(t.messageId) }))
        })
        return rest
      })

    /**
     * Sends what is left of the chunk. `leftToSend` runs before a permit is taken: waiting out a
     * stopped node's claim must not hold back the bot's other chunks.
     */
    const runChunk = (order: ChunkOrder, botId: string, permits: Effect.Semaphore) =>
      Effect.gen(function*() {
        const header = yield* repo.header(order.broadcastId)
        if (header === undefined) return
        const toSend = yield* leftToSend(order, header.price)
        yield* permits.take(1)
        yield* Effect.addFinalizer(() => permits.release(1))
        const size = sliceSize(yield* rateOf(order.accountId, botId))
        for (let start = 0; start < toSend.length; start += size) {
          const slice = toSend.slice(start, start + size)
          const status = yield* repo.status(order.broadcastId)
          if (status === undefined) return
          if (status === "cancelled") return yield* repo.cancelPending(order.broadcastId, slice[0]!.targetNo, order.last)
          yield* repo.claim(order.broadcastId, order.chunkNo, slice[slice.length - 1]!.targetNo)
          yield* sendSlice(order, botId, header.content, header.price, slice)
        }
      })

    /**
     * Runs a chunk in the background (unless this node runs it already); `finished` is called
     * once every target of it has an outcome.
     */
    const start = (order: ChunkOrder, botId: string, finished: Effect.Effect<void>) =>
      Effect.gen(function*() {
        const key = chunkKey(order)
        if (running.has(key)) return
        running.add(key)
        const permits = yield* permitsOf(botId, yield* rateOf(order.accountId, botId))
        yield* FiberSet.run(
          fibers,
          Effect.scoped(runChunk(order, botId, permits)).pipe(
            Effect.tapErrorCause((cause) => Effect.logWarning("broadcast chunk failed; trying again", { broadcast_id: order.broadcastId, chunk: order.chunkNo, cause })),
            Effect.retry(Schedule.exponential(Duration.millis(200)).pipe(Schedule.union(Schedule.spaced(Duration.seconds(5))))),
            Effect.zipRight(finished),
            Effect.ensuring(Effect.sync(() => running.delete(key)))
          )
        )
      })

    const isRunning = (order: { readonly broadcastId: string; readonly chunkNo: number }) => running.has(chunkKey(order))

    return { start, isRunning } as const
  }),
  dependencies: [BroadcastsRepo.Default, BotsCache.Default]
}) {}
