import { createHmac, timingSafeEqual } from "node:crypto"
import type { GatewayReport } from "../rcs.ts"
import { expiredRecord } from "./errors.ts"

/**
 * RBM's webhook calls (Google's "Webhooks" guide): a Pub/Sub push envelope
 * `{"message":{"data":"<base64 JSON>","messageId","publishTime"},"subscription"}` whose decoded
 * data is a UserEvent, a UserMessage or a ServerEvent, signed with `X-Goog-Signature` =
 * base64(HMAC-SHA512(clientToken, decoded data)); and, once when the webhook is configured, a
 * verification handshake `{"clientToken","secret"}` answered 200 with the secret as plain text.
 */

export const SIGNATURE_HEADER = "x-goog-signature"

/** What one callback request amounts to; the HTTP edge answers each differently. */
export type RbmCallback =
  /** Answer 200 with `secret` as the plain-text body. */
  | { readonly _tag: "Handshake"; readonly secret: string }
  | { readonly _tag: "Report"; readonly report: GatewayReport }
  /** Not from Google (or another client token): refuse, record nothing. */
  | { readonly _tag: "BadSignature"; readonly reason: string }
  /** Signed correctly but not a shape this adapter understands. */
  | { readonly _tag: "Malformed"; readonly reason: string }

export const signRbmData = (data: Uint8Array, clientToken: string): string =>
  createHmac("sha512", clientToken).update(data).digest("base64")

const sameBytes = (a: Buffer, b: Buffer) => a.length === b.length && timingSafeEqual(a, b)

/** Constant-time: compares the decoded MAC bytes, never the strings. */
export const verifyRbmSignature = (data: Uint8Array, signature: string | undefined, clientToken: string): boolean => {
  if (signature === undefined || signature === "") return false
  const expected = createHmac("sha512", clientToken).update(data).digest()
  return sameBytes(Buffer.from(signature, "base64"), expected)
}

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value)
const str = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined)

const timeOf = (sendTime: unknown): number => {
  const parsed = typeof sendTime === "string" ? Date.parse(sendTime) : NaN
  return Number.isNaN(parsed) ? Date.now() : parsed
}

/**
 * One callback from its raw body and X-Goog-Signature header. The body is taken raw (not parsed
 * JSON) because the signature covers the exact decoded bytes of `message.data`.
 */
export const readRbmCallback = (rawBody: string | Uint8Array, signature: string | undefined, clientToken: string): RbmCallback => {
  let body: unknown
  try {
    body = JSON.parse(typeof rawBody === "string" ? rawBody : Buffer.from(rawBody).toString("utf8"))
  } catch {
    return { _tag: "Malformed", reason: "body is not JSON" }
  }
  if (!isRecord(body)) return { _tag: "Malformed", reason: "body is not a JSON object" }
  if (typeof body.clientToken === "string" && typeof body.secret === "string" && body.message === undefined) {
    return sameBytes(Buffer.from(body.clientToken), Buffer.from(clientToken))
      ? { _tag: "Handshake", secret: body.secret }
      : { _tag: "BadSignature", reason: "clientToken does not match" }
  }
  const data = isRecord(body.message) ? str(body.message.data) : undefined
  if (data === undefined) return { _tag: "Malformed", reason: "no message.data" }
  const decoded = Buffer.from(data, "base64")
  if (!verifyRbmSignature(decoded, signature, clientToken)) {
    return { _tag: "BadSignature", reason: signature ? "X-Goog-Signature does not match" : "X-Goog-Signature missing" }
  }
  let event: unknown
  try {
    event = JSON.parse(decoded.toString("utf8"))
  } catch {
    return { _tag: "Malformed", reason: "message.data is not base64 JSON" }
  }
  return isRecord(event) ? reportOf(event) : { _tag: "Malformed", reason: "message.data is not a JSON object" }
}

const SERVER_EVENTS = new Set(["TTL_EXPIRATION_REVOKED", "TTL_EXPIRATION_REVOKE_FAILED"])

/** The decoded event (UserEvent, ServerEvent or UserMessage) as a report. */
export const reportOf = (event: Record<string, unknown>): RbmCallback => {
  const eventType = str(event.eventType)
  if (eventType !== undefined) return SERVER_EVENTS.has(eventType) ? serverEvent(eventType, event) : userEvent(eventType, event)
  return userMessage(event)
}

const report = (value: GatewayReport): RbmCallback => ({ _tag: "Report", report: value })
const ignored = (reason: string): RbmCallback => report({ _tag: "Ignored", reason })

/**
 * A status report from an event naming its message: user events carry the recipient as
 * `senderPhoneNumber`, server events as `phoneNumber`.
 */
const statusReport = (
  eventType: string,
  event: Record<string, unknown>,
  phoneField: "senderPhoneNumber" | "phoneNumber",
  status: "delivered" | "read" | "failed"
): RbmCallback => {
  const eventId = str(event.eventId)
  const messageId = str(event.messageId)
  const phone = str(event[phoneField])
  if (eventId === undefined || messageId === undefined || phone === undefined) {
    return { _tag: "Malformed", reason: `${eventType} event without eventId, messageId or ${phoneField}` }
  }
  return report({
    _tag: "Status",
    eventId,
    messageId,
    agentId: str(event.agentId) ?? "",
    phone,
    status,
    at: timeOf(event.sendTime),
    ...(status === "failed" ? { error: expiredRecord() } : {})
  })
}

const userEvent = (eventType: string, event: Record<string, unknown>): RbmCallback =>
  eventType === "DELIVERED" || eventType === "READ"
    ? statusReport(eventType, event, "senderPhoneNumber", eventType === "DELIVERED" ? "delivered" : "read")
    : ignored(`user event ${eventType}`)

const serverEvent = (eventType: string, event: Record<string, unknown>): RbmCallback =>
  // Expired but not withdrawn: it may still arrive, and then a DELIVERED follows. Nothing to record.
  eventType === "TTL_EXPIRATION_REVOKE_FAILED"
    ? ignored("message expired but RBM could not revoke it; it may still be delivered")
    : statusReport(eventType, event, "phoneNumber", "failed")

const userMessage = (event: Record<string, unknown>): RbmCallback => {
  const phone = str(event.senderPhoneNumber)
  const agentId = str(event.agentId)
  // Google's UserMessage carries messageId; some of its guide's samples show eventId instead.
  const messageId = str(event.messageId) ?? str(event.eventId)
  if (phone === undefined || agentId === undefined || messageId === undefined) {
    return { _tag: "Malformed", reason: "user message without senderPhoneNumber, agentId or messageId" }
  }
  const at = timeOf(event.sendTime)
  if (typeof event.text === "string") return report({ _tag: "Inbound", messageId, agentId, phone, text: event.text, at })
  if (isRecord(event.suggestionResponse)) {
    const postbackData = str(event.suggestionResponse.postbackData)
    const text = str(event.suggestionResponse.text) ?? postbackData ?? ""
    return report({ _tag: "Inbound", messageId, agentId, phone, text, ...(postbackData !== undefined ? { postbackData } : {}), at })
  }
  if (event.location !== undefined) return ignored("user shared a location")
  if (event.userFile !== undefined) return ignored("user sent a file")
  return { _tag: "Malformed", reason: "user message without text, suggestionResponse, location or userFile" }
}

/** A callback as RBM would send it: the Pub/Sub push envelope and its signature (simulator side). */
export const encodeRbmCallback = (options: {
  readonly event: string
  readonly pubsubMessageId: string
  readonly publishTime: string
  readonly subscription: string
  readonly clientToken: string
}): { readonly body: string; readonly signature: string } => {
  const data = Buffer.from(options.event, "utf8")
  return {
    body: JSON.stringify({
      message: { data: data.toString("base64"), messageId: options.pubsubMessageId, publishTime: options.publishTime },
      subscription: options.subscription
    }),
    signature: signRbmData(data, options.clientToken)
  }
}
