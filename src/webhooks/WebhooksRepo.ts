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

/** An endpoint as sending reads it; its secrets sealed (SecretBox). */
export interface SendingRow {
  readonly webhookId: string
  readonly accountId: string
  readonly url: string
  readonly secret: string
  readonly previousSecret: string | null
  readonly previousSecretUntil: number | null
  readonly live: boolean
}

/** A live endpoint as the event bus filters on it. */
export interface SubscriptionRow {
  readonly webhookId: string
  readonly events: ReadonlyArray<string>
  readonly botId: string | null
  readonly channel: string
  readonly includeBroadcastMessages: boolean
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
    const insert = Effect.fn("WebhooksRepo.insert")((input: {
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
        RETURNING ${sql.literal(COLUMNS)}`.pipe(Effect.map((rows) => rows[0]!), Effect.orDie))

    const list = Effect.fn("WebhooksRepo.list")((accountId: string) =>
      sql<WebhookRow>`
        SELECT ${sql.literal(COLUMNS)} FROM webhooks
        WHERE account_id = ${accountId} AND deleted_at IS NULL ORDER BY created_at DESC`.pipe(Effect.orDie))

    /**
     * Each live endpoint's attempts since `since` (at most the latest STATS_SAMPLE of them, by the
     * (webhook_id, sent_at) index), and its latest attempt ever.
     */
    const stats = Effect.fn("WebhooksRepo.stats")((accountId: string, since: Date) =>
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
        ORDER BY w.created_at DESC`.pipe(Effect.orDie))

    /** A live (not deleted) endpoint of the account; another account's is as good as unknown. */
    const find = Effect.fn("WebhooksRepo.find")((accountId: string, webhookId: string) =>
      sql<WebhookRow>`
        SELECT ${sql.literal(COLUMNS)} FROM webhooks
        WHERE account_id = ${accountId} AND webhook_id::text = ${webhookId} AND deleted_at IS NULL`.pipe(Effect.map((rows) => rows[0]), Effect.orDie))

    const update = Effect.fn("WebhooksRepo.update")((
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
        RETURNING ${sql.literal(COLUMNS)}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie))

    /**
     * A new signing secret; the one it replaces keeps signing for `overlapMs` more (a former one
     * still in its overlap is dropped: only the secret just replaced overlaps). Answers when the
     * overlap ends; undefined when the endpoint is gone. Both stay sealed (the former moves as it is).
     */
    const rotate = Effect.fn("WebhooksRepo.rotate")((webhookId: string, secret: string, overlapMs: number) =>
      sql<{ readonly webhookId: string; readonly previousSecretExpiresAt: Date }>`
        UPDATE webhooks SET
          previous_secret = secret,
          previous_secret_expires_at = now() + ${overlapMs} * interval '1 millisecond',
          secret = ${box.seal(secret)},
          updated_at = now()
        WHERE webhook_id = ${webhookId}::uuid AND deleted_at IS NULL
        RETURNING webhook_id, previous_secret_expires_at`.pipe(Effect.map((rows) => rows[0]), Effect.orDie))

    const remove = Effect.fn("WebhooksRepo.remove")((webhookId: string) =>
      sql`UPDATE webhooks SET deleted_at = now(), active = false WHERE webhook_id = ${webhookId}::uuid AND deleted_at IS NULL`.pipe(Effect.asVoid, Effect.orDie))

    /** The account's developer webhook (channel whatsapp), if it has one. */
    const developer = Effect.fn("WebhooksRepo.developer")((accountId: string) =>
      sql<WebhookRow>`
        SELECT ${sql.literal(COLUMNS)} FROM webhooks
        WHERE account_id = ${accountId} AND channel = 'whatsapp' AND deleted_at IS NULL`.pipe(Effect.map((rows) => rows[0]), Effect.orDie))

    /**
     * An endpoint as a delivery attempt reads it (Endpoints' cache fills): its secrets still sealed,
     * the former one only while its overlap lasts.
     */
    const sending = Effect.fn("WebhooksRepo.sending")((webhookId: string) =>
      Effect.map(
        sql<SendingRow>`
          SELECT webhook_id, account_id, url, secret,
                 CASE WHEN previous_secret_expires_at > now() THEN previous_secret END AS previous_secret,
                 CASE WHEN previous_secret_expires_at > now() THEN (extract(epoch FROM previous_secret_expires_at) * 1000)::float8 END
                   AS previous_secret_until,
                 (deleted_at IS NULL AND active) AS live
          FROM webhooks WHERE webhook_id = ${webhookId}::uuid`,
        (rows) => rows[0]
      ))

    /** The live subscriptions of an account (Subscriptions' cache fills). */
    const subscriptions = Effect.fn("WebhooksRepo.subscriptions")((accountId: string) =>
      sql<SubscriptionRow>`
        SELECT webhook_id::text, events, bot_id::text, channel, include_broadcast_messages FROM webhooks
        WHERE account_id = ${accountId}::uuid AND deleted_at IS NULL AND active`)

    /**
     * The endpoints an event goes to, in the caller's transaction: a configuration set's e-mail
     * destinations that asked for the type; the one endpoint of `only`; or the account's active
     * endpoints of the channel that asked for the type and cover the bot.
     */
    const targets = Effect.fn("WebhooksRepo.targets")((event: {
      readonly accountId: string
      readonly type: string
      readonly botId: string | null
      readonly only?: string | undefined
      readonly channel?: WebhookChannel | undefined
      readonly configSetId?: string | undefined
    }) =>
      event.configSetId !== undefined
        ? sql<{ webhookId: string }>`
            SELECT webhook_id FROM webhooks
            WHERE config_set_id = ${event.configSetId}::uuid AND account_id = ${event.accountId} AND channel = 'email'
              AND deleted_at IS NULL AND active AND ${event.type} = ANY(events)`
        : event.only !== undefined
        ? sql<{ webhookId: string }>`
            SELECT webhook_id FROM webhooks
            WHERE webhook_id = ${event.only}::uuid AND account_id = ${event.accountId} AND deleted_at IS NULL`
        : sql<{ webhookId: string }>`
            SELECT webhook_id FROM webhooks
            WHERE account_id = ${event.accountId} AND deleted_at IS NULL AND active AND channel = ${event.channel ?? "rcs"}
              AND ${event.type} = ANY(events) AND (bot_id IS NULL OR bot_id = ${event.botId}::uuid)`)

    /** Which of these endpoints are live (not deleted, active), in the caller's transaction. */
    const liveAmong = Effect.fn("WebhooksRepo.liveAmong")((webhookIds: ReadonlyArray<string>) =>
      Effect.map(
        sql<{ webhookId: string }>`
          SELECT webhook_id::text FROM webhooks WHERE webhook_id = ANY(${webhookIds}::uuid[]) AND deleted_at IS NULL AND active`,
        (rows) => new Set(rows.map((r) => r.webhookId))
      ))

    /**
     * A partner's configuration set gets a new e-mail destination (channel `email`), in the
     * caller's transaction (ConfigurationSets'); its id. clock_timestamp: destinations created in
     * one request keep the order they were given in.
     */
    const insertEmailDestination = Effect.fn("WebhooksRepo.insertEmailDestination")((input: {
      readonly partnerId: string
      readonly configSetId: string
      readonly url: string
      readonly events: ReadonlyArray<string>
      readonly secret: string
    }) =>
      Effect.map(
        sql<{ webhookId: string }>`
          INSERT INTO webhooks (account_id, url, events, bot_id, secret, channel, config_set_id, created_at)
          VALUES (${input.partnerId}::uuid, ${input.url}, ${input.events}::text[], NULL, ${box.seal(input.secret)}, 'email', ${input.configSetId}::uuid, clock_timestamp())
          RETURNING webhook_id::text`,
        (rows) => rows[0]!.webhookId
      ))

    /** A kept e-mail destination of the set, with its URL and events as given now (caller's transaction). */
    const updateEmailDestination = Effect.fn("WebhooksRepo.updateEmailDestination")((input: {
      readonly webhookId: string
      readonly configSetId: string
      readonly url: string
      readonly events: ReadonlyArray<string>
    }) =>
      sql`
        UPDATE webhooks SET url = ${input.url}, events = ${input.events}::text[], updated_at = now()
        WHERE webhook_id = ${input.webhookId}::uuid AND config_set_id = ${input.configSetId}::uuid`.pipe(Effect.asVoid))

    /**
     * Soft-deletes the set's live e-mail destinations (all, or those not in `keep`), in the
     * caller's transaction: their delivery log stays readable.
     */
    const removeEmailDestinations = Effect.fn("WebhooksRepo.removeEmailDestinations")((configSetId: string, keep?: ReadonlyArray<string>) =>
      (keep === undefined
        ? sql`
          UPDATE webhooks SET deleted_at = now(), active = false, updated_at = now()
          WHERE config_set_id = ${configSetId}::uuid AND channel = 'email' AND deleted_at IS NULL`
        : sql`
          UPDATE webhooks SET deleted_at = now(), active = false, updated_at = now()
          WHERE config_set_id = ${configSetId}::uuid AND channel = 'email' AND deleted_at IS NULL
            AND NOT (webhook_id = ANY(${keep}::uuid[]))`).pipe(Effect.asVoid))

    return {
      insert,
      list,
      stats,
      find,
      update,
      rotate,
      remove,
      developer,
      sending,
      subscriptions,
      targets,
      liveAmong,
      insertEmailDestination,
      updateEmailDestination,
      removeEmailDestinations
    } as const
  }),
  dependencies: [SecretBox.Default]
}) {}
