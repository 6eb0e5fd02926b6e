import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { ActorContext } from "../actors/runtime/ActorKind.ts"
import type { WebhookChannel } from "./WebhooksRepo.ts"

export interface AttemptRow {
  readonly attemptId: string
  readonly deliveryId: string
  readonly eventType: string
  readonly url: string
  readonly attempt: number
  readonly statusCode: number
  readonly tookMs: number
  readonly responseSnippet: string
  readonly sentAt: Date
}

export interface DeadLetterRow {
  readonly deliveryId: string
  readonly webhookId: string
  readonly eventType: string
  readonly url: string
  readonly reason: string
  readonly envelope: Record<string, unknown>
  readonly firstAttemptAt: Date
  readonly permanentFailureAt: Date
  /** Of the endpoint, for visibility: null when it is an all-bots endpoint. */
  readonly endpointBotId: string | null
  /** Of the endpoint, for visibility (the developer webhook's are the owner's); null when it is gone. */
  readonly endpointChannel: WebhookChannel | null
  readonly endpointDeleted: boolean
}

/** One delivery of an event to one endpoint, as written with its actor's Start. */
export interface NewDelivery {
  readonly deliveryId: string
  readonly webhookId: string
  readonly envelope: unknown
}

/** A `message.batch` event with its one delivery (MessageBatches' rounds). */
export interface NewBatch {
  readonly eventId: string
  readonly deliveryId: string
  readonly webhookId: string
  readonly accountId: string
  readonly botId: string
  readonly type: string
  readonly summary: unknown
  readonly occurredAt: string
  readonly envelope: unknown
}

/**
 * The one writer of a delivery's tables: `webhook_events`, `webhook_deliveries`,
 * `webhook_attempts` and `webhook_dead_letters`. The statements that join a caller's transaction
 * (an event's fan-out in an actor's commit, a batcher round, a replay) keep their SqlError: the
 * actor runtime tells a refused write from a lost connection by it. Reads answered to a person
 * turn it into a defect here. The delivery actor writes its attempts and dead letters in its own
 * commit through `recordAttempt` and `recordDeadLetter` below.
 */
export class DeliveriesRepo extends Effect.Service<DeliveriesRepo>()("herald/webhooks/DeliveriesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** An event to fan out; its id and time. */
    const insertEvent = Effect.fn("DeliveriesRepo.insertEvent")((event: { readonly accountId: string; readonly type: string; readonly botId: string | null; readonly data: unknown }) =>
      Effect.map(
        sql<{ eventId: string; occurredAt: Date }>`
          INSERT INTO webhook_events (account_id, type, bot_id, data)
          VALUES (${event.accountId}, ${event.type}, ${event.botId}, ${JSON.stringify(event.data)}::jsonb)
          RETURNING event_id, occurred_at`,
        (rows) => rows[0]!
      ))

    const insertDeliveries = Effect.fn("DeliveriesRepo.insertDeliveries")((
      accountId: string,
      eventId: string,
      type: string,
      deliveries: ReadonlyArray<NewDelivery>
    ) =>
      sql`
        INSERT INTO webhook_deliveries ${
        sql.insert(deliveries.map((d) => ({ deliveryId: d.deliveryId, webhookId: d.webhookId, accountId, eventId, eventType: type, envelope: JSON.stringify(d.envelope) })))
      }`.pipe(Effect.asVoid))

    /** Batches' events and deliveries, each batch one event with one delivery. */
    const insertBatches = Effect.fn("DeliveriesRepo.insertBatches")((batches: ReadonlyArray<NewBatch>) =>
      Effect.zipRight(
        sql`
          INSERT INTO webhook_events (event_id, account_id, type, bot_id, data, occurred_at)
          SELECT * FROM unnest(${batches.map((b) => b.eventId)}::uuid[], ${batches.map((b) => b.accountId)}::uuid[],
                               ${batches.map((b) => b.type)}::text[], ${batches.map((b) => b.botId)}::uuid[],
                               ${batches.map((b) => JSON.stringify(b.summary))}::jsonb[], ${batches.map((b) => b.occurredAt)}::timestamptz[])`,
        sql`
          INSERT INTO webhook_deliveries (delivery_id, webhook_id, account_id, event_id, event_type, envelope)
          SELECT * FROM unnest(${batches.map((b) => b.deliveryId)}::text[], ${batches.map((b) => b.webhookId)}::uuid[],
                               ${batches.map((b) => b.accountId)}::uuid[], ${batches.map((b) => b.eventId)}::uuid[],
                               ${batches.map((b) => b.type)}::text[], ${batches.map((b) => JSON.stringify(b.envelope))}::jsonb[])`
      ).pipe(Effect.asVoid))

    /** Takes a dead letter out for its replay, in the replay's transaction: whether it was there. */
    const takeDeadLetter = Effect.fn("DeliveriesRepo.takeDeadLetter")((accountId: string, deliveryId: string) =>
      Effect.map(
        sql`DELETE FROM webhook_dead_letters WHERE delivery_id = ${deliveryId} AND account_id = ${accountId} RETURNING delivery_id`,
        (rows) => rows.length > 0
      ))

    /** Finished attempts of an endpoint, newest first. */
    const attempts = Effect.fn("DeliveriesRepo.attempts")((webhookId: string, limit: number) =>
      sql<AttemptRow>`
        SELECT attempt_id, delivery_id, event_type, url, attempt, status_code, took_ms, response_snippet, sent_at
        FROM webhook_attempts WHERE webhook_id = ${webhookId}::uuid
        ORDER BY sent_at DESC, attempt DESC LIMIT ${limit}`.pipe(Effect.orDie))

    const deadLetterRows = (accountId: string, deliveryId: string | undefined) =>
      sql<DeadLetterRow>`
        SELECT d.delivery_id, d.webhook_id, d.event_type, d.url, d.reason, d.envelope, d.first_attempt_at, d.permanent_failure_at,
               w.bot_id AS endpoint_bot_id, w.channel AS endpoint_channel, (w.webhook_id IS NULL OR w.deleted_at IS NOT NULL) AS endpoint_deleted
        FROM webhook_dead_letters d LEFT JOIN webhooks w ON w.webhook_id = d.webhook_id
        WHERE d.account_id = ${accountId} ${deliveryId === undefined ? sql`` : sql`AND d.delivery_id = ${deliveryId}`}
        ORDER BY d.permanent_failure_at DESC`.pipe(Effect.orDie)

    const deadLetters = Effect.fn("DeliveriesRepo.deadLetters")((accountId: string) => deadLetterRows(accountId, undefined))

    /** One dead-letter item of the account. */
    const deadLetter = Effect.fn("DeliveriesRepo.deadLetter")((accountId: string, deliveryId: string) =>
      Effect.map(deadLetterRows(accountId, deliveryId), (rows) => rows[0]))

    return { insertEvent, insertDeliveries, insertBatches, takeDeadLetter, attempts, deadLetters, deadLetter } as const
  }),
  // Only the SqlClient, the node's (provided at the root).
  dependencies: []
}) {}

/**
 * A stored envelope (a `message.batch`'s) as the JSON text sent; undefined when its row is gone
 * (its endpoint or account deleted). Read by the delivery actor with the SqlClient it has.
 */
export const storedEnvelope = (sql: SqlClient.SqlClient, deliveryId: string) =>
  Effect.map(
    sql<{ body: string }>`SELECT envelope::text AS body FROM webhook_deliveries WHERE delivery_id = ${deliveryId}`,
    (rows) => rows[0]?.body
  )

/** What a delivery's attempt and dead letter say of it. */
export interface DeliveryTarget {
  readonly webhookId: string
  readonly accountId: string
  readonly eventType: string
  readonly url: string
}

/** A finished attempt's row, written in the delivery actor's commit. */
export const recordAttempt = (
  ctx: Pick<ActorContext<unknown>, "insert" | "key">,
  target: DeliveryTarget,
  attempt: { readonly attempt: number; readonly statusCode: number; readonly tookMs: number; readonly snippet: string; readonly sentAt: number }
) =>
  ctx.insert("webhook_attempts", {
    delivery_id: ctx.key,
    webhook_id: target.webhookId,
    account_id: target.accountId,
    event_type: target.eventType,
    url: target.url,
    attempt: attempt.attempt,
    status_code: attempt.statusCode,
    took_ms: attempt.tookMs,
    response_snippet: attempt.snippet,
    sent_at: new Date(attempt.sentAt)
  })

/** The dead letter of a delivery out of attempts, written in the delivery actor's commit. */
export const recordDeadLetter = (
  ctx: Pick<ActorContext<unknown>, "insert" | "key">,
  target: DeliveryTarget,
  dead: { readonly reason: string; readonly envelope: string; readonly firstAttemptAt: number; readonly permanentFailureAt: number }
) =>
  ctx.insert("webhook_dead_letters", {
    delivery_id: ctx.key,
    webhook_id: target.webhookId,
    account_id: target.accountId,
    event_type: target.eventType,
    url: target.url,
    reason: dead.reason,
    envelope: dead.envelope,
    first_attempt_at: new Date(dead.firstAttemptAt),
    permanent_failure_at: new Date(dead.permanentFailureAt)
  })
