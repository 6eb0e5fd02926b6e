import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { MessageContent } from "../domain/content.ts"
import { isUuid } from "../domain/ids.ts"
import type { GatewayErrorRecord } from "../domain/gatewayError.ts"
import { type PagePosition, positionOf } from "../storage/pageCursor.ts"
import { PreparedStatements } from "../storage/PreparedStatements.ts"

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

/** The writes of an actor's commit (ActorContext's insert and update), as the sender's statements use them. */
interface CommitWrites {
  readonly insert: (table: string, row: Readonly<Record<string, unknown>>) => void
  readonly update: (table: string, row: Readonly<Record<string, unknown>>, where: ReadonlyArray<string>) => void
}

/** A new send, recorded queued (attempt 1) in the sender actor's commit. */
export const stageQueued = (
  context: CommitWrites,
  // The row's own fields; the price as the number the bot's tariff gives (the row reads it back as numeric text).
  message: Pick<MessageRow, "messageId" | "accountId" | "botId" | "recipient" | "content" | "templateId" | "source"> & { readonly price: number }
) =>
  context.insert("messages", {
    message_id: message.messageId,
    account_id: message.accountId,
    bot_id: message.botId,
    recipient: message.recipient,
    content: JSON.stringify(message.content),
    template_id: message.templateId,
    source: message.source,
    status: "queued",
    price: message.price,
    attempts: 1
  })

/** What the gateway's answer to an attempt makes of the message, in the sender actor's commit. */
export type AttemptOutcome =
  | { readonly status: "sent"; readonly sentAt: string }
  | { readonly status: "unconfirmed"; readonly error: GatewayErrorRecord }
  | { readonly status: "failed"; readonly failedAt: string; readonly error: GatewayErrorRecord }

export const stageAttempt = (context: CommitWrites, messageId: string, attempt: number, outcome: AttemptOutcome) =>
  context.update(
    "messages",
    {
      message_id: messageId,
      attempts: attempt,
      ...(outcome.status === "sent"
        ? { status: "sent", sent_at: outcome.sentAt }
        : outcome.status === "unconfirmed"
        ? { status: "unconfirmed", error: outcome.error }
        : { status: "failed", failed_at: outcome.failedAt, error: outcome.error })
    },
    ["message_id"]
  )

/** The content of a message as recorded when it was queued, and its status (for a retry or a re-send; rare). */
export const messageToSend = (sql: SqlClient.SqlClient, messageId: string) =>
  sql<{ readonly content: MessageContent; readonly status: string }>`SELECT content, status FROM messages WHERE message_id = ${messageId}::uuid`.pipe(
    Effect.map((rows) => rows[0])
  )

/** A message's status moved by a gateway report: before and after, with what its event and charge need. */
export interface MovedMessage {
  readonly before: string
  readonly after: string
  readonly accountId: string
  readonly botId: string
  readonly recipient: string
  readonly price: string
}

/** Bots a caller may read: all of the account's, or its scope's list. */
export type BotFilter = ReadonlyArray<string> | "all"

/**
 * The one writer of `messages` and `inbound_messages`, and the reads of the message log (reports,
 * previews, one message with its status history, a recipient's history). The reads are not
 * prepared statements: their texts vary with the filters and no send makes them. A send's insert
 * and outcome updates are written by the sender actor's commits through `stageQueued` and
 * `stageAttempt` above (prepared in the committer, actors/runtime/committer.ts); a gateway report
 * moves a message's status with a prepared statement (`moveStatus`), in the report's transaction.
 */
export class MessagesRepo extends Effect.Service<MessagesRepo>()("herald/messaging/MessagesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const prepared = yield* PreparedStatements

    // Every send gets status reports (delivered, read): a prepared statement. It runs in the
    // report's transaction (on its connection).
    const moveMessage = prepared.prepare<MovedMessage>(`
        WITH prev AS (SELECT message_id, status FROM messages WHERE message_id = $1::uuid FOR UPDATE)
        UPDATE messages m SET
          status = $2,
          delivered_at = CASE WHEN $3 IN ('delivered', 'read') THEN $4::timestamptz END,
          read_at = CASE WHEN $5 = 'read' THEN $6::timestamptz END,
          failed_at = CASE WHEN $7 = 'failed' THEN $8::timestamptz END,
          error = $9::jsonb
        FROM prev WHERE m.message_id = prev.message_id
        RETURNING prev.status AS before, m.status AS after, m.account_id, m.bot_id, m.recipient, m.price::text`)

    /** Moves a message to a reported status (the table's trigger refuses a step back); no row: not a single send. */
    const moveStatus = (report: { readonly messageId: string; readonly status: string; readonly at: string; readonly error: GatewayErrorRecord | undefined }) =>
      moveMessage([
        report.messageId,
        report.status,
        report.status,
        report.at,
        report.status,
        report.at,
        report.status,
        report.at,
        report.error === undefined ? null : JSON.stringify(report.error)
      ]).pipe(Effect.map((rows) => rows[0]))

    /** Stores a user's message once (the gateway's message id is the key): whether it was new. */
    const insertInbound = (input: {
      readonly botId: string
      readonly upstreamId: string
      readonly accountId: string
      readonly sender: string
      readonly text: string
      readonly postbackData: string | null
      readonly receivedAt: string
    }) =>
      sql`
        INSERT INTO inbound_messages (bot_id, upstream_id, account_id, sender, text, postback_data, received_at)
        VALUES (${input.botId}, ${input.upstreamId}, ${input.accountId}, ${input.sender}, ${input.text}, ${input.postbackData},
                ${input.receivedAt}::timestamptz)
        ON CONFLICT DO NOTHING
        RETURNING upstream_id`.pipe(Effect.map((rows) => rows.length > 0))

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

    return { page, find, history, toRecipient, fromSender, moveStatus, insertInbound } as const
  }),
  dependencies: [PreparedStatements.Default]
}) {}
