import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { MessageContent } from "../domain/content.ts"
import { isUuid } from "../domain/ids.ts"
import type { GatewayErrorRecord } from "../domain/gatewayError.ts"
import { type PagePosition, positionOf } from "../storage/pageCursor.ts"

export const MESSAGE_STATUSES = ["queued", "unconfirmed", "sent", "delivered", "read", "failed"] as const
export type MessageStatus = (typeof MESSAGE_STATUSES)[number]

export interface MessageRow {
  readonly messageId: string
  readonly accountId: string
  readonly botId: string
  readonly recipient: string
  readonly content: MessageContent
  readonly templateId: string | null
  readonly source: string
  readonly status: MessageStatus
  readonly error: GatewayErrorRecord | null
  readonly price: string
  readonly attempts: number
  readonly createdAt: Date
  readonly sentAt: Date | null
  readonly deliveredAt: Date | null
  readonly readAt: Date | null
  readonly failedAt: Date | null
  readonly position: string
}

/** One status a message went through (message_status_history, written by triggers on messages). */
export interface StatusRow {
  readonly status: MessageStatus
  readonly at: Date
  readonly error: GatewayErrorRecord | null
}

export interface InboundRow {
  readonly botId: string
  readonly sender: string
  readonly text: string
  readonly postbackData: string | null
  readonly receivedAt: Date
}

const COLUMNS = `message_id, account_id, bot_id, recipient, content, template_id, source, status, error, price::text AS price, attempts,
  created_at, sent_at, delivered_at, read_at, failed_at, ${positionOf("created_at")} AS position`

/** Bots a caller may read: all of the account's, or its scope's list. */
export type BotFilter = ReadonlyArray<string> | "all"

/**
 * Reads of the message log (reports, previews, one message with its status history, a
 * recipient's history). Not prepared statements: their texts vary with the filters and no send
 * makes them; a send's insert and outcome updates are written by the sender actor's commits,
 * prepared in the committer (actors/runtime/committer.ts).
 */
export class MessagesRepo extends Effect.Service<MessagesRepo>()("herald/messaging/MessagesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const inBots = (bots: BotFilter) => (bots === "all" ? [] : [sql`bot_id::text = ANY(${bots}::text[])`])

    /** One page, newest first; `limit + 1` rows so the caller knows whether another page follows. */
    const page = (input: {
      readonly accountId: string
      readonly bots: BotFilter
      readonly botId: string | undefined
      readonly status: MessageStatus | undefined
      readonly since: Date | undefined
      readonly until: Date | undefined
      readonly after: PagePosition | undefined
      readonly limit: number
    }) =>
      sql<MessageRow>`
        SELECT ${sql.literal(COLUMNS)} FROM messages
        WHERE ${
        sql.and([
          sql`account_id = ${input.accountId}::uuid`,
          ...inBots(input.bots),
          ...(input.botId === undefined ? [] : [sql`bot_id = ${input.botId}::uuid`]),
          ...(input.status === undefined ? [] : [sql`status = ${input.status}`]),
          ...(input.since === undefined ? [] : [sql`created_at >= ${input.since.toISOString()}::timestamptz`]),
          ...(input.until === undefined ? [] : [sql`created_at < ${input.until.toISOString()}::timestamptz`]),
          ...(input.after === undefined ? [] : [sql`(created_at, message_id) < (${input.after.createdAt}::timestamptz, ${input.after.id}::uuid)`])
        ])
      }
        ORDER BY created_at DESC, message_id DESC
        LIMIT ${input.limit + 1}`.pipe(Effect.orDie)

    const find = (accountId: string, messageId: string) =>
      !isUuid(messageId)
        ? Effect.succeed(undefined)
        : sql<MessageRow>`SELECT ${sql.literal(COLUMNS)} FROM messages WHERE account_id = ${accountId}::uuid AND message_id = ${messageId}::uuid`.pipe(
          Effect.map((rows) => rows[0]),
          Effect.orDie
        )

    /** Every status the message went through, oldest first (a status only moves forward: its rank is its order). */
    const history = (messageId: string) =>
      sql<StatusRow>`
        SELECT status, at, error FROM message_status_history
        WHERE message_id = ${messageId}::uuid
        ORDER BY herald_message_status_rank(status)`.pipe(Effect.orDie)

    const toRecipient = (accountId: string, bots: BotFilter, phone: string, limit: number) =>
      sql<MessageRow>`
        SELECT ${sql.literal(COLUMNS)} FROM messages
        WHERE ${sql.and([sql`account_id = ${accountId}::uuid`, sql`recipient = ${phone}`, ...inBots(bots)])}
        ORDER BY created_at DESC, message_id DESC LIMIT ${limit}`.pipe(Effect.orDie)

    const fromSender = (accountId: string, bots: BotFilter, phone: string, limit: number) =>
      sql<InboundRow>`
        SELECT bot_id, sender, text, postback_data, received_at FROM inbound_messages
        WHERE ${sql.and([sql`account_id = ${accountId}::uuid`, sql`sender = ${phone}`, ...inBots(bots)])}
        ORDER BY received_at DESC LIMIT ${limit}`.pipe(Effect.orDie)

    return { page, find, history, toRecipient, fromSender } as const
  })
}) {}
