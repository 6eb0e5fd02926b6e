import type { CloudContent } from "../whatsapp/message/publicMessage.ts"
import { renderPlaceholders } from "../whatsapp/templates/templateRules.ts"

/**
 * A message as GraphQL's `Message` shows it (docs/graphql.md, "Messages"): `text`, what the person
 * reads, and `content`, the message as WhatsApp carries it, in Meta's Cloud API shape
 * `{type, <type>: {...}}`, for a client that renders buttons, lists, media or a template's values.
 */
export interface MessageContent {
  readonly text: string | null
  readonly content: Record<string, unknown> | null
}

type Json = Record<string, unknown>

const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)
const stringOf = (value: unknown) => (typeof value === "string" ? value : undefined)

/** Meta writes an authentication template's body itself; the code is its one value. */
const AUTHENTICATION_BODY = "{{1}} is your verification code."

/** What an outbound message's template was, when it was one: its body's text and its category. */
export interface SentTemplate {
  readonly body: string | null
  readonly category: string | null
}

/** A template send's body as the customer reads it: the template's body with the send's body values. */
const templateText = (object: Json, template: SentTemplate | undefined): string | null => {
  const body = template?.category === "AUTHENTICATION" ? AUTHENTICATION_BODY : template?.body
  if (body === undefined || body === null) return null
  const components = Array.isArray(object.components) ? object.components.filter(isRecord) : []
  const parameters = components.find((c) => c.type === "body")?.parameters
  const values = Array.isArray(parameters) ? parameters.map((p) => (isRecord(p) ? stringOf(p.text) ?? "" : "")) : []
  return renderPlaceholders(body, values)
}

/**
 * An outbound message (wa_messages.content: what was sent to Meta) read: a text's body, a media's
 * caption, an interactive message's body, a template's rendered body; null for audio and stickers.
 */
export const outboundContent = (content: CloudContent, template?: SentTemplate): MessageContent => {
  const object = isRecord(content.object) ? content.object : {}
  const text = (() => {
    switch (content.type) {
      case "text":
        return stringOf(object.body) ?? null
      case "image":
      case "video":
      case "document":
        return stringOf(object.caption) ?? null
      case "interactive":
        return isRecord(object.body) ? stringOf(object.body.text) ?? null : null
      case "template":
        return templateText(object, template)
      default:
        return null
    }
  })()
  return { text, content: { type: content.type, [content.type]: object } }
}

/**
 * An inbound message (Meta's webhook message, wa_inbound.payload) as content: its type and that
 * type's object, without the envelope (id, sender, timestamp, context), which Message's own fields
 * carry. Its text is the one WaReports stored (a text's body, a reply's title, a caption).
 */
export const inboundContent = (payload: unknown): Record<string, unknown> | null => {
  if (!isRecord(payload)) return null
  const type = stringOf(payload.type)
  if (type === undefined) return null
  return { type, ...(payload[type] === undefined ? {} : { [type]: payload[type] }) }
}
