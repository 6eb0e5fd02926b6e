import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { MessageContent } from "../domain/content.ts"
import type { GatewayErrorRecord } from "../domain/gatewayError.ts"
import { positionOf } from "../storage/pageCursor.ts"

export type BroadcastStatus = "scheduled" | "queued" | "running" | "completed" | "cancelled"
export type TargetStatus = "pending" | "unconfirmed" | "sent" | "delivered" | "read" | "failed" | "cancelled"

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
  coalesce(sum(cancelled_count), 0)::int AS cancelled_count`

/** Columns of a broadcast read as `b`, its counters joined as `c` (COUNTERS_JOIN). */
const BROADCAST_COLUMNS = `b.broadcast_id, b.account_id, b.bot_id, b.template_id, b.list_id, b.name, b.status, b.scheduled_at, b.total_count,
  c.sent_count, c.delivered_count, c.read_count, c.failed_count, c.cancelled_count, b.created_at, b.started_at, b.completed_at, b.cancelled_at,
  b.variables, ${positionOf("b.created_at")} AS position`

const COUNTERS_JOIN = `CROSS JOIN LATERAL (SELECT ${SUMS} FROM broadcast_counters WHERE broadcast_counters.broadcast_id = b.broadcast_id) c`

export interface TargetRow {
  readonly targetNo: number
  readonly phone: string
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
  readonly totalCount: number
  readonly sentCount: number
  readonly deliveredCount: number
  readonly readCount: number
  readonly failedCount: number
  readonly cancelledCount: number
}

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
    }) =>
      sql<BroadcastRow>`
        WITH b AS (
          INSERT INTO broadcasts (account_id, bot_id, template_id, list_id, name, content, variables, price, status, scheduled_at)
          VALUES (${input.accountId}, ${input.botId}, ${input.templateId}, ${input.listId}, ${input.name}, ${JSON.stringify(input.content)}::jsonb,
                  ${input.variables === null ? null : JSON.stringify(input.variables)}::jsonb,
                  ${input.price}, ${input.scheduledAt === null ? "queued" : "scheduled"}, ${input.scheduledAt?.toISOString() ?? null}::timestamptz)
          RETURNING *
        ), c AS (SELECT 0 AS sent_count, 0 AS delivered_count, 0 AS read_count, 0 AS failed_count, 0 AS cancelled_count)
        SELECT ${sql.literal(BROADCAST_COLUMNS)} FROM b, c`.pipe(Effect.map((rows) => rows[0]!))

    const find = (accountId: string, broadcastId: string) =>
      sql<BroadcastRow>`
        SELECT ${sql.literal(BROADCAST_COLUMNS)} FROM broadcasts b ${sql.literal(COUNTERS_JOIN)}
        WHERE b.account_id = ${accountId}::uuid AND b.broadcast_id = ${broadcastId}::uuid`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    /** A page, newest first, after `after` (a position) when given; bots limits to a bot scope. */
    const page = (accountId: string, options: {
      after: { createdAt: string; id: string } | undefined
      limit: number
      bots: ReadonlyArray<string> | undefined
      status: BroadcastStatus | undefined
    }) =>
      sql<BroadcastRow>`
        SELECT ${sql.literal(BROADCAST_COLUMNS)} FROM broadcasts b ${sql.literal(COUNTERS_JOIN)}
        WHERE b.account_id = ${accountId}::uuid
        ${options.bots === undefined ? sql`` : sql`AND b.bot_id::text IN ${sql.in(options.bots.length === 0 ? [""] : options.bots)}`}
        ${options.status === undefined ? sql`` : sql`AND b.status = ${options.status}`}
        ${options.after === undefined ? sql`` : sql`AND (b.created_at, b.broadcast_id) < (${options.after.createdAt}::timestamptz, ${options.after.id}::uuid)`}
        ORDER BY b.created_at DESC, b.broadcast_id DESC
        LIMIT ${options.limit + 1}`.pipe(Effect.orDie)

    /** Targets newest first (target_no descending) below `before`, optionally of some statuses. */
    const targets = (broadcastId: string, options: { before: number | undefined; limit: number; statuses: ReadonlyArray<TargetStatus> | undefined }) =>
      sql<TargetRow>`
        SELECT target_no, phone, message_id, status, failure_reason, error, sent_at, delivered_at, read_at, failed_at
        FROM broadcast_targets
        WHERE broadcast_id = ${broadcastId}::uuid
        ${options.statuses === undefined ? sql`` : sql`AND status IN ${sql.in(options.statuses)}`}
        ${options.before === undefined ? sql`` : sql`AND target_no < ${options.before}`}
        ORDER BY target_no DESC
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
        readonly botId: string
        readonly listId: string
        readonly status: BroadcastStatus
        readonly scheduledAt: Date | null
        readonly content: MessageContent
        /** Null: the content has no placeholders and goes out as it is. */
        readonly variables: Readonly<Record<string, string>> | null
        readonly price: string
      }>`
        SELECT account_id, bot_id, list_id, status, scheduled_at, content, variables, price::text
        FROM broadcasts WHERE broadcast_id = ${broadcastId}::uuid`.pipe(Effect.map((rows) => rows[0]))

    /** The status alone: what a chunk checks before each slice (a cancel stops it). */
    const status = (broadcastId: string) =>
      sql<{ readonly status: BroadcastStatus }>`SELECT status FROM broadcasts WHERE broadcast_id = ${broadcastId}::uuid`.pipe(
        Effect.map((rows) => rows[0]?.status)
      )

    const counters = (broadcastId: string) =>
      sql<Counters>`
        SELECT b.status, b.total_count, c.sent_count, c.delivered_count, c.read_count, c.failed_count, c.cancelled_count
        FROM broadcasts b ${sql.literal(COUNTERS_JOIN)} WHERE b.broadcast_id = ${broadcastId}::uuid`.pipe(Effect.map((rows) => rows[0]))


    const markRunning = (broadcastId: string, total: number) =>
      sql`
        UPDATE broadcasts SET status = 'running', total_count = ${total}, started_at = now()
        WHERE broadcast_id = ${broadcastId}::uuid AND status IN ('scheduled', 'queued')`

    /** Whether it was still running (a cancel committed first leaves it cancelled). */
    const markCompleted = (broadcastId: string) =>
      sql`UPDATE broadcasts SET status = 'completed', completed_at = now() WHERE broadcast_id = ${broadcastId}::uuid AND status = 'running' RETURNING 1`.pipe(
        Effect.map((rows) => rows.length > 0)
      )


    return {
      insert,
      find,
      page,
      targets,
      markCancelled,
      header,
      status,
      counters,
      markRunning,
      markCompleted
    } as const
  })
}) {}
