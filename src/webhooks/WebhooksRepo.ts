import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { SecretBox } from "../crypto/SecretBox.ts"

export interface WebhookRow {
  readonly webhookId: string
  readonly accountId: string
  readonly url: string
  readonly events: ReadonlyArray<string>
  readonly botId: string | null
  readonly active: boolean
  /** `rcs`, or `whatsapp` for the account's developer webhook (Settings, Developer). */
  readonly channel: WebhookChannel
  /** Opted in to broadcast messages' per-recipient `message.*` events, delivered in batches. */
  readonly includeBroadcastMessages: boolean
  readonly createdAt: Date
  readonly deletedAt: Date | null
}

export type WebhookChannel = "rcs" | "whatsapp"

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

const COLUMNS = "webhook_id, account_id, url, events, bot_id, active, channel, include_broadcast_messages, created_at, deleted_at"

/** At most this many of an endpoint's latest attempts make its stats: a busy endpoint's hour is sampled, not scanned. */
export const STATS_SAMPLE = 10_000

export interface EndpointStatsRow {
  readonly webhookId: string
  readonly botId: string | null
  readonly channel: WebhookChannel
  readonly attempts: number
  readonly succeeded: number
  readonly p50: number | null
  readonly p95: number | null
  /** Failures among the three latest attempts of the window. */
  readonly recentFailures: number | null
  readonly lastAttemptAt: Date | null
  readonly lastStatusCode: number | null
}

export class WebhooksRepo extends Effect.Service<WebhooksRepo>()("herald/WebhooksRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const box = yield* SecretBox

    /** The endpoint's signing secret, sealed: signing needs it back, a database reader must not have it. */
    const insert = (input: {
      accountId: string
      url: string
      events: ReadonlyArray<string>
      botId: string | null
      secret: string
      channel?: WebhookChannel
      includeBroadcastMessages?: boolean
    }) =>
      sql<WebhookRow>`
        INSERT INTO webhooks (account_id, url, events, bot_id, secret, channel, include_broadcast_messages)
        VALUES (${input.accountId}, ${input.url}, ${input.events}::text[], ${input.botId}, ${box.seal(input.secret)}, ${input.channel ?? "rcs"},
                ${input.includeBroadcastMessages ?? false})
        RETURNING ${sql.literal(COLUMNS)}`.pipe(Effect.map((rows) => rows[0]!), Effect.orDie)

    const list = (accountId: string) =>
      sql<WebhookRow>`
        SELECT ${sql.literal(COLUMNS)} FROM webhooks
        WHERE account_id = ${accountId} AND deleted_at IS NULL ORDER BY created_at DESC`.pipe(Effect.orDie)

    /**
     * Each live endpoint's attempts since `since` (at most the latest STATS_SAMPLE of them, by the
     * (webhook_id, sent_at) index), and its latest attempt ever.
     */
    const stats = (accountId: string, since: Date) =>
      sql<EndpointStatsRow>`
        SELECT w.webhook_id::text, w.bot_id::text, w.channel, coalesce(s.attempts, 0)::int AS attempts, coalesce(s.succeeded, 0)::int AS succeeded,
               s.p50, s.p95, s.recent_failures, l.sent_at AS last_attempt_at, l.status_code AS last_status_code
        FROM webhooks w
        LEFT JOIN LATERAL (
          SELECT count(*) AS attempts,
                 count(*) FILTER (WHERE r.status_code BETWEEN 200 AND 299) AS succeeded,
                 percentile_cont(0.5) WITHIN GROUP (ORDER BY r.took_ms) AS p50,
                 percentile_cont(0.95) WITHIN GROUP (ORDER BY r.took_ms) AS p95,
                 count(*) FILTER (WHERE r.n <= 3 AND r.status_code NOT BETWEEN 200 AND 299)::int AS recent_failures
          FROM (
            SELECT a.status_code, a.took_ms, row_number() OVER (ORDER BY a.sent_at DESC) AS n
            FROM webhook_attempts a WHERE a.webhook_id = w.webhook_id AND a.sent_at >= ${since}
            ORDER BY a.sent_at DESC LIMIT ${STATS_SAMPLE}
          ) r
        ) s ON true
        LEFT JOIN LATERAL (
          SELECT a.sent_at, a.status_code FROM webhook_attempts a WHERE a.webhook_id = w.webhook_id ORDER BY a.sent_at DESC LIMIT 1
        ) l ON true
        WHERE w.account_id = ${accountId} AND w.deleted_at IS NULL
        ORDER BY w.created_at DESC`.pipe(Effect.orDie)

    /** A live (not deleted) endpoint of the account; another account's is as good as unknown. */
    const find = (accountId: string, webhookId: string) =>
      sql<WebhookRow>`
        SELECT ${sql.literal(COLUMNS)} FROM webhooks
        WHERE account_id = ${accountId} AND webhook_id::text = ${webhookId} AND deleted_at IS NULL`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    const update = (
      webhookId: string,
      changes: { url?: string; events?: ReadonlyArray<string>; botId?: string | null; active?: boolean; includeBroadcastMessages?: boolean }
    ) =>
      sql<WebhookRow>`
        UPDATE webhooks SET
          url = COALESCE(${changes.url ?? null}, url),
          events = COALESCE(${changes.events ?? null}::text[], events),
          bot_id = CASE WHEN ${changes.botId !== undefined} THEN ${changes.botId ?? null}::uuid ELSE bot_id END,
          active = COALESCE(${changes.active ?? null}, active),
          include_broadcast_messages = COALESCE(${changes.includeBroadcastMessages ?? null}::boolean, include_broadcast_messages),
          updated_at = now()
        WHERE webhook_id = ${webhookId}::uuid AND deleted_at IS NULL
        RETURNING ${sql.literal(COLUMNS)}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    /**
     * A new signing secret; the one it replaces keeps signing for `overlapMs` more (a former one
     * still in its overlap is dropped: only the secret just replaced overlaps). Answers when the
     * overlap ends; undefined when the endpoint is gone. Both stay sealed (the former moves as it is).
     */
    const rotate = (webhookId: string, secret: string, overlapMs: number) =>
      sql<{ readonly webhookId: string; readonly previousSecretExpiresAt: Date }>`
        UPDATE webhooks SET
          previous_secret = secret,
          previous_secret_expires_at = now() + ${overlapMs} * interval '1 millisecond',
          secret = ${box.seal(secret)},
          updated_at = now()
        WHERE webhook_id = ${webhookId}::uuid AND deleted_at IS NULL
        RETURNING webhook_id, previous_secret_expires_at`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    const remove = (webhookId: string) =>
      sql`UPDATE webhooks SET deleted_at = now(), active = false WHERE webhook_id = ${webhookId}::uuid AND deleted_at IS NULL`.pipe(Effect.asVoid, Effect.orDie)

    /** Finished attempts of an endpoint, newest first. */
    const attempts = (webhookId: string, limit: number) =>
      sql<AttemptRow>`
        SELECT attempt_id, delivery_id, event_type, url, attempt, status_code, took_ms, response_snippet, sent_at
        FROM webhook_attempts WHERE webhook_id = ${webhookId}::uuid
        ORDER BY sent_at DESC, attempt DESC LIMIT ${limit}`.pipe(Effect.orDie)

    const deadLetterRows = (accountId: string, deliveryId: string | undefined) =>
      sql<DeadLetterRow>`
        SELECT d.delivery_id, d.webhook_id, d.event_type, d.url, d.reason, d.envelope, d.first_attempt_at, d.permanent_failure_at,
               w.bot_id AS endpoint_bot_id, w.channel AS endpoint_channel, (w.webhook_id IS NULL OR w.deleted_at IS NOT NULL) AS endpoint_deleted
        FROM webhook_dead_letters d LEFT JOIN webhooks w ON w.webhook_id = d.webhook_id
        WHERE d.account_id = ${accountId} ${deliveryId === undefined ? sql`` : sql`AND d.delivery_id = ${deliveryId}`}
        ORDER BY d.permanent_failure_at DESC`.pipe(Effect.orDie)

    const deadLetters = (accountId: string) => deadLetterRows(accountId, undefined)

    /** One dead-letter item of the account. */
    const deadLetter = (accountId: string, deliveryId: string) => Effect.map(deadLetterRows(accountId, deliveryId), (rows) => rows[0])

    /** The account's developer webhook (channel whatsapp), if it has one. */
    const developer = (accountId: string) =>
      sql<WebhookRow>`
        SELECT ${sql.literal(COLUMNS)} FROM webhooks
        WHERE account_id = ${accountId} AND channel = 'whatsapp' AND deleted_at IS NULL`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    return { insert, list, stats, find, update, rotate, remove, attempts, deadLetters, deadLetter, developer } as const
  }),
  dependencies: [SecretBox.Default]
}) {}
