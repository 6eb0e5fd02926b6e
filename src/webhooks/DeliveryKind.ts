import { tracedSpan } from "../observability/Tracing.ts"
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Schema } from "effect"
import type { ActorContext } from "../actors/runtime/ActorKind.ts"
import { ActorKind } from "../actors/runtime/index.ts"
import { recordAttempt, recordDeadLetter, storedEnvelope } from "./DeliveriesRepo.ts"
import { Dispatcher } from "./Dispatcher.ts"
import { Endpoints } from "./Endpoints.ts"

/**
 * Begin a delivery (sent through the outbox with the delivery's row). It carries what every
 * attempt needs but the endpoint's URL and secret, which are read when sending (they may change,
 * and a secret does not belong in a stream). A large envelope (a `message.batch`, up to
 * BATCH_MAX_BYTES) is not carried: `stored` says each attempt reads it from the delivery's row,
 * so the stream, the outbox row and the actor's state stay small.
 */
export class Start extends Schema.TaggedClass<Start>()("Start", {
  webhookId: Schema.String,
  accountId: Schema.String,
  eventType: Schema.String,
  envelope: Schema.Unknown,
  stored: Schema.optionalWith(Schema.Boolean, { default: () => false })
}) {}

/** The next attempt is due (a durable timer). */
export class Attempt extends Schema.TaggedClass<Attempt>()("Attempt", { attempt: Schema.Int }) {}

/** Sent by versions that wrote the sending phase: an attempt whose report never came, sent again. */
export class Watchdog extends Schema.TaggedClass<Watchdog>()("Watchdog", { attempt: Schema.Int }) {}

/** The outcome of an attempt: the continuation of the command that sent it (ActorContext.hold). */
export class Finished extends Schema.TaggedClass<Finished>()("Finished", {
  attempt: Schema.Int,
  url: Schema.String,
  statusCode: Schema.Int,
  tookMs: Schema.Int,
  snippet: Schema.String,
  sentAt: Schema.Number,
  finishedAt: Schema.Number
}) {}

export const DeliveryCommand = Schema.Union(Start, Attempt, Watchdog, Finished)
export type DeliveryCommand = typeof DeliveryCommand.Type

const Target = Schema.Struct({
  webhookId: Schema.String,
  accountId: Schema.String,
  eventType: Schema.String,
  envelope: Schema.Unknown,
  /** The envelope is the delivery row's (`webhook_deliveries.envelope`), read by each attempt. */
  stored: Schema.optionalWith(Schema.Boolean, { default: () => false })
})

const DeliveryState = Schema.Struct({
  phase: Schema.Literal("new", "sending", "waiting", "delivered", "dead", "dropped"),
  attempt: Schema.Int,
  firstAttemptAt: Schema.NullOr(Schema.Number),
  target: Schema.NullOr(Target),
  /** Times in a row the attempt found its endpoint's lane full and was put off. */
  deferrals: Schema.optionalWith(Schema.Int, { default: () => 0 })
})
type DeliveryState = typeof DeliveryState.Type

export const MAX_ATTEMPTS = 4
/** Retries after the previous failure (contract, Webhook delivery): 1 s, 5 s, 30 s. */
export const RETRY_DELAYS: ReadonlyArray<Duration.Duration> = [Duration.seconds(1), Duration.seconds(5), Duration.seconds(30)]

const succeeded = (status: number) => status >= 200 && status < 300

/** An attempt put off because its endpoint's lane was full waits this long (doubling, jittered). */
const deferral = (deferrals: number) => Math.min(30_000, 1_000 * 2 ** deferrals) * (0.75 + Math.random() / 2)

/** A stored envelope as the JSON text sent; undefined when its row is gone (its endpoint or account deleted). */
const storedBody = (deliveryId: string) => Effect.flatMap(SqlClient.SqlClient, (sql) => storedEnvelope(sql, deliveryId))

/**
 * Sends attempt `attempt` of the delivery: dropped when its endpoint is gone or deactivated (or
 * its stored envelope is), put off by a timer when the endpoint's lane is full (not counted as an
 * attempt), else handed to the Dispatcher with the command held until its outcome comes back.
 */
const send = (
  state: DeliveryState,
  ctx: ActorContext<DeliveryCommand>,
  target: typeof Target.Type,
  attempt: number
): Effect.Effect<DeliveryState, unknown, Endpoints | Dispatcher | SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const endpoints = yield* Endpoints
    const dispatcher = yield* Dispatcher
    const endpoint = yield* endpoints.find(target.webhookId)
    // A deleted or deactivated endpoint gets nothing more (no attempt row is written).
    if (endpoint === undefined || !endpoint.live) return { ...state, target, phase: "dropped" as const }
    const body = target.stored ? yield* storedBody(ctx.key) : JSON.stringify(target.envelope)
    if (body === undefined) return { ...state, target, phase: "dropped" as const }
    const job = {
      deliveryId: ctx.key,
      webhookId: target.webhookId,
      url: endpoint.url,
      secret: endpoint.secret,
      // A rotation's overlap: the former secret signs too until then (decided at send time).
      previous: endpoint.previousSecret !== null && endpoint.previousSecretUntil !== null
        ? { secret: endpoint.previousSecret, until: endpoint.previousSecretUntil }
        : undefined,
      body,
      attempt,
      lease: ctx.lease,
      trace: yield* tracedSpan
    }
    if (!dispatcher.hasRoom(job.webhookId)) {
      ctx.schedule(new Attempt({ attempt }), { after: deferral(state.deferrals) }, `attempt-${attempt}`)
      return { ...state, target, phase: "waiting" as const, attempt: attempt - 1, deferrals: state.deferrals + 1 }
    }
    const finished = ctx.hold(dispatcher.holdFor)
    // Built by this node from an outcome it made: no need to validate it again.
    yield* dispatcher.submit(job, (outcome) => finished(new Finished({ attempt, url: endpoint.url, ...outcome }, true)))
    return { ...state, target, phase: "sending" as const, attempt, deferrals: 0 }
  })

/**
 * `delivery`: one actor per webhook delivery (key = delivery_id). It owns the schedule: attempt 1
 * at once, then 1 s, 5 s and 30 s after each failure, as durable timers, so a takeover after a
 * crash keeps the times. The Start command carries the event's envelope and the state keeps it,
 * so an attempt reads nothing but the endpoint (cached). The HTTP request itself is made by the
 * node's Dispatcher (per-endpoint lanes). The command that sends an attempt is held open until
 * the Dispatcher hands back its outcome (`Finished`, in memory): the attempt row and the state it
 * leads to are then written in one commit, so no two rows of a delivery share an attempt number.
 * If the node dies mid-attempt, the held command is redelivered to the next owner and the attempt
 * is made again: delivery to the consumer is at least once, with the same delivery_id. An attempt
 * whose endpoint's lane is full is put off by a timer (without counting as an attempt), so a dead
 * endpoint's backlog waits in the database, not in memory or in held commands.
 */
export const DeliveryKind = ActorKind.make("delivery", {
  command: DeliveryCommand,
  state: DeliveryState,
  initial: (): DeliveryState => ({ phase: "new", attempt: 0, firstAttemptAt: null, target: null, deferrals: 0 }),
  // Between attempts a delivery only waits for a timer; one in memory per delivery in flight would
  // make a large backlog a large heap, so idle ones leave memory soon (the timer reloads them).
  passivateAfter: Duration.seconds(2),
  handlers: {
    /** Attempt 1, at once; a Start applied again (redelivered after its commit) changes nothing. */
    Start: (state, command, ctx) => {
      if (state.phase !== "new") return Effect.succeed(state)
      const { webhookId, accountId, eventType, envelope, stored } = command
      return send(state, ctx, { webhookId, accountId, eventType, envelope, stored }, 1)
    },
    /** The next attempt's timer (a retry, or an attempt put off by a full lane): only the one awaited. */
    Attempt: (state, command, ctx) =>
      state.target !== null && state.phase === "waiting" && command.attempt === state.attempt + 1
        ? send(state, ctx, state.target, command.attempt)
        : Effect.succeed(state),
    /** From versions that wrote the sending phase: the attempt in flight, sent again. */
    Watchdog: (state, command, ctx) =>
      state.target !== null && state.phase === "sending" && command.attempt === state.attempt
        ? send(state, ctx, state.target, command.attempt)
        : Effect.succeed(state),
    /**
     * An attempt's outcome: its row, then delivered on a 2xx, the next attempt's timer after a
     * failure (1 s, 5 s, 30 s after it), or the dead letter after the fourth.
     */
    Finished: (state, command, ctx) =>
      Effect.gen(function*() {
        const target = state.target
        if (target === null || state.phase !== "sending" || command.attempt !== state.attempt) return state
        const found = { ...target, url: command.url }
        const firstAttemptAt = state.firstAttemptAt ?? command.sentAt
        recordAttempt(ctx, found, command)
        const settled = { attempt: command.attempt, firstAttemptAt, target, deferrals: 0 }
        if (succeeded(command.statusCode)) return { ...settled, phase: "delivered" as const }
        if (command.attempt < MAX_ATTEMPTS) {
          const due = command.finishedAt + Duration.toMillis(RETRY_DELAYS[command.attempt - 1]!)
          ctx.schedule(new Attempt({ attempt: command.attempt + 1 }), { at: new Date(due) }, `attempt-${command.attempt + 1}`)
          return { ...settled, phase: "waiting" as const }
        }
        recordDeadLetter(ctx, found, {
          reason: `HTTP ${command.statusCode} after ${MAX_ATTEMPTS} attempts`,
          envelope: found.stored ? (yield* storedBody(ctx.key)) ?? "{}" : JSON.stringify(found.envelope),
          firstAttemptAt,
          permanentFailureAt: command.finishedAt
        })
        return { ...settled, phase: "dead" as const }
      })
  }
})
