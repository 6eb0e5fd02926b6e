import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { ActorContext } from "../actors/runtime/ActorKind.ts"
import type { PagePosition } from "../storage/pageCursor.ts"
import type { EventType, MessageStatus } from "./model.ts"

// The mailer's context: these helpers only record writes through it, whatever the command.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Ctx = ActorContext<any>

export type RecipientStatus = "queued" | "sending" | "delivered" | "bounced" | "complained" | "rejected" | "suppressed"

/** A message as GET /emails/{id} reads it. */
export interface EmailMessage {
  readonly messageId: string
  readonly fromAddress: string
  readonly toAddresses: ReadonlyArray<string>
  readonly subject: string
  readonly status: MessageStatus
  readonly createdAt: Date
}

/** An event of a message (a SEND's recipient is null). */
export interface EmailEvent {
  readonly eventId: string
  readonly messageId: string
  readonly type: EventType
  readonly recipient: string | null
  readonly detail: string
  /** To the microsecond (`YYYY-MM-DDTHH:MM:SS.ffffffZ`), as a cursor carries it. */
  readonly createdAt: string
}

/** An event row as it is stored (created_at to the microsecond). */
export type StoredEvent = {
  readonly event_id: string
  readonly partner_id: string
  readonly message_id: string
  readonly type: EventType
  readonly recipient: string | null
  readonly detail: string
  readonly created_at: string
}

/** A recipient due to be relayed, with its message. */
export interface DueRecipient {
  readonly messageId: string
  readonly recipient: string
  readonly attempts: number
  readonly fromAddress: string
  readonly toAddresses: ReadonlyArray<string>
  readonly ccAddresses: ReadonlyArray<string>
  readonly replyTo: ReadonlyArray<string>
  readonly subject: string
  readonly textBody: string | null
  readonly htmlBody: string | null
}

/** A send the mailer accepted, as its message row holds it. */
export interface NewMessage {
  readonly messageId: string
  readonly partnerId: string
  readonly from: string
  readonly to: ReadonlyArray<string>
  readonly cc: ReadonlyArray<string>
  readonly bcc: ReadonlyArray<string>
  readonly replyTo: ReadonlyArray<string>
  readonly subject: string
  readonly text: string | null
  readonly html: string | null
  readonly configSetId: string | null
  readonly tags: Readonly<Record<string, string>> | null
  readonly recipientCount: number
  readonly status: "QUEUED" | "SUPPRESSED"
}

const EVENT_COLUMNS = `event_id::text, message_id::text, type, recipient, detail,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at`

// The mailer's writes in its command's commit: each names its table and columns here alone.

export const insertMessage = (ctx: Ctx, m: NewMessage) =>
  ctx.insert("email_messages", {
    message_id: m.messageId,
    partner_id: m.partnerId,
    from_address: m.from,
    to_addresses: m.to,
    cc_addresses: m.cc,
    bcc_addresses: m.bcc,
    reply_to: m.replyTo,
    subject: m.subject,
    text_body: m.text,
    html_body: m.html,
    config_set_id: m.configSetId,
    tags: m.tags === null ? null : JSON.stringify(m.tags),
    recipient_count: m.recipientCount,
    status: m.status
  })

export const insertRecipient = (ctx: Ctx, messageId: string, recipient: string, partnerId: string, status: "queued" | "suppressed") =>
  ctx.insert("email_recipients", { message_id: messageId, recipient, partner_id: partnerId, status })

/** A recipient's outcome (and, when it is queued again, its next try). */
export const updateRecipient = (
  ctx: Ctx,
  key: { readonly messageId: string; readonly recipient: string },
  change: { readonly status: RecipientStatus; readonly attempts?: number; readonly nextAttemptAt?: string; readonly lastResponse?: string }
) =>
  ctx.update("email_recipients", {
    message_id: key.messageId,
    recipient: key.recipient,
    status: change.status,
    ...(change.attempts === undefined ? {} : { attempts: change.attempts }),
    ...(change.nextAttemptAt === undefined ? {} : { next_attempt_at: change.nextAttemptAt }),
    ...(change.lastResponse === undefined ? {} : { last_response: change.lastResponse })
  }, ["message_id", "recipient"])

export const insertEvent = (ctx: Ctx, stored: StoredEvent) => ctx.insert("email_events", stored)

/**
 * The one writer of `email_messages`, `email_recipients` and `email_events` (a message, its
 * recipients and what happened to them): the mailer's inserts and updates through the helpers
 * above and the statements below, and every read of them.
 */
export class EmailMessagesRepo extends Effect.Service<EmailMessagesRepo>()("herald/email/EmailMessagesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // Statements the mailer persists in its commit.

    /** Inserts the event unless it is recorded already: whether this was its first recording. */
    const insertEventOnce = (stored: StoredEvent) =>
      Effect.map(sql`INSERT INTO email_events ${sql.insert({ ...stored })} ON CONFLICT DO NOTHING RETURNING event_id`, (inserted) => inserted.length > 0)

    /** The statuses of these messages from their recipients' (run after the recipients' updates). */
    const restatus = (messageIds: ReadonlyArray<string>) =>
      Effect.asVoid(sql`
        UPDATE email_messages m SET status = CASE
            WHEN s.queued > 0 THEN 'SENT'
            WHEN s.complained > 0 THEN 'COMPLAINED'
            WHEN s.delivered > 0 THEN 'DELIVERED'
            WHEN s.bounced > 0 THEN 'BOUNCED'
            WHEN s.rejected > 0 THEN 'REJECTED'
            ELSE m.status END
        FROM (
          SELECT message_id,
            count(*) FILTER (WHERE status IN ('queued', 'sending')) AS queued,
            count(*) FILTER (WHERE status = 'complained') AS complained,
            count(*) FILTER (WHERE status = 'delivered') AS delivered,
            count(*) FILTER (WHERE status = 'bounced') AS bounced,
            count(*) FILTER (WHERE status = 'rejected') AS rejected
          FROM email_recipients WHERE message_id = ANY(${messageIds}::uuid[]) GROUP BY message_id
        ) s
        WHERE m.message_id = s.message_id AND m.status NOT IN ('SUPPRESSED')`)

    /** These recipients out with the relay by `process` until `lostAfter`, only over rows still waiting. */
    const markSending = (due: ReadonlyArray<{ readonly messageId: string; readonly recipient: string }>, process: string, lostAfter: string) =>
      Effect.asVoid(sql`
            UPDATE email_recipients r SET status = 'sending', sending_by = ${process}, next_attempt_at = ${lostAfter}::timestamptz
            FROM unnest(${due.map((row) => row.messageId)}::uuid[], ${due.map((row) => row.recipient)}::text[]) AS d(message_id, recipient)
            WHERE r.message_id = d.message_id AND r.recipient = d.recipient AND r.status IN ('queued', 'sending')`)

    // The mailer's reads.

    /** Tries `process` has out with the relay, not yet taken for lost. */
    const outstandingBy = Effect.fn("EmailMessagesRepo.outstandingBy")(function*(partnerId: string, process: string) {
      const [row] = yield* sql<{ out: number }>`
            SELECT count(*)::int AS out FROM email_recipients
            WHERE partner_id = ${partnerId}::uuid AND status = 'sending' AND sending_by = ${process} AND next_attempt_at > now()`
      return row?.out ?? 0
    }, Effect.orDie)

    /** Recipients due now: queued ones whose time came, and tries taken for lost or out with another process. */
    const due = Effect.fn("EmailMessagesRepo.due")(function*(partnerId: string, process: string, limit: number) {
      return yield* sql<DueRecipient>`
            SELECT r.message_id::text, r.recipient, r.attempts, m.from_address, m.to_addresses, m.cc_addresses, m.reply_to,
                   m.subject, m.text_body, m.html_body
            FROM email_recipients r JOIN email_messages m USING (message_id)
            WHERE r.partner_id = ${partnerId}::uuid
              AND (r.status = 'queued' AND r.next_attempt_at <= now()
                   OR r.status = 'sending' AND (r.next_attempt_at <= now() OR r.sending_by IS DISTINCT FROM ${process}))
            ORDER BY r.seq LIMIT ${limit}`
    }, Effect.orDie)

    /** The earliest queued try and how many recipients are queued or out. */
    const pending = Effect.fn("EmailMessagesRepo.pending")(function*(partnerId: string) {
      const [row] = yield* sql<{ at: Date | null; outstanding: number }>`
              SELECT min(next_attempt_at) FILTER (WHERE status = 'queued') AS at, count(*)::int AS outstanding
              FROM email_recipients WHERE partner_id = ${partnerId}::uuid AND status IN ('queued', 'sending')`
      return row
    }, Effect.orDie)

    /** The configuration set of each of these messages. */
    const configSetsOf = Effect.fn("EmailMessagesRepo.configSetsOf")(function*(messageIds: ReadonlyArray<string>) {
      const rows = yield* sql<{ messageId: string; configSetId: string | null }>`
          SELECT message_id::text, config_set_id::text FROM email_messages WHERE message_id = ANY(${messageIds}::uuid[])`
      return new Map(rows.map((row) => [row.messageId, row.configSetId]))
    }, Effect.orDie)

    /** The recipients of these messages out with the relay, as `messageId recipient`. */
    const sendingAmong = Effect.fn("EmailMessagesRepo.sendingAmong")(function*(messageIds: ReadonlyArray<string>) {
      const rows = yield* sql<{ messageId: string; recipient: string }>`
          SELECT message_id::text, recipient FROM email_recipients
          WHERE message_id = ANY(${messageIds}::uuid[]) AND status = 'sending'`
      return new Set(rows.map((r) => `${r.messageId} ${r.recipient}`))
    }, Effect.orDie)

    /** A recipient of the partner's message, with the message's configuration set. */
    const recipientOf = Effect.fn("EmailMessagesRepo.recipientOf")(function*(partnerId: string, messageId: string, recipient: string) {
      const [row] = yield* sql<{ status: RecipientStatus; configSetId: string | null }>`
          SELECT r.status, m.config_set_id::text FROM email_recipients r JOIN email_messages m USING (message_id)
          WHERE r.message_id = ${messageId}::uuid AND r.recipient = ${recipient} AND r.partner_id = ${partnerId}::uuid`
      return row
    }, Effect.orDie)

    // The API's reads.

    /**
     * The message's partner and its recipient's status (null when the address is not one of its
     * recipients); undefined when there is no such message.
     */
    const deliveryOf = Effect.fn("EmailMessagesRepo.deliveryOf")(function*(messageId: string, recipient: string) {
      const [message] = yield* sql<{ partnerId: string; status: RecipientStatus | null }>`
          SELECT m.partner_id::text, r.status FROM email_messages m
          LEFT JOIN email_recipients r ON r.message_id = m.message_id AND r.recipient = ${recipient}
          WHERE m.message_id = ${messageId}::uuid`
      return message
    }, Effect.orDie)

    const findMessage = Effect.fn("EmailMessagesRepo.findMessage")(function*(partnerId: string, messageId: string) {
      const [row] = yield* sql<EmailMessage>`
              SELECT message_id::text, from_address, to_addresses, subject, status, created_at
              FROM email_messages WHERE message_id = ${messageId}::uuid AND partner_id = ${partnerId}::uuid`
      return row
    }, Effect.orDie)

    /** A message's events, oldest first. */
    const eventsOf = Effect.fn("EmailMessagesRepo.eventsOf")(function*(messageId: string) {
      return yield* sql<EmailEvent>`
          SELECT ${sql.literal(EVENT_COLUMNS)} FROM email_events t WHERE message_id = ${messageId}::uuid ORDER BY t.created_at, t.event_id`
    }, Effect.orDie)

    /** One page of the partner's events, newest first, after `after`. */
    const eventsPage = Effect.fn("EmailMessagesRepo.eventsPage")(function*(
      partnerId: string,
      filter: { readonly type?: EventType | undefined; readonly messageId?: string | undefined },
      after: PagePosition | undefined,
      take: number
    ) {
      return yield* sql<EmailEvent>`
            SELECT ${sql.literal(EVENT_COLUMNS)} FROM email_events t
            WHERE ${sql.and([
        sql`partner_id = ${partnerId}::uuid`,
        ...(filter.type === undefined ? [] : [sql`type = ${filter.type}`]),
        ...(filter.messageId === undefined ? [] : [sql`message_id = ${filter.messageId}::uuid`]),
        ...(after === undefined ? [] : [sql`(created_at, event_id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`])
      ])}
            ORDER BY t.created_at DESC, t.event_id DESC LIMIT ${take}`
    }, Effect.orDie)

    /**
     * Per recipient, over the last 24 hours and 14 days: sent to (not suppressed), and the
     * delivered, bounced, complained and rejected events.
     */
    const counts = Effect.fn("EmailMessagesRepo.counts")(function*(partnerId: string) {
      const [row] = yield* sql<{
        readonly sentDay: number
        readonly deliveredDay: number
        readonly bouncedDay: number
        readonly complainedDay: number
        readonly rejectedDay: number
        readonly sentFortnight: number
        readonly deliveredFortnight: number
        readonly bouncedFortnight: number
        readonly complainedFortnight: number
        readonly rejectedFortnight: number
      }>`
        WITH sent AS (
          SELECT count(*) FILTER (WHERE m.created_at > now() - interval '24 hours')::int AS day, count(*)::int AS fortnight
          FROM email_messages m JOIN email_recipients r ON r.message_id = m.message_id
          WHERE m.partner_id = ${partnerId}::uuid AND m.created_at > now() - interval '14 days' AND r.status <> 'suppressed'
        ), happened AS (
          SELECT type, count(*) FILTER (WHERE created_at > now() - interval '24 hours')::int AS day, count(*)::int AS fortnight
          FROM email_events
          WHERE partner_id = ${partnerId}::uuid AND created_at > now() - interval '14 days'
            AND recipient IS NOT NULL AND type IN ('DELIVERY', 'BOUNCE', 'COMPLAINT', 'REJECT')
          GROUP BY type
        )
        SELECT sent.day AS sent_day, sent.fortnight AS sent_fortnight,
               COALESCE(sum(h.day) FILTER (WHERE h.type = 'DELIVERY'), 0)::int AS delivered_day,
               COALESCE(sum(h.fortnight) FILTER (WHERE h.type = 'DELIVERY'), 0)::int AS delivered_fortnight,
               COALESCE(sum(h.day) FILTER (WHERE h.type = 'BOUNCE'), 0)::int AS bounced_day,
               COALESCE(sum(h.fortnight) FILTER (WHERE h.type = 'BOUNCE'), 0)::int AS bounced_fortnight,
               COALESCE(sum(h.day) FILTER (WHERE h.type = 'COMPLAINT'), 0)::int AS complained_day,
               COALESCE(sum(h.fortnight) FILTER (WHERE h.type = 'COMPLAINT'), 0)::int AS complained_fortnight,
               COALESCE(sum(h.day) FILTER (WHERE h.type = 'REJECT'), 0)::int AS rejected_day,
               COALESCE(sum(h.fortnight) FILTER (WHERE h.type = 'REJECT'), 0)::int AS rejected_fortnight
        FROM sent LEFT JOIN happened h ON true
        GROUP BY sent.day, sent.fortnight`
      return row!
    }, Effect.orDie)

    /** Over the last 14 days: recipients sent to, hard bounces, complaints and deliveries. */
    const reputationCounts = Effect.fn("EmailMessagesRepo.reputationCounts")(function*(partnerId: string) {
      const [row] = yield* sql<{ sent: number; hardBounces: number; complaints: number; deliveries: number }>`
        SELECT
          (SELECT count(*)::int FROM email_messages m JOIN email_recipients r ON r.message_id = m.message_id
           WHERE m.partner_id = ${partnerId}::uuid AND m.created_at > now() - interval '14 days' AND r.status <> 'suppressed') AS sent,
          count(*) FILTER (WHERE e.type = 'BOUNCE' AND e.detail NOT LIKE 'soft%')::int AS hard_bounces,
          count(*) FILTER (WHERE e.type = 'COMPLAINT')::int AS complaints,
          count(*) FILTER (WHERE e.type = 'DELIVERY')::int AS deliveries
        FROM email_events e
        WHERE e.partner_id = ${partnerId}::uuid AND e.created_at > now() - interval '14 days'
          AND e.recipient IS NOT NULL AND e.type IN ('DELIVERY', 'BOUNCE', 'COMPLAINT')`
      return row!
    }, Effect.orDie)

    return {
      insertEventOnce,
      restatus,
      markSending,
      outstandingBy,
      due,
      pending,
      configSetsOf,
      sendingAmong,
      recipientOf,
      deliveryOf,
      findMessage,
      eventsOf,
      eventsPage,
      counts,
      reputationCounts
    } as const
  })
}) {}
