import { createHash } from "node:crypto"
import { FieldIssue } from "../domain/errors.ts"
import { toE164 } from "../messaging/phone.ts"
import { hashUserField } from "./capiUserData.ts"

/** The conversions Herald forwards (design: Lead, Purchase, Subscribe). */
export const CAPI_EVENT_NAMES = ["Lead", "Purchase", "Subscribe"] as const
export type CapiEventName = typeof CAPI_EVENT_NAMES[number]

/** Meta takes events up to 7 days old; a little clock skew into the future. */
export const CAPI_MAX_AGE_SEC = 7 * 86_400
const FUTURE_SKEW_SEC = 60
export const CAPI_BATCH_MAX = 1_000
const MAX_EVENT_ID = 100
const MAX_CTWA_CLID = 500

export interface CapiEventInput {
  readonly event_name: string
  readonly event_id?: string | undefined
  readonly event_time?: number | undefined
  readonly fullPhoneNumber?: string | undefined
  readonly customer_id?: string | undefined
  readonly email?: string | undefined
  readonly value?: number | undefined
  readonly currency?: string | undefined
  readonly ctwa_clid?: string | undefined
}

/** An event checked, before its customer (if named by id) is looked up. */
export interface CheckedEvent {
  readonly eventName: CapiEventName
  readonly eventId: string
  readonly eventTime: number
  readonly phone: string | undefined
  readonly customerId: string | undefined
  readonly email: string | undefined
  readonly value: number | undefined
  readonly currency: string | undefined
  readonly ctwaClid: string | undefined
}

/** Every problem of one event, each named by its path under `at` ("" for a single event). */
export const checkCapiEvent = (input: CapiEventInput, nowSec: number, at: string, newEventId: () => string, issues: Array<FieldIssue>): CheckedEvent | undefined => {
  const before = issues.length
  const path = (field: string) => (at === "" ? field : `${at}.${field}`)
  const problem = (field: string, message: string) => issues.push(new FieldIssue({ path: path(field), message }))
  if (!(CAPI_EVENT_NAMES as ReadonlyArray<string>).includes(input.event_name)) problem("event_name", `must be one of ${CAPI_EVENT_NAMES.join(", ")}`)
  if (input.event_id !== undefined && (input.event_id.trim() === "" || input.event_id.length > MAX_EVENT_ID)) {
    problem("event_id", `must be 1 to ${MAX_EVENT_ID} characters`)
  }
  const eventTime = input.event_time ?? nowSec
  if (!Number.isInteger(eventTime)) problem("event_time", "must be a unix time in whole seconds")
  else if (eventTime < nowSec - CAPI_MAX_AGE_SEC) problem("event_time", "is more than 7 days in the past: Meta refuses older events")
  else if (eventTime > nowSec + FUTURE_SKEW_SEC) problem("event_time", "is in the future")
  let phone: string | undefined
  if (input.fullPhoneNumber !== undefined) {
    const e164 = toE164(input.fullPhoneNumber)
    if ("problem" in e164) problem("fullPhoneNumber", e164.problem)
    else phone = e164.e164
  }
  if (input.fullPhoneNumber !== undefined && input.customer_id !== undefined) problem("customer_id", "give fullPhoneNumber or customer_id, not both")
  const email = input.email === undefined ? undefined : hashUserField("em", input.email)
  if (input.email !== undefined && email === undefined) problem("email", "must be an e-mail address")
  if (input.fullPhoneNumber === undefined && input.customer_id === undefined && input.email === undefined) {
    problem("fullPhoneNumber", "the customer is needed: give fullPhoneNumber, customer_id or email")
  }
  if (input.value !== undefined && !(Number.isFinite(input.value) && input.value >= 0)) problem("value", "must be a number of at least 0")
  if (input.currency !== undefined && !/^[A-Za-z]{3}$/.test(input.currency)) problem("currency", "must be an ISO 4217 code such as INR or USD")
  if (input.event_name === "Purchase") {
    if (input.value === undefined) problem("value", "is required for a Purchase")
    if (input.currency === undefined) problem("currency", "is required for a Purchase")
  }
  if (input.ctwa_clid !== undefined && (input.ctwa_clid === "" || input.ctwa_clid.length > MAX_CTWA_CLID)) problem("ctwa_clid", `must be 1 to ${MAX_CTWA_CLID} characters`)
  if (issues.length > before) return undefined
  return {
    eventName: input.event_name as CapiEventName,
    eventId: input.event_id ?? newEventId(),
    eventTime,
    phone,
    customerId: input.customer_id,
    email,
    value: input.value,
    currency: input.currency?.toUpperCase(),
    ctwaClid: input.ctwa_clid
  }
}

/**
 * Herald's id of an event: the same for the same (account, event_name, event_id), Meta's own
 * deduplication key, so a repeated event is one row and is forwarded once.
 */
export const capiEventUid = (accountId: string, eventName: string, eventId: string): string => {
  const hex = createHash("sha256").update(`${accountId}\n${eventName}\n${eventId}`).digest("hex")
  // Laid out as an RFC 4122 version 5-style uuid (name-based).
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

/** The event in Meta's format (reference/UPSTREAMS.md): user data normalised and hashed. */
export const metaEvent = (event: CheckedEvent, phone: string | undefined, wabaId: string | undefined) => {
  const ph = phone === undefined ? undefined : hashUserField("ph", phone.replace(/^\+/, ""))
  return {
    event_name: event.eventName,
    event_time: event.eventTime,
    event_id: event.eventId,
    action_source: "business_messaging",
    messaging_channel: "whatsapp",
    user_data: {
      ...(ph !== undefined ? { ph: [ph] } : {}),
      ...(event.email !== undefined ? { em: [event.email] } : {}),
      ...(event.ctwaClid !== undefined ? { ctwa_clid: event.ctwaClid } : {}),
      ...(wabaId !== undefined ? { whatsapp_business_account_id: wabaId } : {})
    },
    ...(event.value !== undefined || event.currency !== undefined
      ? { custom_data: { ...(event.value !== undefined ? { value: event.value } : {}), ...(event.currency !== undefined ? { currency: event.currency } : {}) } }
      : {})
  }
}
export type MetaEvent = ReturnType<typeof metaEvent>
