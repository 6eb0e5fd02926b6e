import { SqlClient } from "@effect/sql"
import { Duration, Effect, Schedule, Schema } from "effect"
import { ActorClient, ActorKind } from "../actors/runtime/index.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { type AttemptOutcome, Dispatcher } from "./Dispatcher.ts"

/** Begin a delivery (sent through the outbox with the delivery's row). */
export class Start extends Schema.TaggedClass<Start>()("Start", {}) {}

/** The next attempt is due (a durable timer). */
export class Attempt extends Schema.TaggedClass<Attempt>()("Attempt", { attempt: Schema.Int }) {}

/** An attempt sent but never reported (its node died): send it again. */
export class Watchdog extends Schema.TaggedClass<Watchdog>()("Watchdog", { attempt: Schema.Int }) {}

/** The outcome of an attempt, reported by the node that sent it. */
export class Finished extends Schema.TaggedClass<Finished>()("Finished", {
  attempt: Schema.Int,
  statusCode: Schema.Int,
  tookMs: Schema.Int,
  snippet: Schema.String,
  sentAt: Schema.Number,
  finishedAt: Schema.Number
}) {}

export const DeliveryCommand = Schema.Union(Start, Attempt, Watchdog, Finished)
export type DeliveryCommand = typeof DeliveryCommand.Type

const DeliveryState = Schema.Struct({
  phase: Schema.Literal("new", "sending", "waiting", "delivered", "dead", "dropped"),
  attempt: Schema.Int,
  firstAttemptAt: Schema.NullOr(Schema.Number)
})
type DeliveryState = typeof DeliveryState.Type

export const MAX_ATTEMPTS = 4
/** Retries after the previous failure (contract, Webhook delivery): 1 s, 5 s, 30 s. */
export const RETRY_DELAYS: ReadonlyArray<Duration.Duration> = [Duration.seconds(1), Duration.seconds(5), Duration.seconds(30)]

const succeeded = (status: number) => status >= 200 && status < 300

interface Target {
  readonly webhookId: string
  readonly accountId: string
  readonly eventType: string
  readonly url: string
  readonly secret: string
  readonly envelope: unknown
  readonly live: boolean
}

/**
 * `delivery`: one actor per webhook delivery (key = delivery_id). It owns the schedule: attempt 1
 * at once, then 1 s, 5 s and 30 s after each failure, as durable timers, so a takeover after a
 * crash keeps the times. The HTTP request itself is made by the node's Dispatcher (per-endpoint
 * lanes), which reports back with `Finished`; each finished attempt becomes one row, written with
 * the state that counts it, so no two rows of a delivery share an attempt number. A watchdog
 * timer re-sends an attempt whose report never came (its node died mid-request): delivery to the
 * consumer is at least once, with the same delivery_id.
 */
export const DeliveryKind = ActorKind.make("delivery", {
  command: DeliveryCommand,
  state: DeliveryState,
  initial: (): DeliveryState => ({ phase: "new", attempt: 0, firstAttemptAt: null }),
  behaviour: (state, command, ctx) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const dispatcher = yield* Dispatcher
      const client = yield* ActorClient
      const config = yield* AppConfig
      const watchdogAfter = Duration.millis(config.webhookTimeoutMs + 5_000)

      const target = Effect.map(
        sql<Target>`
          SELECT d.webhook_id, d.account_id, d.event_type, w.url, w.secret, d.envelope,
                 (w.deleted_at IS NULL AND w.active) AS live
          FROM webhook_deliveries d JOIN webhooks w ON w.webhook_id = d.webhook_id
          WHERE d.delivery_id = ${ctx.key}`,
        (rows) => rows[0]
      )

      // The report travels back through the actor's stream; if it cannot (bus down for long),
      // the watchdog sends the attempt again.
      const report = (attempt: number) => (outcome: AttemptOutcome) =>
        client.send(DeliveryKind, ctx.key, new Finished({ attempt, ...outcome })).pipe(
          Effect.retry(Schedule.exponential(Duration.millis(100)).pipe(Schedule.upTo(Duration.seconds(20)))),
          Effect.catchAll((error) => Effect.logWarning("webhook attempt outcome not reported; the watchdog will retry", { delivery_id: ctx.key, reason: String(error) })),
          Effect.asVoid
        )

      const send = (attempt: number): Effect.Effect<DeliveryState, unknown> =>
        Effect.gen(function*() {
          const found = yield* target
          if (found === undefined || !found.live) return { ...state, phase: "dropped" as const }
          yield* dispatcher.submit(
            { deliveryId: ctx.key, webhookId: found.webhookId, url: found.url, secret: found.secret, body: JSON.stringify(found.envelope), attempt },
            report(attempt)
          )
          ctx.schedule(new Watchdog({ attempt }), { after: watchdogAfter }, `watchdog-${attempt}`)
          return { ...state, phase: "sending" as const, attempt }
        })

      switch (command._tag) {
        case "Start":
          return state.phase === "new" ? yield* send(1) : state
        case "Attempt":
          return state.phase === "waiting" && command.attempt === state.attempt + 1 ? yield* send(command.attempt) : state
        case "Watchdog":
          return state.phase === "sending" && command.attempt === state.attempt ? yield* send(command.attempt) : state
        case "Finished": {
          if (state.phase !== "sending" || command.attempt !== state.attempt) return state
          ctx.cancelTimer(`watchdog-${command.attempt}`)
          const found = yield* target
          if (found === undefined) return { ...state, phase: "dropped" as const }
          const firstAttemptAt = state.firstAttemptAt ?? command.sentAt
          ctx.persist(sql`
            INSERT INTO webhook_attempts (delivery_id, webhook_id, account_id, event_type, url, attempt, status_code, took_ms, response_snippet, sent_at)
            VALUES (${ctx.key}, ${found.webhookId}, ${found.accountId}, ${found.eventType}, ${found.url}, ${command.attempt},
                    ${command.statusCode}, ${command.tookMs}, ${command.snippet}, ${new Date(command.sentAt)})
            ON CONFLICT (delivery_id, attempt) DO NOTHING`.pipe(Effect.asVoid))
          if (succeeded(command.statusCode)) return { phase: "delivered" as const, attempt: command.attempt, firstAttemptAt }
          if (command.attempt < MAX_ATTEMPTS) {
            const due = command.finishedAt + Duration.toMillis(RETRY_DELAYS[command.attempt - 1]!)
            ctx.schedule(new Attempt({ attempt: command.attempt + 1 }), { at: new Date(due) }, `attempt-${command.attempt + 1}`)
            return { phase: "waiting" as const, attempt: command.attempt, firstAttemptAt }
          }
          ctx.persist(sql`
            INSERT INTO webhook_dead_letters (delivery_id, webhook_id, account_id, event_type, url, reason, envelope, first_attempt_at, permanent_failure_at)
            VALUES (${ctx.key}, ${found.webhookId}, ${found.accountId}, ${found.eventType}, ${found.url},
                    ${`HTTP ${command.statusCode} after ${MAX_ATTEMPTS} attempts`}, ${JSON.stringify(found.envelope)}::jsonb,
                    ${new Date(firstAttemptAt)}, ${new Date(command.finishedAt)})
            ON CONFLICT (delivery_id) DO NOTHING`.pipe(Effect.asVoid))
          return { phase: "dead" as const, attempt: command.attempt, firstAttemptAt }
        }
      }
    })
})
