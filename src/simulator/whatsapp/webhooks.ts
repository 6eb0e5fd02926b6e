import { createHash, createHmac } from "node:crypto"

/**
 * The webhooks the Cloud API posts, built as plain objects in Meta's key order. Everything here
 * is a pure function of its arguments: a replayed status is the same bytes as the original.
 */

/** What Meta bills a message as; `service` is a free-form message inside the window. */
export const PRICING_CATEGORIES = ["service", "utility", "marketing", "authentication"] as const
export type PricingCategory = (typeof PRICING_CATEGORIES)[number]

/** Herald's Meta webhook path: a callback URL given as a bare origin gets it appended. */
export const WA_EVENTS_PATH = "/api/v1/public/gateway/whatsapp"

export const WA_SIGNATURE_HEADER = "x-hub-signature-256"

/** The `entry[].id` of webhooks whose WABA the simulator cannot know (it only sees phone_number_id). */
export const SIM_WABA_ID = "sim-waba"

/** `sha256=<hex HMAC-SHA256(appSecret, raw body)>`, as Meta signs every webhook. */
export const signWaBody = (body: Uint8Array, appSecret: string): string => `sha256=${createHmac("sha256", appSecret).update(body).digest("hex")}`

/** What a webhook says about the business number it concerns. */
export interface WaNumber {
  readonly phoneNumberId: string
  readonly displayPhoneNumber: string
  readonly wabaId: string
}

export const envelope = (wabaId: string, field: string, value: object, time?: number) => ({
  object: "whatsapp_business_account",
  entry: [{ id: wabaId, ...(time !== undefined ? { time } : {}), changes: [{ value, field }] }]
})

const metadataOf = (number: WaNumber) => ({ display_phone_number: number.displayPhoneNumber, phone_number_id: number.phoneNumberId })

const contactsOf = (name: string, waId: string) => [{ profile: { name }, wa_id: waId }]

export type StatusName = "sent" | "delivered" | "read" | "failed"

export interface StatusFacts {
  readonly number: WaNumber
  readonly wamid: string
  readonly status: StatusName
  /** Unix seconds the status happened at. */
  readonly at: number
  readonly recipient: string
  readonly messageId: string | undefined
  readonly category: PricingCategory
  readonly errors?: ReadonlyArray<object>
}

const DAY_SECONDS = 86_400

/**
 * Meta names one conversation per (business number, customer, category) for 24 hours; derived,
 * not stored, so a replay rebuilds it.
 */
const conversationId = (facts: StatusFacts) =>
  createHash("md5").update(`${facts.number.phoneNumberId}:${facts.recipient}:${facts.category}`).digest("hex")

/** Meta bills per message (PMP): templates by category, free-form inside the window free. */
const pricingOf = (category: PricingCategory) =>
  category === "service"
    ? { billable: false, pricing_model: "PMP", category, type: "free_customer_service" }
    : { billable: true, pricing_model: "PMP", category, type: "regular" }

/** Conversation and pricing ride on `sent` and `delivered` only, as Meta sends them. */
const billingOf = (facts: StatusFacts) => {
  if (facts.status !== "sent" && facts.status !== "delivered") return {}
  const conversation = {
    id: conversationId(facts),
    ...(facts.status === "sent" ? { expiration_timestamp: String(facts.at + DAY_SECONDS) } : {}),
    origin: { type: facts.category }
  }
  return { conversation, pricing: pricingOf(facts.category) }
}

export const statusWebhook = (facts: StatusFacts) =>
  envelope(facts.number.wabaId, "messages", {
    messaging_product: "whatsapp",
    metadata: metadataOf(facts.number),
    statuses: [{
      id: facts.wamid,
      status: facts.status,
      timestamp: String(facts.at),
      recipient_id: facts.recipient,
      ...(facts.messageId !== undefined ? { biz_opaque_callback_data: facts.messageId } : {}),
      ...billingOf(facts),
      ...(facts.errors !== undefined ? { errors: facts.errors } : {})
    }]
  })

export const inboundWebhook = (number: WaNumber, facts: { readonly from: string; readonly name: string; readonly wamid: string; readonly at: number; readonly text: string }) =>
  envelope(number.wabaId, "messages", {
    messaging_product: "whatsapp",
    metadata: metadataOf(number),
    contacts: contactsOf(facts.name, facts.from),
    messages: [{ from: facts.from, id: facts.wamid, timestamp: String(facts.at), type: "text", text: { body: facts.text } }]
  })

export interface CallFacts {
  readonly id: string
  readonly from: string
  readonly name: string
  /** Unix seconds the call ended. */
  readonly at: number
  readonly status: "completed" | "missed" | "rejected"
  readonly durationSec: number
  readonly recordingUrl: string | undefined
}

/** A user-initiated call's `terminate` event (Meta's Calling API webhook, field `calls`). */
export const callWebhook = (number: WaNumber, call: CallFacts) =>
  envelope(number.wabaId, "calls", {
    messaging_product: "whatsapp",
    metadata: metadataOf(number),
    contacts: contactsOf(call.name, call.from),
    calls: [{
      id: call.id,
      from: call.from,
      to: number.displayPhoneNumber,
      event: "terminate",
      direction: "USER_INITIATED",
      timestamp: String(call.at),
      status: call.status,
      ...(call.status === "completed" ? { start_time: String(call.at - call.durationSec), end_time: String(call.at) } : {}),
      duration: call.durationSec,
      ...(call.recordingUrl !== undefined ? { recording_url: call.recordingUrl } : {})
    }]
  })

export interface PaymentFacts {
  readonly wamid: string
  readonly from: string
  readonly at: number
  readonly referenceId: string
  readonly amount: number
  readonly currency: string
  readonly transactionId: string
}

/** A captured UPI payment (India payments' status webhook). */
export const paymentWebhook = (number: WaNumber, payment: PaymentFacts) =>
  envelope(number.wabaId, "messages", {
    messaging_product: "whatsapp",
    metadata: metadataOf(number),
    statuses: [{
      id: payment.wamid,
      status: "captured",
      type: "payment",
      recipient_id: payment.from,
      timestamp: String(payment.at),
      payment: {
        reference_id: payment.referenceId,
        amount: { value: Math.round(payment.amount * 100), offset: 100 },
        currency: payment.currency,
        transaction: { id: payment.transactionId, type: "upi", status: "success", created_timestamp: payment.at, updated_timestamp: payment.at }
      }
    }]
  })

export interface TemplateReview {
  readonly wabaId: string
  readonly at: number
  readonly event: "APPROVED" | "REJECTED"
  /** Meta's template ids are numeric and posted as numbers here (strings in API answers). */
  readonly templateId: number
  readonly name: string
  readonly language: string
  readonly reason: string
}

export const templateStatusWebhook = (review: TemplateReview) =>
  envelope(
    review.wabaId,
    "message_template_status_update",
    {
      event: review.event,
      message_template_id: review.templateId,
      message_template_name: review.name,
      message_template_language: review.language,
      reason: review.reason
    },
    review.at
  )
