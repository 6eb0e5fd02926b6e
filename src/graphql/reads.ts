import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { type BroadcastRow, BroadcastsRepo, type BroadcastStatus, type TargetStatus } from "../broadcasts/BroadcastsRepo.ts"
import { CustomersRepo } from "../customers/CustomersRepo.ts"
import type { CustomerQuery } from "../customers/traitFilters.ts"
import { isUuid } from "../domain/ids.ts"
import { type PagePosition, positionOf } from "../storage/pageCursor.ts"
import { Wallet } from "../wallet/Wallet.ts"
import type { TimeIdPosition } from "./timeIdPosition.ts"
import type { CloudContent } from "../whatsapp/message/publicMessage.ts"
import { WaTemplatesRepo, type WaTemplateStatus } from "../whatsapp/templates/WaTemplatesRepo.ts"
import type { TemplateCategory } from "../whatsapp/templates/templateRules.ts"

export interface ConversationRow {
  readonly conversationId: string
  readonly customerId: string
  readonly status: "open" | "resolved"
  readonly assigneeUserId: string | null
  readonly assigneeAiAgentId: string | null
  readonly lastMessage: LastMessage | null
  readonly updatedAt: Date
  readonly position: string
}

/** What conversations.last_message holds (WaReports, WaSenderKind). */
export interface LastMessage {
  readonly direction: "inbound" | "outbound"
  readonly id: string
  readonly type: string
  readonly text: string | null
  readonly at: string
}

/** What an outbound message's row tells of it beyond its status: what was sent, and its template's body. */
export interface SentRow {
  /** wa_messages.content: what went to Meta. */
  readonly content: CloudContent
  readonly templateBody: string | null
  readonly templateCategory: string | null
}

export interface MessageRow extends Omit<SentRow, "content"> {
  readonly id: string
  readonly direction: "inbound" | "outbound"
  readonly type: string
  /** The inbound message's text as WaReports read it; an outbound one's is read from its content. */
  readonly text: string | null
  /** Outbound: wa_messages.content; inbound: Meta's webhook message (wa_inbound.payload). */
  readonly content: unknown
  readonly status: string | null
  readonly callbackData: string | null
  readonly at: string
}

/** An outbound message's template body (the BODY component's text) and category, from its template's row `t`. */
const TEMPLATE_COLUMNS = `(SELECT c ->> 'text' FROM jsonb_array_elements(t.components) c WHERE c ->> 'type' = 'BODY' LIMIT 1) AS template_body,
  t.category AS template_category`

const CONVERSATION_COLUMNS = `v.conversation_id::text, v.customer_id::text, v.status, v.assignee_user_id::text, v.assignee_ai_agent_id::text, v.last_message, v.updated_at,
  ${positionOf("v.created_at")} AS position`

/** A WhatsApp call as WaReports.recordCall stored it: direction and status as Meta sent them. */
export interface CallRow {
  readonly callId: string
  readonly conversationId: string
  readonly direction: string
  readonly status: string
  readonly durationSec: number
  readonly recordingUrl: string | null
  readonly occurredAt: Date
  /** occurred_at to the microsecond, as the cursor carries it. */
  readonly position: string
}

/**
 * Meta's call fields onto GraphQL's enums (docs/graphql.md, Calls), both ways: what a row shows and
 * the SQL a filter runs, kept together so the two agree. Meta sends USER_INITIATED (the customer
 * called) or BUSINESS_INITIATED; any other direction reads INBOUND, as recordCall stores a call
 * without one as USER_INITIATED. Statuses compare in any case: completed is COMPLETED, rejected
 * REJECTED, and everything else (missed, failed, unknown, a status Meta adds later) MISSED, so a
 * stored value never fails the enum.
 */
const OUTBOUND_CALL_DIRECTIONS = ["BUSINESS_INITIATED", "OUTBOUND"]
export type CallStatusName = "COMPLETED" | "MISSED" | "REJECTED"
export type DirectionName = "INBOUND" | "OUTBOUND"
export const callDirectionOf = (stored: string): DirectionName => (OUTBOUND_CALL_DIRECTIONS.includes(stored.toUpperCase()) ? "OUTBOUND" : "INBOUND")
export const callStatusOf = (stored: string): CallStatusName => {
  const status = stored.toLowerCase()
  return status === "completed" ? "COMPLETED" : status === "rejected" ? "REJECTED" : "MISSED"
}

const CALL_COLUMNS = `c.call_id, c.conversation_id::text, c.direction, c.status, c.duration_sec, c.recording_url, c.occurred_at,
  ${positionOf("c.occurred_at")} AS position`

/**
 * The SQL behind GraphQL's reads, every one scoped to the caller's account. The by-id reads take
 * many ids at once: they are DataLoader batch functions (one statement per level of a query).
 */
export class GraphqlReads extends Effect.Service<GraphqlReads>()("herald/graphql/GraphqlReads", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const customers = yield* CustomersRepo
    const templates = yield* WaTemplatesRepo
    const broadcasts = yield* BroadcastsRepo
    const wallet = yield* Wallet
    const conversationColumns = sql.literal(CONVERSATION_COLUMNS)

    const me = (accountId: string) =>
      sql<{ accountId: string; label: string; plan: string; planRatePerMinute: number | null; walletBalance: string; currency: string }>`
        SELECT account_id::text, label, plan, plan_rate_per_minute, wallet_balance::text, currency FROM accounts WHERE account_id = ${accountId}`.pipe(
        Effect.map((rows) => rows[0]!),
        Effect.orDie
      )

    const ledger = wallet.ledger

    const contactsByIds = (accountId: string, ids: ReadonlyArray<string>) =>
      Effect.map(customers.findMany(accountId, ids.filter(isUuid)), (rows) => new Map(rows.map((row) => [row.customerId, row])))

    const contacts = (accountId: string, query: CustomerQuery, after: PagePosition | undefined, limit: number) => customers.search({ accountId, query, after, limit })

    const conversationsByIds = (accountId: string, ids: ReadonlyArray<string>) =>
      Effect.map(
        sql<ConversationRow>`SELECT ${conversationColumns} FROM conversations v WHERE v.account_id = ${accountId} AND v.conversation_id = ANY(${ids.filter(isUuid)}::uuid[])`,
        (rows) => new Map(rows.map((row) => [row.conversationId, row]))
      ).pipe(Effect.orDie)

    /** A member by e-mail, or an AI agent as `ai:<id>` (a malformed id matches nothing). */
    const assigneeCondition = (named: string) => {
      if (!named.toLowerCase().startsWith("ai:")) return sql`v.assignee_user_id = (SELECT user_id FROM users WHERE lower(email) = ${named.toLowerCase()})`
      const agentId = named.slice(3).trim()
      return isUuid(agentId) ? sql`v.assignee_ai_agent_id = ${agentId}` : sql`FALSE`
    }

    const conversations = (
      accountId: string,
      filter: { readonly status?: "open" | "resolved" | undefined; readonly assigneeEmail?: string | undefined; readonly unassigned?: boolean | undefined; readonly customerId?: string | undefined },
      after: PagePosition | undefined,
      limit: number
    ) =>
      sql<ConversationRow>`
        SELECT ${conversationColumns} FROM conversations v
        WHERE ${
        sql.and([
          sql`v.account_id = ${accountId}`,
          ...(filter.customerId === undefined ? [] : [sql`v.customer_id = ${filter.customerId}`]),
          ...(filter.status === undefined ? [] : [sql`v.status = ${filter.status}`]),
          ...(filter.unassigned === true ? [sql`v.assignee_user_id IS NULL AND v.assignee_ai_agent_id IS NULL`] : []),
          ...(filter.assigneeEmail === undefined ? [] : [assigneeCondition(filter.assigneeEmail.trim())]),
          ...(after === undefined ? [] : [sql`(v.created_at, v.conversation_id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`])
        ])
      }
        ORDER BY v.created_at DESC, v.conversation_id DESC LIMIT ${limit + 1}`.pipe(Effect.orDie)

    /** The first page of conversations of each contact, in one statement (a nested connection). */
    const conversationsOfContacts = (accountId: string, customerIds: ReadonlyArray<string>, limit: number) =>
      Effect.map(
        sql<ConversationRow & { forCustomer: string }>`
          SELECT ids.id::text AS for_customer, x.* FROM unnest(${customerIds.filter(isUuid)}::uuid[]) AS ids(id)
          CROSS JOIN LATERAL (
            SELECT ${conversationColumns} FROM conversations v
            WHERE v.account_id = ${accountId} AND v.customer_id = ids.id
            ORDER BY v.created_at DESC, v.conversation_id DESC LIMIT ${limit + 1}
          ) x`,
        (rows) => {
          const by = new Map<string, Array<ConversationRow>>()
          for (const row of rows) {
            const list = by.get(row.forCustomer) ?? []
            list.push(row)
            by.set(row.forCustomer, list)
          }
          return by
        }
      ).pipe(Effect.orDie)

    /**
     * Assignees by user id: the e-mail, and the member_id the team list shows (GET /api/v1/rcs/team):
     * the membership's id, none for the account's owner (the contract's empty member_id) nor for a
     * user who is no longer a member.
     */
    const membersOf = (accountId: string, userIds: ReadonlyArray<string>) =>
      Effect.map(
        sql<{ userId: string; email: string; memberId: string | null }>`
          SELECT u.user_id::text, u.email, CASE WHEN m.role <> 'owner' THEN m.member_id::text END AS member_id
          FROM users u LEFT JOIN memberships m ON m.user_id = u.user_id AND m.account_id = ${accountId}
          WHERE u.user_id = ANY(${userIds.filter(isUuid)}::uuid[])`,
        (rows) => new Map(rows.map((row) => [row.userId, row]))
      ).pipe(Effect.orDie)

    const templateColumns = sql.literal(TEMPLATE_COLUMNS)

    /** Outbound messages' statuses, callback data and content by Herald's message id. */
    const sendsOf = (accountId: string, messageIds: ReadonlyArray<string>) =>
      Effect.map(
        sql<{ messageId: string; status: string; callbackData: string | null } & SentRow>`
          SELECT m.message_id::text, m.status, m.callback_data, m.content, ${templateColumns}
          FROM wa_messages m LEFT JOIN wa_templates t ON t.template_id = m.template_id
          WHERE m.account_id = ${accountId} AND m.message_id = ANY(${messageIds.filter(isUuid)}::uuid[])`,
        (rows) => new Map(rows.map((row) => [row.messageId, row]))
      ).pipe(Effect.orDie)

    /** Inbound messages as Meta delivered them, by Meta's id (a conversation's last message). */
    const inboundOf = (accountId: string, wamids: ReadonlyArray<string>) =>
      Effect.map(
        sql<{ upstreamId: string; payload: unknown }>`
          SELECT upstream_id, payload FROM wa_inbound WHERE account_id = ${accountId} AND upstream_id = ANY(${wamids}::text[])`,
        (rows) => new Map(rows.map((row) => [row.upstreamId, row.payload]))
      ).pipe(Effect.orDie)

    /** A conversation's messages both ways, newest first. */
    const messages = (accountId: string, conversationId: string, after: TimeIdPosition | undefined, limit: number) =>
      Effect.gen(function*() {
        const at = sql.literal(`'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`)
        return yield* sql<MessageRow>`
          WITH conv AS (SELECT conversation_id, phone_number_id, customer_phone FROM conversations WHERE conversation_id = ${conversationId} AND account_id = ${accountId}),
          both_ways AS (
            SELECT i.upstream_id AS id, 'inbound' AS direction, i.type, i.text, i.payload AS content, NULL::text AS template_body,
                   NULL::text AS template_category, NULL::text AS status, NULL::text AS callback_data, i.received_at AS t
            FROM wa_inbound i JOIN conv ON i.conversation_id = conv.conversation_id
            UNION ALL
            SELECT m.message_id::text, 'outbound', m.type, NULL, m.content, ${templateColumns}, m.status, m.callback_data, m.created_at
            FROM wa_messages m JOIN conv ON m.phone_number_id = conv.phone_number_id AND m.recipient = conv.customer_phone
            LEFT JOIN wa_templates t ON t.template_id = m.template_id
          )
          SELECT id, direction, type, text, content, template_body, template_category, status, callback_data,
                 to_char(t AT TIME ZONE 'UTC', ${at}) AS at FROM both_ways
          ${after === undefined ? sql`` : sql`WHERE (t, id) < (${after.at}::timestamptz, ${after.id})`}
          ORDER BY t DESC, id DESC LIMIT ${limit + 1}`.pipe(Effect.orDie)
      })

    const templatesByIds = (accountId: string, ids: ReadonlyArray<string>) =>
      Effect.map(Effect.forEach(ids.filter(isUuid), (id) => templates.find(accountId, id)), (rows) =>
        new Map(rows.flatMap((row) => (row === undefined ? [] : [[row.templateId, row] as const]))))

    const templatePage = (accountId: string, status: WaTemplateStatus | undefined, category: TemplateCategory | undefined, after: PagePosition | undefined, limit: number) =>
      templates.page({ accountId, status, category, after, limit })

    /** One of the account's broadcasts (any bot: the secret key is account-wide), with its counters: REST's read. */
    const broadcast = (accountId: string, broadcastId: string): Effect.Effect<BroadcastRow | undefined> =>
      isUuid(broadcastId) ? broadcasts.find(accountId, broadcastId) : Effect.succeed(undefined)

    /** The account's broadcasts newest first: REST's list (the same statement). */
    const broadcastPage = (
      accountId: string,
      filter: { readonly status?: BroadcastStatus | undefined; readonly botId?: string | undefined },
      after: PagePosition | undefined,
      limit: number
    ) => broadcasts.page(accountId, { after, limit, bots: filter.botId === undefined ? undefined : [filter.botId], status: filter.status })

    /**
     * A broadcast's targets newest first, of any of `statuses` when given, before target_no `before`:
     * REST's read. The caller has checked the broadcast is the account's.
     */
    const broadcastTargets = (broadcastId: string, statuses: ReadonlyArray<TargetStatus> | undefined, before: number | undefined, limit: number) =>
      broadcasts.targets(broadcastId, { before, limit, statuses })

    const callColumns = sql.literal(CALL_COLUMNS)

    /** Calls by Meta's call id, the account's only. */
    const callsByIds = (accountId: string, ids: ReadonlyArray<string>) =>
      Effect.map(
        sql<CallRow>`SELECT ${callColumns} FROM wa_calls c WHERE c.account_id = ${accountId} AND c.call_id = ANY(${ids}::text[])`,
        (rows) => new Map(rows.map((row) => [row.callId, row]))
      ).pipe(Effect.orDie)

    /** The account's calls newest first (occurred_at, then call_id: index wa_calls_account_idx); filters in SQL, mapped back to Meta's values. */
    const calls = (accountId: string, filter: { readonly status?: CallStatusName | undefined; readonly direction?: DirectionName | undefined }, after: TimeIdPosition | undefined, limit: number) =>
      Effect.gen(function*() {
        const status = filter.status === undefined ? [] : [
          filter.status === "COMPLETED"
            ? sql`lower(c.status) = 'completed'`
            : filter.status === "REJECTED"
            ? sql`lower(c.status) = 'rejected'`
            : sql`lower(c.status) NOT IN ('completed', 'rejected')`
        ]
        const direction = filter.direction === undefined ? [] : [
          filter.direction === "OUTBOUND" ? sql`upper(c.direction) IN ${sql.in(OUTBOUND_CALL_DIRECTIONS)}` : sql`upper(c.direction) NOT IN ${sql.in(OUTBOUND_CALL_DIRECTIONS)}`
        ]
        return yield* sql<CallRow>`
          SELECT ${callColumns} FROM wa_calls c
          WHERE ${
          sql.and([
            sql`c.account_id = ${accountId}`,
            ...status,
            ...direction,
            ...(after === undefined ? [] : [sql`(c.occurred_at, c.call_id) < (${after.at}::timestamptz, ${after.id})`])
          ])
        }
          ORDER BY c.occurred_at DESC, c.call_id DESC LIMIT ${limit + 1}`.pipe(Effect.orDie)
      })

    return {
      me,
      ledger,
      contactsByIds,
      contacts,
      conversationsByIds,
      conversations,
      conversationsOfContacts,
      membersOf,
      sendsOf,
      inboundOf,
      messages,
      templatesByIds,
      templatePage,
      broadcast,
      broadcastPage,
      broadcastTargets,
      callsByIds,
      calls
    } as const
  }),
  dependencies: [CustomersRepo.Default, WaTemplatesRepo.Default, Wallet.Default, BroadcastsRepo.Default]
}) {}
