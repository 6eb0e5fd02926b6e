import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { GatewayErrorRecord } from "../../domain/gatewayError.ts"
import type { WaStatus } from "../events.ts"
import type { CloudContent } from "./publicMessage.ts"

/** The statuses of a WhatsApp send, in the order they can be reached (0017's rank; accepted and unconfirmed exclude each other). */
export const WA_MESSAGE_STATUSES = ["queued", "accepted", "unconfirmed", "sent", "delivered", "read", "failed"] as const
export type WaMessageStatus = (typeof WA_MESSAGE_STATUSES)[number]

/** A message sent through the public API (a row of wa_messages). */
export interface WaMessage {
  readonly messageId: string
  readonly phoneNumberId: string
  readonly recipient: string
  readonly type: string
  readonly templateId: string | null
  readonly callbackData: string | null
  readonly status: WaMessageStatus
  readonly price: string
  readonly attempts: number
  readonly error: GatewayErrorRecord | null
  readonly createdAt: Date
  readonly sentAt: Date | null
  readonly deliveredAt: Date | null
  readonly readAt: Date | null
  readonly failedAt: Date | null
}

/** One status a message went through (wa_message_status_history, written by the table's trigger). */
export interface WaMessageStatusEntry {
  readonly status: WaMessageStatus
  readonly at: Date
  readonly error: GatewayErrorRecord | null
}

/** What a message.* event of a message names besides its id. */
export interface WaMessageEventFields {
  readonly recipient: string
  readonly type: string
  readonly callbackData: string | null
}

/** A status move a report applied: the status before and after (the trigger may have kept the one before). */
export interface WaMessageMoved extends WaMessageEventFields {
  readonly messageId: string
  readonly before: string
  readonly after: string
  readonly accountId: string
  readonly price: string
}

/** The actor context's writes, as far as this table's builders use them. */
interface CommitWrites {
  readonly insert: (table: string, row: Readonly<Record<string, unknown>>) => void
  readonly update: (table: string, row: Readonly<Record<string, unknown>>, where: ReadonlyArray<string>) => void
}

/** A send the number's `wa_sender` actor accepted, staged in its commit. */
export const stageQueued = (ctx: CommitWrites, send: {
  readonly messageId: string
  readonly accountId: string
  readonly phoneNumberId: string
  readonly recipient: string
  readonly type: string
  readonly content: unknown
  readonly templateId: string | null
  readonly category: string | null
  readonly callbackData: string | null
  readonly price: number
}) =>
  ctx.insert("wa_messages", {
    message_id: send.messageId,
    account_id: send.accountId,
    phone_number_id: send.phoneNumberId,
    recipient: send.recipient,
    type: send.type,
    content: JSON.stringify(send.content),
    template_id: send.templateId,
    category: send.category,
    callback_data: send.callbackData,
    status: "queued",
    price: send.price,
    attempts: 1
  })

/** What Meta answered attempt `attempt` of a send (or that the answer was lost), staged in the actor's commit. */
export const stageAttempt = (
  ctx: CommitWrites,
  messageId: string,
  attempt: number,
  changes:
    | { readonly status: "accepted"; readonly upstreamId: string }
    | { readonly status: "unconfirmed"; readonly error: GatewayErrorRecord }
    | { readonly status: "failed"; readonly failedAt: string; readonly error: GatewayErrorRecord }
) =>
  ctx.update("wa_messages", {
    message_id: messageId,
    attempts: attempt,
    status: changes.status,
    ...(changes.status === "accepted" ? { upstream_id: changes.upstreamId } : {}),
    ...(changes.status === "failed" ? { failed_at: changes.failedAt } : {}),
    ...(changes.status !== "accepted" ? { error: changes.error } : {})
  }, ["message_id"])

/**
 * `wa_messages` and its status history: the one writer. Sends are recorded by their number's
 * `wa_sender` actor in its commits (`stageQueued`, `stageAttempt`, `expireUnconfirmed`); Meta's
 * status webhooks move them with `move`. A status moves forward only: the table's trigger refuses
 * a step back and records each status in wa_message_status_history.
 */
export class WaMessagesRepo extends Effect.Service<WaMessagesRepo>()("herald/whatsapp/WaMessagesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The recipient and content of messages about to go out (after a takeover: not in memory). */
    const payloads = Effect.fn("WaMessagesRepo.payloads")((ids: ReadonlyArray<string>) =>
      sql<{ messageId: string; recipient: string; content: CloudContent }>`
        SELECT message_id::text, recipient, content FROM wa_messages WHERE message_id = ANY(${ids}::uuid[])`)

    /** The fields of a message's events. */
    const eventFields = Effect.fn("WaMessagesRepo.eventFields")((messageId: string) =>
      Effect.map(
        sql<WaMessageEventFields>`
          SELECT recipient, type, callback_data FROM wa_messages WHERE message_id = ${messageId}::uuid`,
        (rows) => rows[0]
      ))

    /**
     * An unconfirmed send heard nothing: it failed (a statement of the actor's commit). Answers the
     * message's event fields when it was still unconfirmed.
     */
    const expireUnconfirmed = (messageId: string, error: GatewayErrorRecord): Effect.Effect<(WaMessageEventFields & { readonly accountId: string }) | undefined, SqlError> =>
      Effect.map(
        sql<WaMessageEventFields & { accountId: string }>`
          UPDATE wa_messages SET status = 'failed', failed_at = now(), error = ${JSON.stringify(error)}::jsonb
          WHERE message_id = ${messageId}::uuid AND status = 'unconfirmed'
          RETURNING account_id::text, recipient, type, callback_data`,
        (rows) => rows[0]
      ).pipe(Effect.withSpan("WaMessagesRepo.expireUnconfirmed"))

    /**
     * A status Meta reported, by Herald's id (Meta's callback data) or else Meta's: the message as it
     * was and as it is (the trigger keeps a later status). Undefined for a message Herald does not know.
     */
    const move = Effect.fn("WaMessagesRepo.move")(function*(messageId: string | undefined, wamid: string, status: WaStatus, at: Date, error: unknown) {
      const iso = at.toISOString()
      const target = messageId !== undefined ? sql`message_id = ${messageId}::uuid` : sql`upstream_id = ${wamid}`
      const [moved] = yield* sql<WaMessageMoved>`
        WITH prev AS (SELECT message_id, status FROM wa_messages WHERE ${target} FOR UPDATE)
        UPDATE wa_messages m SET
          status = ${status},
          upstream_id = coalesce(m.upstream_id, ${wamid}),
          sent_at = CASE WHEN ${status} IN ('sent', 'delivered', 'read') THEN ${iso}::timestamptz END,
          delivered_at = CASE WHEN ${status} IN ('delivered', 'read') THEN ${iso}::timestamptz END,
          read_at = CASE WHEN ${status} = 'read' THEN ${iso}::timestamptz END,
          failed_at = CASE WHEN ${status} = 'failed' THEN ${iso}::timestamptz END,
          error = ${error === undefined ? null : JSON.stringify(error)}::jsonb
        FROM prev WHERE m.message_id = prev.message_id
        RETURNING m.message_id::text, prev.status AS before, m.status AS after, m.account_id::text, m.recipient, m.type, m.callback_data, m.price::text`
      return moved
    }, Effect.orDie)

    /** A message of the account, by Herald's id. */
    const findOfAccount = Effect.fn("WaMessagesRepo.findOfAccount")(function*(accountId: string, messageId: string) {
      const [row] = yield* sql<WaMessage>`
        SELECT message_id::text, phone_number_id, recipient, type, template_id::text, callback_data, status, price::text,
               attempts, error, created_at, sent_at, delivered_at, read_at, failed_at
        FROM wa_messages WHERE message_id = ${messageId}::uuid AND account_id = ${accountId}::uuid`
      return row
    }, Effect.orDie)

    /** Every status a message went through, in the order statuses can be reached. */
    const history = Effect.fn("WaMessagesRepo.history")((messageId: string) =>
      sql<WaMessageStatusEntry>`
        SELECT status, at, error FROM wa_message_status_history WHERE message_id = ${messageId}::uuid
        ORDER BY herald_message_status_rank(status), at`.pipe(Effect.orDie))

    return { payloads, eventFields, expireUnconfirmed, move, findOfAccount, history } as const
  })
}) {}
