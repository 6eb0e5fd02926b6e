import { toE164 } from "../../messaging/phone.ts"
import { digitsOf } from "../events.ts"
import { createHmac, timingSafeEqual } from "node:crypto"

export const META_SIGNATURE_HEADER = "x-hub-signature-256"

/**
 * Whether `header` is `sha256=<hex HMAC-SHA256(appSecret, body)>`, compared in constant time.
 * Checked before the body is parsed: nothing unverified is read.
 */
export const signatureValid = (body: Uint8Array, header: string | undefined, appSecret: string): boolean => {
  if (header === undefined || !header.startsWith("sha256=")) return false
  const given = Buffer.from(header.slice("sha256=".length), "hex")
  const expected = createHmac("sha256", appSecret).update(body).digest()
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** One change of Meta's webhook envelope: `{object, entry:[{id, changes:[{field, value}]}]}`. */
export interface MetaChange {
  readonly wabaId: string | undefined
  readonly field: string
  readonly value: Record<string, unknown>
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** The changes of a webhook body, or undefined when it is not Meta's envelope. */
export const changesOf = (body: unknown): ReadonlyArray<MetaChange> | undefined => {
  if (!isObject(body) || !Array.isArray(body.entry)) return undefined
  const changes: Array<MetaChange> = []
  for (const entry of body.entry) {
    if (!isObject(entry) || !Array.isArray(entry.changes)) continue
    const wabaId = typeof entry.id === "string" ? entry.id : undefined
    for (const change of entry.changes) {
      if (isObject(change) && typeof change.field === "string" && isObject(change.value)) changes.push({ wabaId, field: change.field, value: change.value })
    }
  }
  return changes
}

export const arrayOf = (value: unknown): ReadonlyArray<Record<string, unknown>> => (Array.isArray(value) ? value.filter(isObject) : [])
export const stringOf = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined)
export const objectOf = (value: unknown): Record<string, unknown> | undefined => (isObject(value) ? value : undefined)

/** Meta's timestamps are unix seconds as strings; a missing or odd one is "now". */
export const timeOf = (value: unknown): Date => {
  const seconds = typeof value === "string" || typeof value === "number" ? Number(value) : NaN
  return Number.isFinite(seconds) && seconds > 0 ? new Date(seconds * 1000) : new Date()
}

/** The public API's name for an inbound message's type (as the send side names its types). */
export const publicTypeOf = (message: Record<string, unknown>): string => {
  switch (message.type) {
    case "text":
      return "Text"
    case "image":
      return "Image"
    case "video":
      return "Video"
    case "audio":
      return "Audio"
    case "document":
      return "Document"
    case "sticker":
      return "Sticker"
    case "location":
      return "Location"
    case "contacts":
      return "Contacts"
    case "reaction":
      return "Reaction"
    case "button":
      return "ButtonReply"
    case "interactive":
      return objectOf(message.interactive)?.type === "list_reply" ? "InteractiveListReply" : "InteractiveButtonReply"
    default:
      return "Unsupported"
  }
}

/** The text a person would read in an inbound message, when it has one. */
export const textOf = (message: Record<string, unknown>): string | undefined => {
  const text = stringOf(objectOf(message.text)?.body)
  if (text !== undefined) return text
  const button = stringOf(objectOf(message.button)?.text)
  if (button !== undefined) return button
  const interactive = objectOf(message.interactive)
  const reply = objectOf(interactive?.button_reply) ?? objectOf(interactive?.list_reply)
  if (reply !== undefined) return stringOf(reply.title)
  for (const media of ["image", "video", "document"]) {
    const caption = stringOf(objectOf(message[media])?.caption)
    if (caption !== undefined) return caption
  }
  return undefined
}

/**
 * A customer's number as Herald keeps it (E.164), from Meta's `wa_id`. Meta's ids for Mexican
 * mobiles keep the old "1" after the country code (521…), which no longer dials and which
 * libphonenumber refuses: without it the number is the one a reply is addressed to, so the
 * customer, the conversation and its window, and the events all name the number a client can
 * send back to. Anything libphonenumber cannot read is kept as Meta's digits.
 */
export const customerPhoneOf = (waId: string): string => {
  const digits = digitsOf(waId)
  const dialable = /^521\d{10}$/.test(digits) ? `52${digits.slice(3)}` : digits
  const parsed = toE164(dialable)
  return "e164" in parsed ? parsed.e164 : `+${digits}`
}
