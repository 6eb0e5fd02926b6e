import type { MessageContent, RichCard, Suggestion } from "../../domain/content.ts"
import { toContentMessage } from "../../gateway/rbm/content.ts"
import type { MessageWithHistory, RecipientHistory } from "../../messaging/MessageReports.ts"
import type { InboundRow, MessageRow, StatusRow } from "../../messaging/MessagesRepo.ts"
import { isoOrNull } from "../../storage/isoTimestamp.ts"
import type { CursorPage } from "../../storage/ListCursors.ts"

// How /api/v1/rcs/messages presents the message log's domain values (MessageReports, Messages);
// MessagesApi.ts declares the shapes.

export const presentMessage = (row: MessageRow) => ({
  message_id: row.messageId,
  bot_id: row.botId,
  to: row.recipient,
  status: row.status,
  source: row.source,
  template_id: row.templateId,
  type: row.content.type,
  price: Number(row.price),
  attempts: row.attempts,
  error: row.error,
  created_at: new Date(row.createdAt).toISOString(),
  sent_at: isoOrNull(row.sentAt),
  delivered_at: isoOrNull(row.deliveredAt),
  read_at: isoOrNull(row.readAt),
  failed_at: isoOrNull(row.failedAt)
})

const presentStatus = (row: StatusRow) => ({ status: row.status, at: new Date(row.at).toISOString(), error: row.error })

const presentInbound = (row: InboundRow) => ({
  bot_id: row.botId,
  from: row.sender,
  text: row.text,
  postback_data: row.postbackData,
  received_at: new Date(row.receivedAt).toISOString()
})

const renderSuggestions = (suggestions: ReadonlyArray<Suggestion> | undefined) =>
  (suggestions ?? []).map((s) => `[${s.text}]${s.type === "url" ? ` → ${s.url}` : s.type === "dial" ? ` ☎ ${s.phone}` : ""}`)

const renderCard = (card: RichCard) => [
  ...(card.media ? [`(${card.media.height} media: ${card.media.url})`] : []),
  ...(card.title ? [card.title] : []),
  ...(card.description ? [card.description] : []),
  ...renderSuggestions(card.suggestions)
]

/** The message as a phone would show it, in plain text lines. */
export const renderPreview = (content: MessageContent): string => {
  const body = content.type === "text"
    ? [content.text]
    : content.type === "rich_card"
    ? renderCard(content.rich_card)
    : content.carousel.cards.flatMap((card, i) => [`— card ${i + 1} —`, ...renderCard(card)])
  return [...body, ...renderSuggestions(content.suggestions)].join("\n")
}

/** POST /api/v1/rcs/messages/send: the gateway took it. */
export const presentSent = (sent: { readonly messageId: string }) => ({ success: true as const, message_id: sent.messageId, status: "sent" as const })

export const presentReports = (page: CursorPage<MessageRow>) => ({ success: true as const, messages: page.rows.map(presentMessage), next_cursor: page.nextCursor ?? "" })

export const presentWithHistory = (value: MessageWithHistory) => ({ success: true as const, message: presentMessage(value.message), history: value.history.map(presentStatus) })

export const presentPreview = (row: MessageRow) => ({
  success: true as const,
  message: presentMessage(row),
  content: row.content,
  preview: renderPreview(row.content),
  rbm: { contentMessage: toContentMessage(row.content) }
})

export const presentRecipient = (value: RecipientHistory) => ({
  success: true as const,
  phone: value.phone,
  capability: value.capability === null ? null : { bot_id: value.capability.botId, reachable: value.capability.reachable, features: [...value.capability.features] },
  last_messages: value.sent.map(presentMessage),
  last_inbound: value.received.map(presentInbound)
})
