import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { MessageContent } from "../domain/content.ts"
import type { GatewayErrorRecord } from "../domain/gatewayError.ts"
import { positionOf } from "../storage/pageCursor.ts"
import type { TemplateCategory, WaTemplateDefinition } from "../whatsapp/templates/templateRules.ts"

export type BroadcastStatus = "scheduled" | "queued" | "running" | "completed" | "cancelled"
export type TargetStatus = "pending" | "unconfirmed" | "sent" | "delivered" | "read" | "failed" | "cancelled" | "skipped"
export type BroadcastChannel = "rcs" | "whatsapp"
/** An RCS broadcast's targets are never skipped (only a campaign's opted-out customers are). */
export type RcsTargetStatus = Exclude<TargetStatus, "skipped">

export interface BroadcastRow {
  readonly broadcastId: string
  readonly accountId: string
  readonly botId: string
  readonly templateId: string
  readonly listId: string
  readonly name: string
  readonly status: BroadcastStatus
  readonly scheduledAt: Date | null
  readonly totalCount: number
  readonly sentCount: number
  readonly deliveredCount: number
  readonly readCount: number
  readonly failedCount: number
  readonly cancelledCount: number
  readonly createdAt: Date
  readonly startedAt: Date | null
  readonly completedAt: Date | null
  readonly cancelledAt: Date | null
  /** Default values of the template's placeholders; null when it has none (docs/broadcasts.md, Personalisation). */
  readonly variables: Readonly<Record<string, string>> | null
  /** created_at as a page position prints it. */
  readonly position: string
}


const SUMS = `coalesce(sum(sent_count), 0)::int AS sent_count, coalesce(sum(delivered_count), 0)::int AS delivered_count,
  coalesce(sum(read_count), 0)::int AS read_count, coalesce(sum(failed_count), 0)::int AS failed_count,
  coalesce(sum(cancelled_count), 0)::int AS cancelled_count, coalesce(sum(skipped_count), 0)::int AS skipped_count`

/** Columns of a broadcast read as `b`, its counters joined as `c` (COUNTERS_JOIN). */
const BROADCAST_COLUMNS = `b.broadcast_id, b.account_id, b.bot_id, b.template_id, b.list_id, b.name, b.status, b.scheduled_at, b.total_count,
  c.sent_count, c.delivered_count, c.read_count, c.failed_count, c.cancelled_count, b.created_at, b.started_at, b.completed_at, b.cancelled_at,
  b.variables, ${positionOf("b.created_at")} AS position`

const COUNTERS_JOIN = `CROSS JOIN LATERAL (SELECT ${SUMS} FROM broadcast_counters WHERE broadcast_counters.broadcast_id = b.broadcast_id) c`

export interface TargetRow {
  readonly targetNo: number
  readonly phone: string
  /** The customer a campaign's target was written from; null for an RCS broadcast's. */
  readonly customerId: string | null
  readonly messageId: string
  readonly status: TargetStatus
  readonly failureReason: string | null
  readonly error: GatewayErrorRecord | null
  readonly sentAt: Date | null
  readonly deliveredAt: Date | null
  readonly readAt: Date | null
  readonly failedAt: Date | null
}

export interface Counters {
  readonly status: BroadcastStatus
  readonly channel: BroadcastChannel
  readonly totalCount: number
  readonly sentCount: number
  readonly deliveredCount: number
  readonly readCount: number
  readonly failedCount: number
  readonly cancelledCount: number
  /** Customers of a campaign's audience who had opted out: never sent or charged (always 0 for RCS). */
  readonly skippedCount: number
}

/** A campaign's template and its values, as a Template send's data names them (values may hold `{{trait.x}}`). */
export interface CampaignTemplate {
  readonly name: string
  readonly languageCode: string
  readonly headerValues?: ReadonlyArray<string> | undefined
  readonly bodyValues?: ReadonlyArray<string> | undefined
  readonly buttonValues?: Readonly<Record<string, ReadonlyArray<string>>> | undefined
}

/** What a WhatsApp campaign sends: its template as the send names it, frozen with the definition it was checked against. */
export interface CampaignContent {
  /** The template's values as the campaign gave them (`{{trait.x}}` placeholders unfilled). */
  readonly data: CampaignTemplate
  readonly definition: WaTemplateDefinition
  readonly category: TemplateCategory
}

/** Who a campaign goes to, frozen when it was created: a customer query (a segment's, or filters and tags) or customers by id. */
/** A trait filter as a client wrote it (checked: parseCustomerQuery reads it again). */
export interface WrittenFilter {
  readonly trait: string
  readonly op: string
  readonly value?: unknown
}

export type Audience =
  | { readonly kind: "query"; readonly filters: ReadonlyArray<WrittenFilter>; readonly tags: ReadonlyArray<string>; readonly segmentId: string | null }
  | { readonly kind: "customers"; readonly ids: ReadonlyArray<string> }
  /** A retry: the targets of broadcast `of` that failed with a category worth trying again (RETRY_CATEGORIES). */
  | { readonly kind: "retry"; readonly of: string }

export interface CampaignRow {
  readonly broadcastId: string
  readonly accountId: string
  readonly phoneNumberId: string
  readonly templateId: string
  readonly name: string
  readonly status: BroadcastStatus
  readonly scheduledAt: Date | null
  readonly totalCount: number
  readonly sentCount: number
  readonly deliveredCount: number
  readonly readCount: number
  readonly failedCount: number
  readonly cancelledCount: number
  readonly skippedCount: number
  readonly createdAt: Date
  readonly startedAt: Date | null
  readonly completedAt: Date | null
  readonly cancelledAt: Date | null
  readonly content: CampaignContent
  readonly audience: Audience
  /** Fallbacks of the trait placeholders, by trait name; null when the values use none. */
  readonly variables: Readonly<Record<string, string>> | null
  readonly price: string
  readonly position: string
}

const CAMPAIGN_COLUMNS = `b.broadcast_id, b.account_id, b.phone_number_id, b.template_id, b.name, b.status, b.scheduled_at, b.total_count,
  c.sent_count, c.delivered_count, c.read_count, c.failed_count, c.cancelled_count, c.skipped_count, b.created_at, b.started_at,
  b.completed_at, b.cancelled_at, b.content, b.audience, b.variables, b.price::text, ${positionOf("b.created_at")} AS position`

/**
 * Broadcasts as their owner and users read them: the one writer of the `broadcasts` table (created
 * by the API, cancelled by a user, marked running and completed by the broadcast actor), and the
 * reads of a broadcast with its counters and of its targets. The chunk runner's write path (targets,
 * counters, chunk claims) is BroadcastTargets.
 */
export class BroadcastsRepo extends Effect.Service<BroadcastsRepo>()("herald/broadcasts/BroadcastsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = (input: {
      accountId: string
      botId: string
      templateId: string
      listId: string
      name: string
      content: MessageContent
      /** Defaults of the content's placeholders; null when it has none (sent as written). */
      variables: Readonly<Record<string, string>> | null
      price: number
      scheduledAt: Date | null
      /** A retry of another broadcast's failed targets (its list kept for the record); absent: the list's contacts. */
      retryOf?: string | undefined
    }) =>
      sql<BroadcastRow>`
        WITH b AS (
          INSERT INTO broadcasts (account_id, bot_id, template_id, list_id, name, content, variables, price, status, scheduled_at, audience)
          VALUES (${input.accountId}, ${input.botId}, ${input.templateId}, ${input.listId}, ${input.name}, ${JSON.stringify(input.content)}::jsonb,
                  ${input.variables === null ? null : JSON.stringify(input.variables)}::jsonb,
                  ${input.price}, ${input.scheduledAt === null ? "queued" : "scheduled"}, ${input.scheduledAt?.toISOString() ?? null}::timestamptz,
                  ${input.retryOf === undefined ? null : JSON.stringify({ kind: "retry", of: input.retryOf })}::jsonb)
          RETURNING *
        ), c AS (SELECT 0 AS sent_count, 0 AS delivered_count, 0 AS read_count, 0 AS failed_count, 0 AS cancelled_count)
        SELECT ${sql.literal(BROADCAST_COLUMNS)} FROM b, c`.pipe(Effect.map((rows) => rows[0]!))

    const find = (accountId: string, broadcastId: string) =>
      sql<BroadcastRow>`
        SELECT ${sql.literal(BROADCAST_COLUMNS)} FROM broadcasts b ${sql.literal(COUNTERS_JOIN)}
        WHERE b.account_id = ${accountId}::uuid AND b.broadcast_id = ${broadcastId}::uuid AND b.channel = 'rcs'`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    /** A page, newest first, after `after` (a position) when given; bots limits to a bot scope. */
    const page = (accountId: string, options: {
      after: { createdAt: string; id: string } | undefined
      limit: number
      bots: ReadonlyArray<string> | undefined
      status: BroadcastStatus | undefined
    }) =>
      sql<BroadcastRow>`
        SELECT ${sql.literal(BROADCAST_COLUMNS)} FROM broadcasts b ${sql.literal(COUNTERS_JOIN)}
        WHERE b.account_id = ${accountId}::uuid AND b.channel = 'rcs'
        ${options.bots === undefined ? sql`` : sql`AND b.bot_id::text IN ${sql.in(options.bots.length === 0 ? [""] : options.bots)}`}
        ${options.status === undefined ? sql`` : sql`AND b.status = ${options.status}`}
        ${options.after === undefined ? sql`` : sql`AND (b.created_at, b.broadcast_id) < (${options.after.createdAt}::timestamptz, ${options.after.id}::uuid)`}
        ORDER BY b.created_at DESC, b.broadcast_id DESC
        LIMIT ${options.limit + 1}`.pipe(Effect.orDie)

    /** Targets newest first (target_no descending) below `before`, optionally of some statuses. */
    const targets = (broadcastId: string, options: { before: number | undefined; limit: number; statuses: ReadonlyArray<TargetStatus> | undefined }) =>
      sql<TargetRow>`
        SELECT target_no, phone, customer_id::text, message_id, status, failure_reason, error, sent_at, delivered_at, read_at, failed_at
        FROM broadcast_targets
        WHERE broadcast_id = ${broadcastId}::uuid
        ${options.statuses === undefined ? sql`` : sql`AND status IN ${sql.in(options.statuses)}`}
        ${options.before === undefined ? sql`` : sql`AND target_no < ${options.before}`}
        ORDER BY target_no DESC
        LIMIT ${options.limit + 1}`.pipe(Effect.orDie)

    const insertCampaign = (input: {
      accountId: string
      phoneNumberId: string
      templateId: string
      name: string
      content: CampaignContent
      audience: Audience
      variables: Readonly<Record<string, string>> | null
      price: number
      scheduledAt: Date | null
    }) =>
      sql<CampaignRow>`
        WITH b AS (
          INSERT INTO broadcasts (account_id, channel, phone_number_id, template_id, name, content, audience, variables, price, status, scheduled_at)
          VALUES (${input.accountId}, 'whatsapp', ${input.phoneNumberId}, ${input.templateId}, ${input.name}, ${JSON.stringify(input.content)}::jsonb,
                  ${JSON.stringify(input.audience)}::jsonb, ${input.variables === null ? null : JSON.stringify(input.variables)}::jsonb,
                  ${input.price}, ${input.scheduledAt === null ? "queued" : "scheduled"}, ${input.scheduledAt?.toISOString() ?? null}::timestamptz)
          RETURNING *
        ), c AS (SELECT 0 AS sent_count, 0 AS delivered_count, 0 AS read_count, 0 AS failed_count, 0 AS cancelled_count, 0 AS skipped_count)
        SELECT ${sql.literal(CAMPAIGN_COLUMNS)} FROM b, c`.pipe(Effect.map((rows) => rows[0]!))

    const findCampaign = (accountId: string, broadcastId: string) =>
      sql<CampaignRow>`
        SELECT ${sql.literal(CAMPAIGN_COLUMNS)} FROM broadcasts b ${sql.literal(COUNTERS_JOIN)}
        WHERE b.account_id = ${accountId}::uuid AND b.broadcast_id = ${broadcastId}::uuid AND b.channel = 'whatsapp'`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    /** A page of the account's campaigns, newest first, after `after` (a position) when given. */
    const campaignPage = (accountId: string, options: { after: { createdAt: string; id: string } | undefined; limit: number; status: BroadcastStatus | undefined }) =>
      sql<CampaignRow>`
        SELECT ${sql.literal(CAMPAIGN_COLUMNS)} FROM broadcasts b ${sql.literal(COUNTERS_JOIN)}
        WHERE b.account_id = ${accountId}::uuid AND b.channel = 'whatsapp'
        ${options.status === undefined ? sql`` : sql`AND b.status = ${options.status}`}
        ${options.after === undefined ? sql`` : sql`AND (b.created_at, b.broadcast_id) < (${options.after.createdAt}::timestamptz, ${options.after.id}::uuid)`}
        ORDER BY b.created_at DESC, b.broadcast_id DESC
        LIMIT ${options.limit + 1}`.pipe(Effect.orDie)

    /** Cancels a broadcast not finished yet; false when it had finished (or is not there). */
    const markCancelled = (accountId: string, broadcastId: string) =>
      sql`
        UPDATE broadcasts SET status = 'cancelled', cancelled_at = now()
        WHERE account_id = ${accountId}::uuid AND broadcast_id = ${broadcastId}::uuid AND status IN ('scheduled', 'queued', 'running')
        RETURNING broadcast_id`.pipe(Effect.map((rows) => rows.length > 0))

    /** What the broadcast actor and the chunk senders read of a broadcast. */
    const header = (broadcastId: string) =>
      sql<{
        readonly accountId: string
        readonly channel: BroadcastChannel
        /** The RCS broadcast's bot (null for a campaign). */
        readonly botId: string | null
        readonly listId: string | null
        /** The campaign's number (null for an RCS broadcast). */
        readonly phoneNumberId: string | null
        readonly audience: Audience | null
        readonly status: BroadcastStatus
        readonly scheduledAt: Date | null
        readonly content: MessageContent
        /** Null: the content has no placeholders and goes out as it is. */
        readonly variables: Readonly<Record<string, string>> | null
        readonly price: string
      }>`
        SELECT account_id, channel, bot_id, list_id, phone_number_id, audience, status, scheduled_at, content, variables, price::text
        FROM broadcasts WHERE broadcast_id = ${broadcastId}::uuid`.pipe(Effect.map((rows) => rows[0]))

    /** The status alone: what a chunk checks before each slice (a cancel stops it). */
    const status = (broadcastId: string) =>
      sql<{ readonly status: BroadcastStatus }>`SELECT status FROM broadcasts WHERE broadcast_id = ${broadcastId}::uuid`.pipe(
        Effect.map((rows) => rows[0]?.status)
      )

    const counters = (broadcastId: string) =>
      sql<Counters>`
        SELECT b.status, b.channel, b.total_count, c.sent_count, c.delivered_count, c.read_count, c.failed_count, c.cancelled_count, c.skipped_count
        FROM broadcasts b ${sql.literal(COUNTERS_JOIN)} WHERE b.broadcast_id = ${broadcastId}::uuid`.pipe(Effect.map((rows) => rows[0]))


    const markRunning = (broadcastId: string, total: number) =>
      sql`
        UPDATE broadcasts SET status = 'running', total_count = ${total}, started_at = now()
        WHERE broadcast_id = ${broadcastId}::uuid AND status IN ('scheduled', 'queued')`

    /**
     * A campaign's total once every target is written: its audience was counted when it started,
     * and a customer whose traits changed meanwhile may have come in or gone out.
     */
    const setTotal = (broadcastId: string, total: number) =>
      sql`UPDATE broadcasts SET total_count = ${total} WHERE broadcast_id = ${broadcastId}::uuid AND total_count <> ${total}`

    /** Whether it was still running (a cancel committed first leaves it cancelled). */
    const markCompleted = (broadcastId: string) =>
      sql`UPDATE broadcasts SET status = 'completed', completed_at = now() WHERE broadcast_id = ${broadcastId}::uuid AND status = 'running' RETURNING 1`.pipe(
        Effect.map((rows) => rows.length > 0)
      )


    return {
      insert,
      insertCampaign,
      find,
      findCampaign,
      page,
      campaignPage,
      targets,
      markCancelled,
      header,
      status,
      counters,
      markRunning,
      setTotal,
      markCompleted
    } as const
  })
}) {}
