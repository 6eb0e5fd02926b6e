import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { isUuid } from "../../domain/ids.ts"
import { LiveEvents } from "../../live/LiveEvents.ts"
import { Webhooks } from "../../webhooks/Webhooks.ts"
import { fromMetaStatusError } from "../../gateway/cloud/errors.ts"
import { digitsOf, statusEventData, type WaStatus } from "../events.ts"
import { type WaNumber, WaNumbers } from "../numbers/WaNumbers.ts"
import { WaTemplatesRepo } from "../templates/WaTemplatesRepo.ts"
import { arrayOf, customerPhoneOf, type MetaChange, objectOf, publicTypeOf, stringOf, textOf, timeOf } from "./metaWebhook.ts"
import { chargeOnce } from "../../wallet/ledgerWrites.ts"
import { ConversationsRepo, type LastMessage } from "../../conversations/ConversationsRepo.ts"
import { WaMessagesRepo } from "../message/WaMessagesRepo.ts"
import { InboundTurns } from "./InboundTurns.ts"
import { WaInboundRepo } from "./WaInboundRepo.ts"
import { CustomersRepo } from "../../customers/CustomersRepo.ts"
import { OptKeywords } from "../../customers/OptKeywords.ts"
import { mayBeKeyword, optChangeOf } from "../../customers/optOut.ts"
import { BroadcastReports } from "../../messaging/BroadcastReports.ts"

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
    const agents = yield* InboundTurns
    const messages = yield* WaMessagesRepo
    const conversations = yield* ConversationsRepo
    const inbound = yield* WaInboundRepo
    const customers = yield* CustomersRepo
    const optKeywords = yield* OptKeywords
    const targets = yield* BroadcastReports

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
          const moved = yield* messages.move(messageId, wamid, reported as WaStatus, at, error)
          if (moved === undefined) {
            // Not a single send: perhaps one of a campaign's (BroadcastReports, in this transaction).
            if (messageId === undefined) return "unknown_message" as const
            const target = yield* targets.apply({ messageId, status: reported as WaStatus, at: at.getTime(), error })
            return typeof target === "string" ? target : { campaign: target }
          }
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
        if ("campaign" in result) {
          yield* targets.applied(result.campaign)
          return "applied" as const
        }
        yield* live.publish(result.accountId, "message_status", {
          message_id: result.messageId,
          status: reported as WaStatus,
          callback_data: result.callbackData,
          occurred_at: at.toISOString()
        })
        return "applied" as const
      })

    /** The customer and their conversation with the number, created on first contact. */
    const conversationOf = (number: WaNumber, phone: string, name: string | undefined, inboundAt: Date | undefined, lastMessage: LastMessage | undefined) =>
      Effect.gen(function*() {
        const customerId = yield* customers.recordSeen({ accountId: number.accountId, phone, name, seenAt: inboundAt ?? new Date() })
        const conversationId = yield* conversations.onContact({
          accountId: number.accountId,
          phoneNumberId: number.phoneNumberId,
          customerId,
          phone,
          inboundAt,
          lastMessage
        })
        return { customerId, conversationId }
      })

    const recordInbound = (number: WaNumber, message: Record<string, unknown>, contacts: ReadonlyArray<Record<string, unknown>>) =>
      Effect.gen(function*() {
        const wamid = stringOf(message.id)
        const from = stringOf(message.from)
        if (wamid === undefined || from === undefined) return "ignored" as const
        const phone = customerPhoneOf(from)
        const turn = { accountId: number.accountId, phoneNumberId: number.phoneNumberId, phone, wamid }
        if (yield* inbound.known(wamid)) {
          yield* agents.redeliver(turn)
          return "unchanged" as const
        }
        const name = stringOf(objectOf(contacts.find((c) => c.wa_id === from)?.profile)?.name)
        const receivedAt = timeOf(message.timestamp)
        const type = publicTypeOf(message)
        const text = textOf(message)
        // Read before the transaction (a cached read, but a miss is a query), and only for a text
        // that could be a keyword: the account's own keywords or the defaults.
        const optChange = type === "Text" && mayBeKeyword(text) ? optChangeOf(text, yield* optKeywords.of(number.accountId)) : undefined
        const result = yield* webhooks.committed(Effect.gen(function*() {
          const { conversationId, customerId } = yield* conversationOf(number, phone, name, receivedAt, {
            direction: "inbound",
            id: wamid,
            type,
            text: text ?? null,
            at: receivedAt.toISOString()
          })
          const inserted = yield* inbound.insertMessage({
            wamid,
            accountId: number.accountId,
            phoneNumberId: number.phoneNumberId,
            conversationId,
            customerId,
            sender: phone,
            type,
            text: text ?? null,
            payload: message,
            receivedAt
          })
          if (!inserted) return "unchanged" as const
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
          // A message that is only an opt-out (or opt-in) keyword changes the customer's consent to
          // marketing, in this transaction, with its event after the message's.
          if (optChange !== undefined && (yield* customers.setOptedOut({ accountId: number.accountId, customerId, optedOut: optChange.optedOut, at: receivedAt }))) {
            yield* webhooks.emit({
              accountId: number.accountId,
              type: optChange.optedOut ? "customer.opted_out" : "customer.opted_in",
              botId: null,
              channel: "whatsapp",
              data: {
                customer_id: customerId,
                channel: "whatsapp",
                fullPhoneNumber: digitsOf(phone),
                phone_number_id: number.phoneNumberId,
                keyword: optChange.keyword,
                message_id: wamid,
                occurred_at: receivedAt.toISOString()
              }
            })
          }
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
          yield* inbound.upsertCall({
            callId: id,
            accountId: number.accountId,
            conversationId,
            direction: stringOf(call.direction) ?? "USER_INITIATED",
            status: stringOf(call.status) ?? "unknown",
            durationSec: Number.isFinite(duration) && duration >= 0 ? Math.round(duration) : 0,
            recordingUrl: stringOf(call.recording_url) ?? null,
            occurredAt: timeOf(call.timestamp)
          })
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
          const inserted = yield* inbound.insertPayment({
            paymentId,
            accountId: number.accountId,
            conversationId,
            referenceId: reference,
            amount: value,
            currency,
            status: state,
            occurredAt: at
          })
          return inserted ? customerId : undefined
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
  dependencies: [WaNumbers.Default, WaTemplatesRepo.Default, LiveEvents.Default, Webhooks.Default, WaMessagesRepo.Default, ConversationsRepo.Default, WaInboundRepo.Default, CustomersRepo.Default, OptKeywords.Default]
}) {}
