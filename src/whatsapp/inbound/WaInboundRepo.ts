import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** An answer an AI agent owes a customer, recorded with the inbound message it answers (wa_inbound.ai_reply). */
export interface InboundReply {
  readonly agentId: string
  readonly messageId: string
  readonly text: string
}

/**
 * What customers send a WhatsApp number: messages (`wa_inbound`), calls (`wa_calls`) and payments
 * (`wa_payments`), each stored once under Meta's id (Meta retries a webhook for days). The one
 * writer of those tables; each method runs in its caller's transaction.
 */
export class WaInboundRepo extends Effect.Service<WaInboundRepo>()("herald/whatsapp/WaInboundRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Whether a message with Meta's id is stored. */
    const known = Effect.fn("WaInboundRepo.known")(function*(wamid: string) {
      const [row] = yield* sql`SELECT 1 FROM wa_inbound WHERE upstream_id = ${wamid}`
      return row !== undefined
    }, Effect.orDie)

    /** Stores a message once: false when it was stored already. */
    const insertMessage = Effect.fn("WaInboundRepo.insertMessage")(function*(message: {
      readonly wamid: string
      readonly accountId: string
      readonly phoneNumberId: string
      readonly conversationId: string
      readonly customerId: string
      readonly sender: string
      readonly type: string
      readonly text: string | null
      readonly payload: unknown
      readonly receivedAt: Date
    }) {
      const inserted = yield* sql`
        INSERT INTO wa_inbound (upstream_id, account_id, phone_number_id, conversation_id, customer_id, sender, type, text, payload, received_at)
        VALUES (${message.wamid}, ${message.accountId}::uuid, ${message.phoneNumberId}, ${message.conversationId}::uuid, ${message.customerId}::uuid, ${message.sender}, ${message.type},
                ${message.text}, ${JSON.stringify(message.payload)}::jsonb, ${message.receivedAt.toISOString()}::timestamptz)
        ON CONFLICT DO NOTHING RETURNING upstream_id`
      return inserted.length > 0
    }, Effect.orDie)

    /** Records the answer an AI agent decided on a message. */
    const recordReply = Effect.fn("WaInboundRepo.recordReply")((wamid: string, reply: InboundReply) =>
      sql`UPDATE wa_inbound SET ai_reply = ${JSON.stringify(reply)}::jsonb WHERE upstream_id = ${wamid}`.pipe(Effect.asVoid, Effect.orDie))

    /** A message's recorded answer, and whether its send was recorded by the number's sender. */
    const recordedReply = Effect.fn("WaInboundRepo.recordedReply")(function*(wamid: string) {
      const [row] = yield* sql<{ aiReply: InboundReply | null; queued: boolean }>`
        SELECT i.ai_reply, EXISTS (SELECT 1 FROM wa_messages m WHERE m.message_id = (i.ai_reply ->> 'messageId')::uuid) AS queued
        FROM wa_inbound i WHERE i.upstream_id = ${wamid} AND i.ai_reply IS NOT NULL`
      return row
    }, Effect.orDie)

    /** A call Meta reported. */
    const upsertCall = Effect.fn("WaInboundRepo.upsertCall")((call: {
      readonly callId: string
      readonly accountId: string
      readonly conversationId: string
      readonly direction: string
      readonly status: string
      readonly durationSec: number
      readonly recordingUrl: string | null
      readonly occurredAt: Date
    }) =>
      sql`
        INSERT INTO wa_calls (call_id, account_id, conversation_id, direction, status, duration_sec, recording_url, occurred_at)
        VALUES (${call.callId}, ${call.accountId}::uuid, ${call.conversationId}::uuid, ${call.direction},
                ${call.status}, ${call.durationSec},
                ${call.recordingUrl}, ${call.occurredAt.toISOString()}::timestamptz)
        -- Meta reports a call more than once as it goes (connect, then terminate with its
        -- outcome and duration): the latest report of a call is what the call became.
        ON CONFLICT (call_id) DO UPDATE SET
          status = excluded.status,
          duration_sec = greatest(wa_calls.duration_sec, excluded.duration_sec),
          recording_url = coalesce(excluded.recording_url, wa_calls.recording_url),
          occurred_at = excluded.occurred_at
        WHERE excluded.occurred_at >= wa_calls.occurred_at`.pipe(Effect.asVoid, Effect.orDie))

    /** A payment's state Meta reported, once per (payment, state): false when it was stored already. */
    const insertPayment = Effect.fn("WaInboundRepo.insertPayment")(function*(payment: {
      readonly paymentId: string
      readonly accountId: string
      readonly conversationId: string
      readonly referenceId: string
      readonly amount: number
      readonly currency: string
      readonly status: string
      /** ISO 8601. */
      readonly occurredAt: string
    }) {
      const inserted = yield* sql`
        INSERT INTO wa_payments (payment_id, account_id, conversation_id, reference_id, amount, currency, status, occurred_at)
        VALUES (${payment.paymentId}, ${payment.accountId}::uuid, ${payment.conversationId}::uuid, ${payment.referenceId}, ${payment.amount},
                ${payment.currency}, ${payment.status}, ${payment.occurredAt}::timestamptz)
        ON CONFLICT DO NOTHING RETURNING payment_id`
      return inserted.length > 0
    }, Effect.orDie)

    return { known, insertMessage, recordReply, recordedReply, upsertCall, insertPayment } as const
  })
}) {}
