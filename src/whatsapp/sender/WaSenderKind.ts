import { Duration, Effect, Schedule, Schema } from "effect"
import { ActorClient, ActorKind } from "../../actors/runtime/index.ts"
import type { ActorContext } from "../../actors/runtime/ActorKind.ts"
import { AppConfig } from "../../config/AppConfig.ts"
import { GatewayErrorRecord } from "../../domain/gatewayError.ts"
import type { WaSendOutcome } from "../../gateway/wa.ts"
import { waUnconfirmed } from "../../gateway/cloud/CloudApiGateway.ts"
import { MAX_SEND_ATTEMPTS, retryDelay } from "../../messaging/sendRetries.ts"
import { Subscriptions } from "../../webhooks/Subscriptions.ts"
import { liveSubject, type MessageStatusEvent } from "../../live/liveSubjects.ts"
import { Webhooks } from "../../webhooks/Webhooks.ts"
import { statusEventData } from "../events.ts"
import { ConversationsRepo } from "../../conversations/ConversationsRepo.ts"
import { stageAttempt, stageQueued, WaMessagesRepo } from "../message/WaMessagesRepo.ts"
import { WA_THROUGHPUT_DEFAULT, WaNumbers } from "../numbers/WaNumbers.ts"
import { type Bucket, type Limit, msUntilToken, take } from "../../ratelimit/tokenBucket.ts"
import { WaDispatcher, type WaPayload } from "./WaDispatcher.ts"
import { WaChunkRuns } from "./WaChunkRuns.ts"
import { BroadcastAddress, ChunkDone, ChunkOrder, chunkKey, SendChunk } from "../../messaging/chunkProtocol.ts"
import { randomUUID } from "node:crypto"

const Content = Schema.Struct({
  type: Schema.Literal("text", "image", "video", "audio", "sticker", "document", "interactive", "template"),
  object: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

/** A send accepted by POST /api/v1/public/message (validated, window checked, balance checked). */
export class WaSend extends Schema.TaggedClass<WaSend>()("WaSend", {
  messageId: Schema.String,
  accountId: Schema.String,
  /** E.164. */
  to: Schema.String,
  /** The public type name, for events. */
  type: Schema.String,
  content: Content,
  templateId: Schema.NullOr(Schema.String),
  category: Schema.NullOr(Schema.String),
  callbackData: Schema.NullOr(Schema.String),
  price: Schema.Number
}) {}

/** Tokens may have come back: send what waits (a durable timer). */
export class WaPump extends Schema.TaggedClass<WaPump>()("WaPump", {}) {}

const Outcome = Schema.Union(
  Schema.TaggedStruct("Accepted", { wamid: Schema.String, at: Schema.Number }),
  Schema.TaggedStruct("Rejected", { error: GatewayErrorRecord }),
  Schema.TaggedStruct("Unconfirmed", { error: GatewayErrorRecord })
)

/** Meta's answer to attempt `attempt`, reported by the node that made it. */
export class WaAnswered extends Schema.TaggedClass<WaAnswered>()("WaAnswered", {
  messageId: Schema.String,
  attempt: Schema.Int,
  outcome: Outcome,
  at: Schema.Number
}) {}

/** A retryable failure's backoff is over: send again. */
export class WaRetry extends Schema.TaggedClass<WaRetry>()("WaRetry", { messageId: Schema.String, attempt: Schema.Int }) {}

/** Finds requests whose answer was lost with their node (a durable timer). */
export class WaSweep extends Schema.TaggedClass<WaSweep>()("WaSweep", {}) {}

/** An unconfirmed send heard nothing for 24 hours: it failed. */
export class WaExpire extends Schema.TaggedClass<WaExpire>()("WaExpire", { messageId: Schema.String }) {}

/** Every target of a campaign chunk has its outcome (from the node that sent it). */
export class WaChunkFinished extends Schema.TaggedClass<WaChunkFinished>()("WaChunkFinished", { broadcastId: Schema.String, chunkNo: Schema.Int }) {}

export const WaSenderCommand = Schema.Union(WaSend, WaPump, WaAnswered, WaRetry, WaSweep, WaExpire, SendChunk, WaChunkFinished)
type WaSenderCommand = typeof WaSenderCommand.Type

/** The kind's address: its answers come back to it (WaAnswered) without its type naming itself. */
const WaSenderAddress = { name: "wa_sender" as const, command: WaSenderCommand }

const InFlight = Schema.Struct({
  attempt: Schema.Int,
  /** When the current request went out (or is due, while a retry waits). */
  since: Schema.Number,
  /** A retry's timer is set: the request is not out, so a takeover must not call it lost. */
  retrying: Schema.Boolean
})

const WaSenderState = Schema.Struct({
  /** Accepted and not yet handed to Meta, in order: safe to send after any crash. */
  waiting: Schema.Array(Schema.String),
  /** Handed to Meta (or about to be, once the command that moved them here commits). */
  inFlight: Schema.Record({ key: Schema.String, value: InFlight }),
  /** The number's token bucket: pacing survives a takeover. */
  tokens: Schema.Number,
  refilledAt: Schema.Number,
  pumpAt: Schema.NullOr(Schema.Number),
  sweepAt: Schema.NullOr(Schema.Number),
  /** Campaign chunks handed to this number and not finished, by chunkKey: the sweep runs them again after a takeover. */
  chunks: Schema.optionalWith(Schema.Record({ key: Schema.String, value: ChunkOrder }), { default: () => ({}) })
})
type WaSenderState = typeof WaSenderState.Type

/** A send as its conversation's last message. */
const lastMessageOf = (send: WaSend) => ({
  direction: "outbound" as const,
  id: send.messageId,
  type: send.type,
  text: send.content.type === "text" && typeof send.content.object.body === "string" ? send.content.object.body : null,
  at: new Date().toISOString()
})

/** Requests to Meta in flight per number: bounds memory and sockets whatever the throughput. */
export const WA_MAX_IN_FLIGHT = 256

/** A number's pace: its throughput a second, in bursts of a tenth of a second (at least one message). */
export const paceOf = (throughput: number | undefined): Limit => {
  const rate = throughput ?? WA_THROUGHPUT_DEFAULT
  return { rate, capacity: Math.max(1, rate / 10) }
}

const without = (current: WaSenderState, messageId: string): WaSenderState => {
  const { [messageId]: _, ...inFlight } = current.inFlight
  return { ...current, inFlight }
}

/** What every handler of a number's sender uses: its services, the command's time, and the steps they share. */
const senderOf = (ctx: ActorContext<WaSenderCommand>) =>
  Effect.gen(function*() {
    const dispatcher = yield* WaDispatcher
    const chunks = yield* WaChunkRuns
    const numbers = yield* WaNumbers
    const client = yield* ActorClient
    const config = yield* AppConfig
    const messages = yield* WaMessagesRepo
    const conversations = yield* ConversationsRepo
    const webhooks = yield* Webhooks
    const subscriptions = yield* Subscriptions
    const phoneNumberId = ctx.key
    const lostAfterMs = config.gatewayTimeoutMs + 5_000
    const now = Date.now()

    const report = (messageId: string, attempt: number) => (outcome: WaSendOutcome): Effect.Effect<void> =>
      client.send(WaSenderAddress, phoneNumberId, new WaAnswered({ messageId, attempt, outcome, at: Date.now() }), { msgId: `wa-answer-${messageId}-${attempt}` }).pipe(
        Effect.retry(Schedule.exponential(Duration.millis(50)).pipe(Schedule.upTo(Duration.seconds(20)))),
        // Given up on: the sweep finds the message in flight and calls it unconfirmed.
        Effect.catchAll((error) => Effect.logWarning("WhatsApp send outcome not reported", { message_id: messageId, reason: String(error) })),
        Effect.asVoid
      )

    /** The payloads of messages about to go out: from memory, else (after a takeover) from their rows. */
    const payloadsOf = (ids: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const found = new Map<string, WaPayload>()
        const missing: Array<string> = []
        for (const id of ids) {
          const payload = dispatcher.payloadOf(id)
          if (payload === undefined) missing.push(id)
          else found.set(id, payload)
        }
        if (missing.length > 0) {
          const rows = yield* messages.payloads(missing)
          for (const row of rows) found.set(row.messageId, { to: row.recipient, content: row.content })
        }
        return found
      })

    const dispatch = (messageId: string, attempt: number, payload: WaPayload) =>
      ctx.afterCommit(dispatcher.submit({ phoneNumberId, messageId, payload, lease: ctx.lease, report: report(messageId, attempt) }))

    const withSweep = (next: WaSenderState): WaSenderState => {
      if (next.sweepAt !== null || (Object.keys(next.inFlight).length === 0 && Object.keys(next.chunks).length === 0)) return next
      const at = now + lostAfterMs
      ctx.schedule(new WaSweep(), { at: new Date(at) }, "sweep")
      return { ...next, sweepAt: at }
    }

    /** Hands waiting messages to Meta as the number's tokens and the in-flight bound allow. */
    const pump = (current: WaSenderState) =>
      Effect.gen(function*() {
        if (current.waiting.length === 0) return current
        const number = yield* numbers.find(phoneNumberId)
        const pace = paceOf(number?.throughput)
        const bucket: Bucket = { tokens: current.tokens, updatedAt: current.refilledAt }
        const room = WA_MAX_IN_FLIGHT - Object.keys(current.inFlight).length
        const taken = take(bucket, pace, Math.max(0, Math.min(room, current.waiting.length)), now)
        const leaving = current.waiting.slice(0, taken)
        const payloads = yield* payloadsOf(leaving)
        const inFlight = { ...current.inFlight }
        for (const id of leaving) {
          const payload = payloads.get(id)
          // No row: the send was never recorded (parked); nothing to send.
          if (payload === undefined) continue
          inFlight[id] = { attempt: 1, since: now, retrying: false }
          dispatch(id, 1, payload)
        }
        const waiting = current.waiting.slice(taken)
        let pumpAt = current.pumpAt
        // Out of tokens (not of room: an answer frees room and pumps): come back when one is due.
        if (waiting.length > 0 && taken < room) {
          const due = now + Math.max(1, msUntilToken(bucket, pace, now))
          if (pumpAt === null || pumpAt > due || pumpAt < now) {
            ctx.schedule(new WaPump(), { at: new Date(due) }, "pump")
            pumpAt = due
          }
        }
        return withSweep({ ...current, waiting, inFlight, tokens: bucket.tokens, refilledAt: now, pumpAt })
      })

    /** message.failed live (after the commit) and to the developer webhook, when the account has one. */
    const emitFailed = (accountId: string, messageId: string, error: GatewayErrorRecord) =>
      Effect.gen(function*() {
        const row = yield* messages.eventFields(messageId)
        if (row === undefined) return
        const failed: MessageStatusEvent = { message_id: messageId, status: "failed", callback_data: row.callbackData, occurred_at: new Date().toISOString() }
        ctx.notify(liveSubject(config.natsPrefix, accountId, "message_status"), failed)
        if (!(yield* subscriptions.wants(accountId, "message.failed", null, "whatsapp"))) return
        ctx.persist(webhooks.emit({
          accountId,
          type: "message.failed",
          botId: null,
          channel: "whatsapp",
          data: statusEventData({ messageId, ...row }, "failed", error)
        }).pipe(Effect.asVoid, Effect.catchTag("NatsUnavailable", Effect.die)))
      })

    const unconfirmed = (messageId: string, attempt: number, error: GatewayErrorRecord) => {
      stageAttempt(ctx, messageId, attempt, { status: "unconfirmed", error })
      ctx.schedule(new WaExpire({ messageId }), { after: Duration.millis(config.waUnconfirmedExpiryMs) }, `expire-${messageId}`)
    }

    /** Tells an actor what a chunk came to, retried for a while; given up on, the sweep runs the chunk again. */
    const told = (tell: Effect.Effect<unknown, unknown>, lost: string, order: ChunkOrder): Effect.Effect<void> =>
      tell.pipe(
        Effect.retry(Schedule.exponential(Duration.millis(50)).pipe(Schedule.upTo(Duration.seconds(20)))),
        Effect.catchAll((error) => Effect.logWarning(lost, { chunk: chunkKey(order), reason: String(error) })),
        Effect.asVoid
      )

    /**
     * Runs a campaign chunk on this node once this command is committed; once done, the campaign
     * and this actor are told. Stopped because the partition left this node, it is handed to the
     * partition's next owner.
     */
    const runChunk = (order: ChunkOrder): void =>
      ctx.afterCommit(chunks.start(
        order,
        phoneNumberId,
        ctx.lease,
        told(
          Effect.zipRight(
            client.send(BroadcastAddress, order.broadcastId, new ChunkDone({ chunkNo: order.chunkNo }), { msgId: `chunk-done-${chunkKey(order)}` }),
            client.send(WaSenderAddress, phoneNumberId, new WaChunkFinished({ broadcastId: order.broadcastId, chunkNo: order.chunkNo }), {
              msgId: `wa-chunk-finished-${chunkKey(order)}`
            })
          ),
          "campaign chunk end not reported; the sweep will run it again",
          order
        ),
        told(
          client.send(WaSenderAddress, phoneNumberId, new SendChunk({ order }), { msgId: `wa-chunk-moved-${chunkKey(order)}-${randomUUID()}` }),
          "moved campaign chunk not handed over; the sweep will run it again",
          order
        )
      ))

    return { numbers, dispatcher, chunks, messages, conversations, webhooks, phoneNumberId, lostAfterMs, now, payloadsOf, dispatch, withSweep, pump, emitFailed, unconfirmed, runChunk }
  })

/**
 * `wa_sender`: one actor per WhatsApp number (key = phone_number_id). Sends leave in the order
 * they were accepted, paced by the number's throughput. A message moves from `waiting` to
 * `inFlight` in a committed command before its request starts, so after any crash the actor
 * knows what may have reached Meta: waiting messages are sent, in-flight ones whose answer was
 * lost are never sent again (the Cloud API has no idempotency key) but become `unconfirmed`,
 * moved on by a later status webhook or failed after 24 hours. Failures Meta answers are
 * recorded with the Gateway error record; a request that never left, or a 5xx, is retried.
 */
export const WaSenderKind = ActorKind.make("wa_sender", {
  command: WaSenderCommand,
  state: WaSenderState,
  initial: (): WaSenderState => ({ waiting: [], inFlight: {}, tokens: 1, refilledAt: 0, pumpAt: null, sweepAt: null, chunks: {} }),
  passivateAfter: Duration.seconds(30),
  handlers: {
    WaSend: (state, command, ctx) =>
      Effect.gen(function*() {
        if (state.inFlight[command.messageId] !== undefined || state.waiting.includes(command.messageId)) return state
        const sender = yield* senderOf(ctx)
        stageQueued(ctx, {
          messageId: command.messageId,
          accountId: command.accountId,
          phoneNumberId: sender.phoneNumberId,
          recipient: command.to,
          type: command.type,
          content: command.content,
          templateId: command.templateId,
          category: command.category,
          callbackData: command.callbackData,
          price: command.price
        })
        sender.dispatcher.remember(command.messageId, { to: command.to, content: command.content })
        ctx.persist(sender.conversations.recordOutbound(sender.phoneNumberId, command.to, lastMessageOf(command)))
        return yield* sender.pump({ ...state, waiting: [...state.waiting, command.messageId] })
      }),

    WaPump: (state, _command, ctx) => Effect.flatMap(senderOf(ctx), (sender) => sender.pump({ ...state, pumpAt: null })),

    WaAnswered: (state, command, ctx) =>
      Effect.gen(function*() {
        const entry = state.inFlight[command.messageId]
        if (entry === undefined || entry.attempt !== command.attempt) return state
        const sender = yield* senderOf(ctx)
        const outcome = command.outcome
        if (outcome._tag === "Accepted") {
          stageAttempt(ctx, command.messageId, command.attempt, { status: "accepted", upstreamId: outcome.wamid })
          return yield* sender.pump(without(state, command.messageId))
        }
        const error = outcome.error
        if (outcome._tag === "Rejected" && error.retryable && command.attempt < MAX_SEND_ATTEMPTS) {
          const next = command.attempt + 1
          const due = command.at + Duration.toMillis(retryDelay(command.attempt))
          ctx.schedule(new WaRetry({ messageId: command.messageId, attempt: next }), { at: new Date(due) }, `retry-${command.messageId}`)
          return { ...state, inFlight: { ...state.inFlight, [command.messageId]: { ...entry, attempt: next, since: due, retrying: true } } }
        }
        if (outcome._tag === "Unconfirmed") sender.unconfirmed(command.messageId, command.attempt, error)
        else {
          stageAttempt(ctx, command.messageId, command.attempt, { status: "failed", failedAt: new Date(command.at).toISOString(), error })
          // A number belongs to one account.
          const accountId = (yield* sender.numbers.find(sender.phoneNumberId))?.accountId
          if (accountId !== undefined) yield* sender.emitFailed(accountId, command.messageId, error)
        }
        return yield* sender.pump(without(state, command.messageId))
      }),

    WaRetry: (state, command, ctx) =>
      Effect.gen(function*() {
        const entry = state.inFlight[command.messageId]
        if (entry === undefined || entry.attempt !== command.attempt) return state
        const sender = yield* senderOf(ctx)
        const payload = (yield* sender.payloadsOf([command.messageId])).get(command.messageId)
        if (payload === undefined) return without(state, command.messageId)
        sender.dispatch(command.messageId, command.attempt, payload)
        return { ...state, inFlight: { ...state.inFlight, [command.messageId]: { ...entry, since: sender.now, retrying: false } } }
      }),

    WaSweep: (state, _command, ctx) =>
      Effect.gen(function*() {
        const sender = yield* senderOf(ctx)
        let next: WaSenderState = { ...state, sweepAt: null }
        for (const [id, entry] of Object.entries(state.inFlight)) {
          if (entry.retrying || sender.now - entry.since < sender.lostAfterMs || sender.dispatcher.isHandling(id)) continue
          // It went out with a node that stopped: it may have reached the customer.
          sender.unconfirmed(
            id,
            entry.attempt,
            waUnconfirmed(id, "The node sending it stopped before Meta's answer came. The message may still reach the customer; Herald does not send it again and waits for its status.")
          )
          next = without(next, id)
        }
        // Campaign chunks this node does not run: their node stopped (or never got them). Run them here.
        for (const order of Object.values(state.chunks)) {
          if (!sender.chunks.isRunning(order)) sender.runChunk(order)
        }
        return sender.withSweep(yield* sender.pump(next))
      }),

    SendChunk: (state, command, ctx) =>
      Effect.gen(function*() {
        const sender = yield* senderOf(ctx)
        const key = chunkKey(command.order)
        if (!sender.chunks.isRunning(command.order)) sender.runChunk(command.order)
        if (state.chunks[key] !== undefined) return state
        return sender.withSweep({ ...state, chunks: { ...state.chunks, [key]: command.order } })
      }),

    WaChunkFinished: (state, command) =>
      Effect.sync(() => {
        const key = chunkKey(command)
        if (state.chunks[key] === undefined) return state
        const { [key]: _, ...rest } = state.chunks
        return { ...state, chunks: rest }
      }),

    WaExpire: (state, command, ctx) =>
      Effect.gen(function*() {
        const sender = yield* senderOf(ctx)
        const messageId = command.messageId
        const error = waUnconfirmed(
          messageId,
          "No status came from Meta within 24 hours of a send whose answer was lost; the message is counted as failed and was not charged."
        )
        ctx.persist(Effect.gen(function*() {
          const row = yield* sender.messages.expireUnconfirmed(messageId, error)
          if (row === undefined) return
          yield* sender.webhooks.emit({ accountId: row.accountId, type: "message.failed", botId: null, channel: "whatsapp", data: statusEventData({ messageId, ...row }, "failed", error) }).pipe(
            Effect.catchTag("NatsUnavailable", Effect.die)
          )
        }))
        return state
      })
  }
})
