import { SqlClient } from "@effect/sql"
import { Duration, Effect, Schedule, Schema } from "effect"
import { randomUUID } from "node:crypto"
import type { ActorContext } from "../actors/runtime/ActorKind.ts"
import { ActorClient, ActorKind } from "../actors/runtime/index.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { MessageContentSchema } from "../domain/content.ts"
import { GatewayErrorRecord } from "../domain/gatewayError.ts"
import type { SendOutcome } from "../gateway/rcs.ts"
import { Subscriptions } from "../webhooks/Subscriptions.ts"
import { Webhooks } from "../webhooks/Webhooks.ts"
import { BroadcastAddress, ChunkDone, ChunkOrder, chunkKey, SendChunk, SenderAddress } from "./chunkProtocol.ts"
import { ChunkRuns } from "./ChunkRuns.ts"
import { messageToSend, stageAttempt, stageQueued } from "./MessagesRepo.ts"
import { SendDispatcher } from "./SendDispatcher.ts"
import { MAX_SEND_ATTEMPTS, retryDelay } from "./sendRetries.ts"
import { stageCharge } from "../wallet/ledgerWrites.ts"

/** What a send needs to reach the gateway again (a retry, or a re-send after a takeover). */
const Message = Schema.Struct({
  messageId: Schema.String,
  accountId: Schema.String,
  to: Schema.String,
  content: MessageContentSchema
})
type Message = typeof Message.Type

/** A new send, from the API or an auto-reply. `replyTo` is the waiting caller's inbox. */
export class Send extends Schema.TaggedClass<Send>()("Send", {
  message: Message,
  templateId: Schema.NullOr(Schema.String),
  source: Schema.Literal("api", "auto_reply"),
  price: Schema.Number,
  replyTo: Schema.NullOr(Schema.String)
}) {}

const Outcome = Schema.Union(
  Schema.TaggedStruct("Accepted", { at: Schema.Number }),
  Schema.TaggedStruct("Rejected", { error: GatewayErrorRecord }),
  Schema.TaggedStruct("Unconfirmed", { error: GatewayErrorRecord })
)

/** The gateway's answer to attempt `attempt`, reported by the node that sent it. */
export class Answered extends Schema.TaggedClass<Answered>()("Answered", {
  messageId: Schema.String,
  attempt: Schema.Int,
  outcome: Outcome,
  at: Schema.Number
}) {}

/** A gateway failure's backoff is over: send again (a durable timer). */
export class Retry extends Schema.TaggedClass<Retry>()("Retry", { message: Message, attempt: Schema.Int }) {}

/** Looks for sends whose answer never came back (their node died): a durable timer. */
export class Sweep extends Schema.TaggedClass<Sweep>()("Sweep", {}) {}

/** Every target of the chunk has its outcome (from the node that sent it). */
export class ChunkFinished extends Schema.TaggedClass<ChunkFinished>()("ChunkFinished", { broadcastId: Schema.String, chunkNo: Schema.Int }) {}

export const SenderCommand = Schema.Union(Send, Answered, Retry, Sweep, SendChunk, ChunkFinished)
export type SenderCommand = typeof SenderCommand.Type

/** A message between its Send and its final answer: what applying the answer needs, but the content. */
const InFlight = Schema.Struct({
  attempt: Schema.Int,
  /** When the current attempt went out (or is due, while a retry waits). */
  since: Schema.Number,
  replyTo: Schema.NullOr(Schema.String),
  accountId: Schema.String,
  to: Schema.String,
  price: Schema.Number
})
type InFlight = typeof InFlight.Type

const SenderState = Schema.Struct({
  inFlight: Schema.Record({ key: Schema.String, value: InFlight }),
  sweepAt: Schema.NullOr(Schema.Number),
  /** Broadcast chunks handed to this bot and not finished, by chunkKey. */
  chunks: Schema.optionalWith(Schema.Record({ key: Schema.String, value: ChunkOrder }), { default: () => ({}) })
})
type SenderState = typeof SenderState.Type


/** What a waiting caller is told (over its inbox) once the send's outcome is committed. */
export type SendReply =
  | { readonly _tag: "Sent"; readonly messageId: string }
  | { readonly _tag: "Failed"; readonly error: GatewayErrorRecord }

/** The sender's own address, for the commands it tells itself (an answer, a moved chunk). */
const Self = ActorKind.address(SenderAddress.name, SenderCommand)

/** What every handler of the sender works with: its services, and the steps its rules share. */
const senderTools = (ctx: ActorContext<SenderCommand>) =>
  Effect.gen(function*() {
    const dispatcher = yield* SendDispatcher
    const client = yield* ActorClient
    const config = yield* AppConfig
    const webhooks = yield* Webhooks
    const subscriptions = yield* Subscriptions
    const sql = yield* SqlClient.SqlClient
    const chunks = yield* ChunkRuns
    const botId = ctx.key
    // An attempt unanswered this long was lost with its node (the gateway call itself gives up
    // after gatewayTimeoutMs and reports Unconfirmed).
    const lostAfterMs = config.gatewayTimeoutMs + 5_000
    // A lost attempt may have reached the gateway (its node was cut off from NATS after the
    // request left, or died before its answer was told): it is sent again only once its delivery
    // report has had the broadcasts' report window to come, so a recipient is never sent a message
    // twice; a report that came settles it as sent.
    const resendAfterMs = lostAfterMs + config.broadcastReportWindowMs

    /**
     * Tells actors what a send or a chunk came to, retried for a while; given up on, the sweep
     * finds the work unfinished and does it again.
     */
    const told = <E>(tell: Effect.Effect<unknown, E>, lost: string, about: Record<string, unknown>): Effect.Effect<void> =>
      tell.pipe(
        Effect.retry(Schedule.exponential(Duration.millis(50)).pipe(Schedule.upTo(Duration.seconds(20)))),
        Effect.catchAll((error) => Effect.logWarning(lost, { ...about, reason: String(error) })),
        Effect.asVoid
      )

    const report = (messageId: string, attempt: number) => (outcome: SendOutcome): Effect.Effect<void> =>
      told(
        client.send(Self, botId, new Answered({ messageId, attempt, outcome, at: Date.now() }), { msgId: `answer-${messageId}-${attempt}` }),
        "send outcome not reported; the sweep will send again",
        { message_id: messageId }
      )

    // A gateway send starts once the command deciding it is committed: never for a message whose
    // row could not be written, and a command tried again does not send again. A send lost with
    // its node after the commit is found by the sweep.
    const dispatch = (message: Message, attempt: number): void =>
      ctx.afterCommit(dispatcher.submit({ ...message, botId, attempt, lease: ctx.lease, report: report(message.messageId, attempt) }))

    const withSweep = (next: SenderState): SenderState => {
      if (next.sweepAt !== null || (Object.keys(next.inFlight).length === 0 && Object.keys(next.chunks).length === 0)) return next
      const at = Date.now() + lostAfterMs
      ctx.schedule(new Sweep(), { at: new Date(at) }, "sweep")
      return { ...next, sweepAt: at }
    }

    const without = (state: SenderState, messageId: string): SenderState => {
      const { [messageId]: _, ...inFlight } = state.inFlight
      return { ...state, inFlight }
    }

    const emit = (accountId: string, type: "message.sent" | "message.failed", data: unknown) =>
      Effect.map(subscriptions.wants(accountId, type, botId), (wanted) => {
        if (wanted) ctx.persist(webhooks.emit({ accountId, type, botId, data }).pipe(Effect.asVoid, Effect.catchTag("NatsUnavailable", Effect.die)))
      })
    const answer = (entry: InFlight, reply: SendReply) => {
      if (entry.replyTo !== null) ctx.notify(entry.replyTo, reply)
    }

    /** The gateway took the attempt: recorded sent (a delivery report already there stays), charged once. */
    const sent = (messageId: string, entry: InFlight, attempt: number, at: string) =>
      Effect.gen(function*() {
        stageAttempt(ctx, messageId, attempt, { status: "sent", sentAt: at })
        stageCharge(ctx, { accountId: entry.accountId, amount: entry.price, reference: messageId })
        yield* emit(entry.accountId, "message.sent", { message_id: messageId, bot_id: botId, to: entry.to, status: "sent" })
        answer(entry, { _tag: "Sent", messageId })
      })

    /**
     * Runs a chunk on this node (once this command is committed); once done, the broadcast and
     * this actor are told. Stopped because the partition left this node, the chunk is handed to
     * whichever node owns it now (its claim given back, so it sends the rest at once).
     */
    const runChunk = (order: ChunkOrder): void =>
      ctx.afterCommit(chunks.start(
        order,
        botId,
        ctx.lease,
        told(
          Effect.zipRight(
            client.send(BroadcastAddress, order.broadcastId, new ChunkDone({ chunkNo: order.chunkNo }), { msgId: `chunk-done-${chunkKey(order)}` }),
            client.send(Self, botId, new ChunkFinished({ broadcastId: order.broadcastId, chunkNo: order.chunkNo }), { msgId: `chunk-finished-${chunkKey(order)}` })
          ),
          "chunk end not reported; the sweep will run it again",
          { chunk: chunkKey(order) }
        ),
        told(
          client.send(Self, botId, new SendChunk({ order }), { msgId: `chunk-moved-${chunkKey(order)}-${randomUUID()}` }),
          "moved chunk not handed over; the sweep will run it again",
          { chunk: chunkKey(order) }
        )
      ))

    return { dispatcher, sql, chunks, botId, lostAfterMs, resendAfterMs, dispatch, withSweep, without, emit, answer, sent, runChunk } as const
  })

/**
 * `sender`: one actor per bot (key = bot_id). Every send of the bot goes through it: the actor
 * records the message, hands it to this node's SendDispatcher (which paces it at the bot's
 * upstream throughput) and applies the gateway's answer: sent (charged once), failed with the
 * Gateway error record, unconfirmed (never resent: the message may have left), or a gateway
 * failure, sent again with backoff. Only the messages in flight live in the state; the sweep
 * finds the ones whose answer never came (their node died or was cut off from NATS): one with a
 * delivery report is recorded sent, one without is sent again with the same message_id once the
 * report window has passed (the first attempt may have reached the gateway, which ignores a repeat:
 * waiting means the gateway is not asked twice for a message it took).
 */
export const SenderKind = ActorKind.make(SenderAddress.name, {
  command: SenderCommand,
  state: SenderState,
  initial: (): SenderState => ({ inFlight: {}, sweepAt: null, chunks: {} }),
  passivateAfter: Duration.seconds(30),
  handlers: {
    Send: (state, command, ctx) =>
      Effect.gen(function*() {
        const { botId, dispatch, withSweep } = yield* senderTools(ctx)
        const { message } = command
        if (state.inFlight[message.messageId] !== undefined) {
          // Delivered again after a takeover: its attempt was dispatched where it was committed,
          // and may have left; the sweep sends it again if no answer or report ever comes.
          return withSweep(state)
        }
        stageQueued(ctx, {
          messageId: message.messageId,
          accountId: message.accountId,
          botId,
          recipient: message.to,
          content: message.content,
          templateId: command.templateId,
          source: command.source,
          price: command.price
        })
        dispatch(message, 1)
        return withSweep({
          ...state,
          inFlight: {
            ...state.inFlight,
            [message.messageId]: { attempt: 1, since: Date.now(), replyTo: command.replyTo, accountId: message.accountId, to: message.to, price: command.price }
          }
        })
      }),
    Answered: (state, command, ctx) =>
      Effect.gen(function*() {
        const { sql, botId, without, emit, answer, sent } = yield* senderTools(ctx)
        const entry = state.inFlight[command.messageId]
        if (entry === undefined || entry.attempt !== command.attempt) return state
        const outcome = command.outcome
        const at = new Date(command.at).toISOString()
        const about = { message_id: command.messageId, bot_id: botId, to: entry.to }
        if (outcome._tag === "Accepted") {
          yield* sent(command.messageId, entry, command.attempt, at)
          return without(state, command.messageId)
        }
        const error = outcome.error
        if (outcome._tag === "Rejected" && error.retryable && command.attempt < MAX_SEND_ATTEMPTS) {
          const row = yield* messageToSend(sql, command.messageId)
          if (row === undefined) return without(state, command.messageId)
          const next = command.attempt + 1
          const due = command.at + Duration.toMillis(retryDelay(command.attempt))
          const message = { messageId: command.messageId, accountId: entry.accountId, to: entry.to, content: row.content }
          ctx.schedule(new Retry({ message, attempt: next }), { at: new Date(due) }, `retry-${command.messageId}`)
          return { ...state, inFlight: { ...state.inFlight, [command.messageId]: { ...entry, attempt: next, since: due } } }
        }
        if (outcome._tag === "Unconfirmed") {
          // It may have reached the recipient: not failed, not charged unless a delivery report comes.
          stageAttempt(ctx, command.messageId, command.attempt, { status: "unconfirmed", error })
        } else {
          stageAttempt(ctx, command.messageId, command.attempt, { status: "failed", failedAt: at, error })
          yield* emit(entry.accountId, "message.failed", { ...error, ...about, status: "failed" })
        }
        answer(entry, { _tag: "Failed", error })
        return without(state, command.messageId)
      }),
    Retry: (state, command, ctx) =>
      Effect.gen(function*() {
        const { dispatch } = yield* senderTools(ctx)
        const entry = state.inFlight[command.message.messageId]
        if (entry === undefined || entry.attempt !== command.attempt) return state
        dispatch(command.message, command.attempt)
        return { ...state, inFlight: { ...state.inFlight, [command.message.messageId]: { ...entry, since: Date.now() } } }
      }),
    Sweep: (state, _command, ctx) =>
      Effect.gen(function*() {
        const { dispatcher, sql, chunks, lostAfterMs, resendAfterMs, dispatch, withSweep, sent, runChunk } = yield* senderTools(ctx)
        const now = Date.now()
        const lost = Object.entries(state.inFlight).filter(([id, e]) => now - e.since >= lostAfterMs && !dispatcher.isHandling(id))
        const inFlight = { ...state.inFlight }
        for (const [id, entry] of lost) {
          const row = yield* messageToSend(sql, id)
          if (row === undefined) {
            delete inFlight[id]
            continue
          }
          if (row.status !== "queued") {
            // A delivery report came (GatewayReports moved the row): the gateway took the attempt.
            yield* sent(id, entry, entry.attempt, new Date(now).toISOString())
            delete inFlight[id]
            continue
          }
          // Its report may still come: wait out the window before sending it again.
          if (now - entry.since < resendAfterMs) continue
          dispatch({ messageId: id, accountId: entry.accountId, to: entry.to, content: row.content }, entry.attempt)
          inFlight[id] = { ...entry, since: now }
        }
        // Chunks this node does not run: their node stopped (or never got them). Run them here.
        for (const order of Object.values(state.chunks)) {
          if (!chunks.isRunning(order)) runChunk(order)
        }
        return withSweep({ ...state, inFlight, sweepAt: null })
      }),
    SendChunk: (state, command, ctx) =>
      Effect.gen(function*() {
        const { chunks, withSweep, runChunk } = yield* senderTools(ctx)
        const key = chunkKey(command.order)
        if (!chunks.isRunning(command.order)) runChunk(command.order)
        if (state.chunks[key] !== undefined) return state
        return withSweep({ ...state, chunks: { ...state.chunks, [key]: command.order } })
      }),
    ChunkFinished: (state, command) =>
      Effect.sync(() => {
        const key = chunkKey(command)
        if (state.chunks[key] === undefined) return state
        const { [key]: _, ...rest } = state.chunks
        return { ...state, chunks: rest }
      })
  }
})
