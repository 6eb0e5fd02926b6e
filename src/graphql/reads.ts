import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { CustomersRepo } from "../customers/CustomersRepo.ts"
import type { CustomerQuery } from "../customers/traitFilters.ts"
import { InvalidRequest } from "../domain/errors.ts"
import { isUuid } from "../domain/ids.ts"
import { isUtcMicros } from "../domain/timestamps.ts"
import { type PagePosition, positionOf, readCursor } from "../storage/pageCursor.ts"
import { Wallet } from "../wallet/Wallet.ts"
import { WaTemplatesRepo, type WaTemplateStatus } from "../whatsapp/templates/WaTemplatesRepo.ts"
import type { TemplateCategory } from "../whatsapp/templates/templateRules.ts"

export interface ConversationRow {
  readonly conversationId: string
  readonly customerId: string
  readonly status: "open" | "resolved"
  readonly assigneeUserId: string | null
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

export interface MessageRow {
  readonly id: string
  readonly direction: "inbound" | "outbound"
  readonly type: string
  readonly text: string | null
  readonly status: string | null
  readonly callbackData: string | null
  readonly at: string
}

const CONVERSATION_COLUMNS = `v.conversation_id::text, v.customer_id::text, v.status, v.assignee_user_id::text, v.last_message, v.updated_at,
  ${positionOf("v.created_at")} AS position`

/** A message list's cursor: the last message's time (to the microsecond) and id (a wamid or a uuid). */
const encodeMessageCursor = (row: MessageRow) => Buffer.from(JSON.stringify([row.at, row.id])).toString("base64url")
const decodeMessageCursor = (cursor: string | null | undefined): Effect.Effect<{ at: string; id: string } | undefined, InvalidRequest> => {
  if (cursor === undefined || cursor === null || cursor === "") return Effect.succeed(undefined)
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    if (Array.isArray(parsed) && parsed.length === 2 && typeof parsed[0] === "string" && isUtcMicros(parsed[0]) && typeof parsed[1] === "string" && parsed[1].length <= 200) {
      return Effect.succeed({ at: parsed[0], id: parsed[1] })
    }
  } catch {
    // not one of ours: answered below
  }
  return Effect.fail(InvalidRequest.single("page.cursor", "is not a cursor this list gave out"))
}
export { encodeMessageCursor }

/**
 * The SQL behind GraphQL's reads, every one scoped to the caller's account. The by-id reads take
 * many ids at once: they are DataLoader batch functions (one statement per level of a query).
 */
export class GraphqlReads extends Effect.Service<GraphqlReads>()("herald/graphql/GraphqlReads", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const customers = yield* CustomersRepo
    const templates = yield* WaTemplatesRepo
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

    const contacts = (accountId: string, query: CustomerQuery, cursor: string | null | undefined, limit: number) =>
      Effect.flatMap(readCursor(cursor ?? undefined), (after) => customers.search({ accountId, query, after, limit }))

    const conversationsByIds = (accountId: string, ids: ReadonlyArray<string>) =>
      Effect.map(
        sql<ConversationRow>`SELECT ${conversationColumns} FROM conversations v WHERE v.account_id = ${accountId} AND v.conversation_id = ANY(${ids.filter(isUuid)}::uuid[])`,
        (rows) => new Map(rows.map((row) => [row.conversationId, row]))
      ).pipe(Effect.orDie)

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
          ...(filter.unassigned === true ? [sql`v.assignee_user_id IS NULL`] : []),
          ...(filter.assigneeEmail === undefined ? [] : [
            sql`v.assignee_user_id = (SELECT user_id FROM users WHERE lower(email) = ${filter.assigneeEmail.trim().toLowerCase()})`
          ]),
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

    /** E-mails of users by id (assignees). */
    const emailsOf = (userIds: ReadonlyArray<string>) =>
      Effect.map(
        sql<{ userId: string; email: string }>`SELECT user_id::text, email FROM users WHERE user_id = ANY(${userIds.filter(isUuid)}::uuid[])`,
        (rows) => new Map(rows.map((row) => [row.userId, row.email]))
      ).pipe(Effect.orDie)

    /** Outbound messages' statuses and callback data by Herald's message id. */
    const sendsOf = (accountId: string, messageIds: ReadonlyArray<string>) =>
      Effect.map(
        sql<{ messageId: string; status: string; callbackData: string | null }>`
          SELECT message_id::text, status, callback_data FROM wa_messages
          WHERE account_id = ${accountId} AND message_id = ANY(${messageIds.filter(isUuid)}::uuid[])`,
        (rows) => new Map(rows.map((row) => [row.messageId, row]))
      ).pipe(Effect.orDie)

    /** A conversation's messages both ways, newest first. */
    const messages = (accountId: string, conversationId: string, cursor: string | null | undefined, limit: number) =>
      Effect.gen(function*() {
        const after = yield* decodeMessageCursor(cursor)
        const at = sql.literal(`'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`)
        return yield* sql<MessageRow>`
          WITH conv AS (SELECT conversation_id, phone_number_id, customer_phone FROM conversations WHERE conversation_id = ${conversationId} AND account_id = ${accountId}),
          both_ways AS (
            SELECT i.upstream_id AS id, 'inbound' AS direction, i.type, i.text, NULL::text AS status, NULL::text AS callback_data, i.received_at AS t
            FROM wa_inbound i JOIN conv ON i.conversation_id = conv.conversation_id
            UNION ALL
            SELECT m.message_id::text, 'outbound', m.type, m.content #>> '{object,body}', m.status, m.callback_data, m.created_at
            FROM wa_messages m JOIN conv ON m.phone_number_id = conv.phone_number_id AND m.recipient = conv.customer_phone
          )
          SELECT id, direction, type, text, status, callback_data, to_char(t AT TIME ZONE 'UTC', ${at}) AS at FROM both_ways
          ${after === undefined ? sql`` : sql`WHERE (t, id) < (${after.at}::timestamptz, ${after.id})`}
          ORDER BY t DESC, id DESC LIMIT ${limit + 1}`.pipe(Effect.orDie)
      })

    const templatesByIds = (accountId: string, ids: ReadonlyArray<string>) =>
      Effect.map(Effect.forEach(ids.filter(isUuid), (id) => templates.find(accountId, id)), (rows) =>
        new Map(rows.flatMap((row) => (row === undefined ? [] : [[row.templateId, row] as const]))))

    const templatePage = (accountId: string, status: WaTemplateStatus | undefined, category: TemplateCategory | undefined, cursor: string | null | undefined, limit: number) =>
      Effect.flatMap(readCursor(cursor ?? undefined), (after) => templates.page({ accountId, status, category, after, limit }))

    return { me, ledger, contactsByIds, contacts, conversationsByIds, conversations, conversationsOfContacts, emailsOf, sendsOf, messages, templatesByIds, templatePage } as const
  }),
  dependencies: [CustomersRepo.Default, WaTemplatesRepo.Default, Wallet.Default]
}) {}
