import { Duration, Effect, Schedule, Schema } from "effect"
import { ActorClient, ActorKind } from "../actors/runtime/index.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { type AttemptOutcome, Dispatcher } from "./Dispatcher.ts"
import { Endpoints } from "./Endpoints.ts"

/**
 * Begin a delivery (sent through the outbox with the delivery's row). It carries what every
 * attempt needs but the endpoint's URL and secret, which are read when sending (they may change,
 * and a secret does not belong in a stream).
 */
export class Start extends Schema.TaggedClass<Start>()("Start", {
  webhookId: Schema.String,
  accountId: Schema.String,
  eventType: Schema.String,
  envelope: Schema.Unknown
}) {}

/** The next attempt is due (a durable timer). */
export class Attempt extends Schema.TaggedClass<Attempt>()("Attempt", { attempt: Schema.Int }) {}

/** An attempt sent but never reported (its node died): send it again. */
export class Watchdog extends Schema.TaggedClass<Watchdog>()("Watchdog", { attempt: Schema.Int }) {}

/** The outcome of an attempt, reported by the node that sent it. */
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

const Target = Schema.Struct({ webhookId: Schema.String, accountId: Schema.String, eventType: Schema.String, envelope: Schema.Unknown })

const DeliveryState = Schema.Struct({
  phase: Schema.Literal("new", "sending", "waiting", "delivered", "dead", "dropped"),
  attempt: Schema.Int,
  firstAttemptAt: Schema.NullOr(Schema.Number),
  target: Schema.NullOr(Target)
})
type DeliveryState = typeof DeliveryState.Type

export const MAX_ATTEMPTS = 4
/** Retries after the previous failure (contract, Webhook delivery): 1 s, 5 s, 30 s. */
export const RETRY_DELAYS: ReadonlyArray<Duration.Duration> = [Duration.seconds(1), Duration.seconds(5), Duration.seconds(30)]

const succeeded = (status: number) => status >= 200 && status < 300

/**
 * `delivery`: one actor per webhook delivery (key = delivery_id). It owns the schedule: attempt 1
 * at once, then 1 s, 5 s and 30 s after each failure, as durable timers, so a takeover after a
 * crash keeps the times. The Start command carries the event's envelope and the state keeps it,
 * so an attempt reads nothing but the endpoint (cached). The HTTP request itself is made by the node's Dispatcher (per-endpoint
 * lanes), which reports back with `Finished`; each finished attempt becomes one row, written with
 * the state that counts it, so no two rows of a delivery share an attempt number. A watchdog
 * timer re-sends an attempt whose report never came (its node died mid-request): delivery to the
 * consumer is at least once, with the same delivery_id.
 */
export const DeliveryKind = ActorKind.make("delivery", {
  command: DeliveryCommand,
  state: DeliveryState,
  initial: (): DeliveryState => ({ phase: "new", attempt: 0, firstAttemptAt: null, target: null }),
  // Between attempts a delivery only waits for a timer; one in memory per delivery in flight would
  // make a large backlog a large heap, so idle ones leave memory soon (the timer reloads them).
  passivateAfter: Duration.seconds(2),
  behaviour: (state, command, ctx) =>
    Effect.gen(function*() {
      const endpoints = yield* Endpoints
      const dispatcher = yield* Dispatcher
      const client = yield* ActorClient
      const config = yield* AppConfig
      const watchdogAfter = Duration.millis(config.webhookTimeoutMs + 5_000)

      // The report travels back through the actor's stream; if it cannot (bus down for long),
      // the watchdog sends the attempt again.
      const report = (attempt: number, url: string) => (outcome: AttemptOutcome) =>
        client.send(DeliveryKind, ctx.key, new Finished({ attempt, url, ...outcome })).pipe(
          Effect.retry(Schedule.exponential(Duration.millis(100)).pipe(Schedule.upTo(Duration.seconds(20)))),
          Effect.catchAll((error) => Effect.logWarning("webhook attempt outcome not reported; the watchdog will retry", { delivery_id: ctx.key, reason: String(error) })),
          Effect.asVoid
        )

      const send = (target: typeof Target.Type, attempt: number): Effect.Effect<DeliveryState, unknown> =>
        Effect.gen(function*() {
          const endpoint = yield* endpoints.find(target.webhookId)
          // A deleted or deactivated endpoint gets nothing more (no attempt row is written).
          if (endpoint === undefined || !endpoint.live) return { ...state, target, phase: "dropped" as const }
          yield* dispatcher.submit(
            { deliveryId: ctx.key, webhookId: target.webhookId, url: endpoint.url, secret: endpoint.secret, body: JSON.stringify(target.envelope), attempt },
            report(attempt, endpoint.url)
          )
          ctx.schedule(new Watchdog({ attempt }), { after: watchdogAfter }, `watchdog-${attempt}`)
          return { ...state, target, phase: "sending" as const, attempt }
        })

      const target = state.target
      switch (command._tag) {
        case "Start": {
          if (state.phase !== "new") return state
          const { webhookId, accountId, eventType, envelope } = command
          return yield* send({ webhookId, accountId, eventType, envelope }, 1)
        }
        case "Attempt":
          return target !== null && state.phase === "waiting" && command.attempt === state.attempt + 1 ? yield* send(target, command.attempt) : state
        case "Watchdog":
          return target !== null && state.phase === "sending" && command.attempt === state.attempt ? yield* send(target, command.attempt) : state
        case "Finished": {
          if (target === null || state.phase !== "sending" || command.attempt !== state.attempt) return state
          ctx.cancelTimer(`watchdog-${command.attempt}`)
          const found = { ...target, url: command.url }
          const firstAttemptAt = state.firstAttemptAt ?? command.sentAt
          ctx.insert("webhook_attempts", {
            delivery_id: ctx.key,
            webhook_id: found.webhookId,
            account_id: found.accountId,
            event_type: found.eventType,
            url: found.url,
            attempt: command.attempt,
            status_code: command.statusCode,
            took_ms: command.tookMs,
            response_snippet: command.snippet,
            sent_at: new Date(command.sentAt)
          })
          if (succeeded(command.statusCode)) return { phase: "delivered" as const, attempt: command.attempt, firstAttemptAt, target }
          if (command.attempt < MAX_ATTEMPTS) {
            const due = command.finishedAt + Duration.toMillis(RETRY_DELAYS[command.attempt - 1]!)
            ctx.schedule(new Attempt({ attempt: command.attempt + 1 }), { at: new Date(due) }, `attempt-${command.attempt + 1}`)
            return { phase: "waiting" as const, attempt: command.attempt, firstAttemptAt, target }
          }
          ctx.insert("webhook_dead_letters", {
            delivery_id: ctx.key,
            webhook_id: found.webhookId,
            account_id: found.accountId,
            event_type: found.eventType,
            url: found.url,
            reason: `HTTP ${command.statusCode} after ${MAX_ATTEMPTS} attempts`,
            envelope: JSON.stringify(found.envelope),
            first_attempt_at: new Date(firstAttemptAt),
            permanent_failure_at: new Date(command.finishedAt)
          })
          return { phase: "dead" as const, attempt: command.attempt, firstAttemptAt, target }
        }
      }
    })
})
