import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { isUuid } from "../../domain/ids.ts"
import { AgentTurns } from "../../aiAgents/AgentTurns.ts"
import { LiveEvents } from "../../live/LiveEvents.ts"
import { Webhooks } from "../../webhooks/Webhooks.ts"
import { fromMetaStatusError } from "../../gateway/cloud/errors.ts"
import { digitsOf, statusEventData, type WaStatus } from "../events.ts"
import { type WaNumber, WaNumbers } from "../numbers/WaNumbers.ts"
import { WaTemplatesRepo } from "../templates/WaTemplatesRepo.ts"
import { arrayOf, customerPhoneOf, type MetaChange, objectOf, publicTypeOf, stringOf, textOf, timeOf } from "./metaWebhook.ts"
import { chargeOnce } from "../../wallet/ledgerWrites.ts"

interface Moved {
  readonly messageId: string
  readonly before: string
  readonly after: string
  readonly accountId: string
  readonly recipient: string
  readonly type: string
  readonly callbackData: string | null
  readonly price: string
}

const STATUSES: ReadonlySet<string> = new Set(["sent", "delivered", "read", "failed"])

/**
 * Applies what Meta's webhooks report. Everything is idempotent on Meta's ids, since Meta retries a
 * webhook for days and may repeat or reorder it: a status moves a message forward only (the
 * table's trigger refuses a step back) and emits its event only when it moved it; a template
 * message is charged once (a unique charge per message) on its first delivered or read; an
 * inbound message, call or payment is stored once under Meta's id.
 */
export class WaReports extends Effect.Service<WaReports>()("herald/whatsapp/WaReports", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const webhooks = yield* Webhooks
    const numbers = yield* WaNumbers
    const templates = yield* WaTemplatesRepo
    const live = yield* LiveEvents
    const agents = yield* AgentTurns

    const move = (messageId: string | undefined, wamid: string, status: WaStatus, at: Date, error: unknown) => {
      const iso = at.toISOString()
      const target = messageId !== undefined ? sql`message_id = ${messageId}::uuid` : sql`upstream_id = ${wamid}`
      return sql<Moved>`
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
    }

    const applyStatus = (status: Record<string, unknown>) =>
      Effect.gen(function*() {
        const wamid = stringOf(status.id)
        const reported = stringOf(status.status)
        if (wamid === undefined || reported === undefined || !STATUSES.has(reported)) return "ignored" as const
        const callback = stringOf(status.biz_opaque_callback_data)
        const messageId = callback !== undefined && isUuid(callback) ? callback : undefined
        // Reached Meta, so never retryable: a resend might reach the customer twice.
        const error = reported === "failed" ? fromMetaStatusError(status.errors, messageId ?? wamid) : undefined
        const at = timeOf(status.timestamp)
        const result = yield* webhooks.committed(Effect.gen(function*() {
          const [moved] = yield* move(messageId, wamid, reported as WaStatus, at, error)
          if (moved === undefined) return "unknown_message" as const
          const reached = moved.after === "delivered" || moved.after === "read"
          if (reached && Number(moved.price) > 0) {
            yield* chargeOnce(sql, { accountId: moved.accountId, amount: moved.price, reference: moved.messageId })
          }
          if (moved.after === moved.before || moved.after !== reported) return "unchanged" as const
          yield* webhooks.emit({
            accountId: moved.accountId,
            type: `message.${reported as WaStatus}`,
            botId: null,
            channel: "whatsapp",
            data: statusEventData(moved, reported as WaStatus, error)
          })
          return moved
        })).pipe(Effect.orDie)
        if (typeof result === "string") return result
        yield* live.publish(result.accountId, "message_status", {
          message_id: result.messageId,
          status: reported as WaStatus,
          callback_data: result.callbackData,
          occurred_at: at.toISOString()
        })
        return "applied" as const
      })

    /** The customer and their conversation with the number, created on first contact. */
    const conversationOf = (number: WaNumber, phone: string, name: string | undefined, inboundAt: Date | undefined, lastMessage: unknown) =>
      Effect.gen(function*() {
        const seen = (inboundAt ?? new Date()).toISOString()
        const [customer] = yield* sql<{ customerId: string }>`
          INSERT INTO customers (account_id, phone, name, last_seen_at)
          VALUES (${number.accountId}::uuid, ${phone}, ${name ?? null}, ${seen}::timestamptz)
          ON CONFLICT (account_id, phone) DO UPDATE SET
            name = coalesce(excluded.name, customers.name),
            last_seen_at = greatest(customers.last_seen_at, excluded.last_seen_at)
          RETURNING customer_id::text`
        const inbound = inboundAt === undefined ? null : inboundAt.toISOString()
        const [conversation] = yield* sql<{ conversationId: string }>`
          INSERT INTO conversations (account_id, phone_number_id, customer_id, customer_phone, last_inbound_at, last_message)
          VALUES (${number.accountId}::uuid, ${number.phoneNumberId}, ${customer!.customerId}::uuid, ${phone}, ${inbound}::timestamptz,
                  ${lastMessage === undefined ? null : JSON.stringify(lastMessage)}::jsonb)
          ON CONFLICT (phone_number_id, customer_phone) DO UPDATE SET
            -- A customer who writes reopens a resolved conversation (and opens the 24-hour window).
            status = CASE WHEN excluded.last_inbound_at IS NULL THEN conversations.status ELSE 'open' END,
            last_inbound_at = greatest(conversations.last_inbound_at, excluded.last_inbound_at),
            -- The later of this message and the one recorded (a send's, or an inbound Meta retried
            -- late). Meta's timestamps are whole seconds: within the recorded one's second, this
            -- one came later (its webhook follows).
            last_message = CASE WHEN excluded.last_message IS NOT NULL
                AND excluded.last_inbound_at >= date_trunc('second', coalesce((conversations.last_message ->> 'at')::timestamptz, '-infinity'))
              THEN excluded.last_message ELSE conversations.last_message END,
            updated_at = now()
          RETURNING conversation_id::text`
        return { customerId: customer!.customerId, conversationId: conversation!.conversationId }
      })

    const recordInbound = (number: WaNumber, message: Record<string, unknown>, contacts: ReadonlyArray<Record<string, unknown>>) =>
      Effect.gen(function*() {
        const wamid = stringOf(message.id)
        const from = stringOf(message.from)
        if (wamid === undefined || from === undefined) return "ignored" as const
        const phone = customerPhoneOf(from)
        const turn = { accountId: number.accountId, phoneNumberId: number.phoneNumberId, phone, wamid }
        const [known] = yield* sql`SELECT 1 FROM wa_inbound WHERE upstream_id = ${wamid}`
        if (known !== undefined) {
          yield* agents.redeliver(turn)
          return "unchanged" as const
        }
        const name = stringOf(objectOf(contacts.find((c) => c.wa_id === from)?.profile)?.name)
        const receivedAt = timeOf(message.timestamp)
        const type = publicTypeOf(message)
        const text = textOf(message)
        const result = yield* webhooks.committed(Effect.gen(function*() {
          const { conversationId, customerId } = yield* conversationOf(number, phone, name, receivedAt, {
            direction: "inbound",
            id: wamid,
            type,
            text: text ?? null,
            at: receivedAt.toISOString()
          })
          const inserted = yield* sql`
            INSERT INTO wa_inbound (upstream_id, account_id, phone_number_id, conversation_id, customer_id, sender, type, text, payload, received_at)
            VALUES (${wamid}, ${number.accountId}::uuid, ${number.phoneNumberId}, ${conversationId}::uuid, ${customerId}::uuid, ${phone}, ${type},
                    ${text ?? null}, ${JSON.stringify(message)}::jsonb, ${receivedAt.toISOString()}::timestamptz)
            ON CONFLICT DO NOTHING RETURNING upstream_id`
          if (inserted.length === 0) return "unchanged" as const
          yield* webhooks.emit({
            accountId: number.accountId,
            type: "message.received",
            botId: null,
            channel: "whatsapp",
            data: {
              id: wamid,
              channel: "whatsapp",
              fullPhoneNumber: digitsOf(phone),
              name: name ?? null,
              type,
              ...(text !== undefined ? { text } : {}),
              conversation_id: conversationId,
              received_at: receivedAt.toISOString()
            }
          })
          // After message.received, so that a consumer reads the message before its handoff.
          const reply = yield* agents.take({ ...turn, conversationId, text: text ?? null })
          return { conversationId, reply }
        })).pipe(Effect.orDie)
        if (typeof result === "string") return result
        if (result.reply !== undefined) yield* agents.deliver(turn, result.reply)
        yield* live.publish(number.accountId, "message_received", {
          id: wamid,
          conversation_id: result.conversationId,
          type,
          text: text ?? null,
          received_at: receivedAt.toISOString()
        })
        return "applied" as const
      })

    const recordCall = (number: WaNumber, call: Record<string, unknown>) =>
      Effect.gen(function*() {
        const id = stringOf(call.id)
        const from = stringOf(call.from)
        if (id === undefined || from === undefined) return
        const duration = Number(call.duration ?? 0)
        yield* sql.withTransaction(Effect.gen(function*() {
          const { conversationId } = yield* conversationOf(number, customerPhoneOf(from), undefined, undefined, undefined)
          yield* sql`
            INSERT INTO wa_calls (call_id, account_id, conversation_id, direction, status, duration_sec, recording_url, occurred_at)
            VALUES (${id}, ${number.accountId}::uuid, ${conversationId}::uuid, ${stringOf(call.direction) ?? "USER_INITIATED"},
                    ${stringOf(call.status) ?? "unknown"}, ${Number.isFinite(duration) && duration >= 0 ? Math.round(duration) : 0},
                    ${stringOf(call.recording_url) ?? null}, ${timeOf(call.timestamp).toISOString()}::timestamptz)
            -- Meta reports a call more than once as it goes (connect, then terminate with its
            -- outcome and duration): the latest report of a call is what the call became.
            ON CONFLICT (call_id) DO UPDATE SET
              status = excluded.status,
              duration_sec = greatest(wa_calls.duration_sec, excluded.duration_sec),
              recording_url = coalesce(excluded.recording_url, wa_calls.recording_url),
              occurred_at = excluded.occurred_at
            WHERE excluded.occurred_at >= wa_calls.occurred_at`
        })).pipe(Effect.orDie)
      })

    const recordPayment = (number: WaNumber, status: Record<string, unknown>) =>
      Effect.gen(function*() {
        const id = stringOf(status.id)
        const recipient = stringOf(status.recipient_id)
        const payment = objectOf(status.payment)
        const reference = stringOf(payment?.reference_id)
        if (id === undefined || recipient === undefined || payment === undefined || reference === undefined) return
        const amount = objectOf(payment.amount)
        const value = Number(amount?.value ?? NaN) / Number(amount?.offset ?? 100)
        if (!Number.isFinite(value)) return
        const state = stringOf(status.status) ?? "unknown"
        const currency = stringOf(payment.currency) ?? "INR"
        const at = timeOf(status.timestamp).toISOString()
        const paymentId = `${id}:${state}`
        const recorded = yield* sql.withTransaction(Effect.gen(function*() {
          const { conversationId, customerId } = yield* conversationOf(number, customerPhoneOf(recipient), undefined, undefined, undefined)
          const inserted = yield* sql`
            INSERT INTO wa_payments (payment_id, account_id, conversation_id, reference_id, amount, currency, status, occurred_at)
            VALUES (${paymentId}, ${number.accountId}::uuid, ${conversationId}::uuid, ${reference}, ${value},
                    ${currency}, ${state}, ${at}::timestamptz)
            ON CONFLICT DO NOTHING RETURNING payment_id`
          return inserted.length > 0 ? customerId : undefined
        })).pipe(Effect.orDie)
        // Money received: Meta's "captured" (India's UPI payments), once per payment.
        if (recorded === undefined || state !== "captured") return
        yield* live.publish(number.accountId, "payment_received", { id: paymentId, reference_id: reference, amount: value, currency, customer_id: recorded, created_at: at })
      })

    const reviewTemplate = (change: MetaChange) =>
      Effect.gen(function*() {
        const event = stringOf(change.value.event)
        const upstreamId = change.value.message_template_id
        if ((event !== "APPROVED" && event !== "REJECTED") || (typeof upstreamId !== "string" && typeof upstreamId !== "number")) return
        const reason = stringOf(change.value.reason)
        yield* templates.review({
          upstreamId: String(upstreamId),
          status: event,
          reason: event === "REJECTED" ? (reason ?? "REJECTED") : null
        })
      })

    /** Every change of one webhook; a change about a number Herald does not know is skipped. */
    const apply = (changes: ReadonlyArray<MetaChange>) =>
      Effect.forEach(changes, (change) =>
        Effect.gen(function*() {
          if (change.field === "message_template_status_update") return yield* reviewTemplate(change)
          const phoneNumberId = stringOf(objectOf(change.value.metadata)?.phone_number_id)
          const number = phoneNumberId === undefined ? undefined : yield* numbers.find(phoneNumberId)
          if (number === undefined) return
          if (change.field === "calls") {
            for (const call of arrayOf(change.value.calls)) yield* recordCall(number, call)
            return
          }
          if (change.field !== "messages") return
          const contacts = arrayOf(change.value.contacts)
          for (const message of arrayOf(change.value.messages)) yield* recordInbound(number, message, contacts)
          for (const status of arrayOf(change.value.statuses)) {
            if (status.type === "payment") yield* recordPayment(number, status)
            else yield* applyStatus(status)
          }
        }), { discard: true })

    return { apply } as const
  }),
  dependencies: [WaNumbers.Default, WaTemplatesRepo.Default, LiveEvents.Default, AgentTurns.Default]
}) {}
