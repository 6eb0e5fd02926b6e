import { Effect } from "effect"
import { botInScope, seesAllBots } from "../domain/access.ts"
import type { MessageContent, RichCard, Suggestion } from "../domain/content.ts"
import { BotNotInScope, InvalidRequest, NotFound } from "../domain/errors.ts"
import { isUuid } from "../domain/ids.ts"
import type { Principal } from "../domain/signIn.ts"
import { toContentMessage } from "../gateway/rbm/content.ts"
import { RcsGateway } from "../gateway/RcsGateway.ts"
import { BotsCache } from "../bots/BotsCache.ts"
import { type BotFilter, type InboundRow, type MessageRow, type MessageStatus, MessagesRepo, type StatusRow } from "./MessagesRepo.ts"
import { toE164 } from "./phone.ts"
import { isoOrNull } from "../storage/isoTimestamp.ts"
import { ListCursors } from "../storage/ListCursors.ts"

export const REPORT_LIMIT_DEFAULT = 100
export const REPORT_LIMIT_MAX = 1000
/** A recipient's history: the last this many messages each way. */
export const RECIPIENT_HISTORY = 20


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

const botsOf = (principal: Principal): BotFilter => (seesAllBots(principal) ? "all" : principal.bots)

/**
 * The message log as callers read it (contacts:read with a key; any role): reports with filters
 * and cursor pagination, one message with its status history, one message's rendered preview, and
 * a recipient's capability and history. A member limited to some bots sees only their messages.
 */
export class MessageReports extends Effect.Service<MessageReports>()("herald/messaging/MessageReports", {
  effect: Effect.gen(function*() {
    const repo = yield* MessagesRepo
    const cursors = yield* ListCursors
    const gateway = yield* RcsGateway
    const bots = yield* BotsCache

    const list = (principal: Principal, query: {
      readonly botId?: string | undefined
      readonly status?: MessageStatus | undefined
      readonly from?: Date | undefined
      readonly to?: Date | undefined
      readonly limit?: number | undefined
      readonly cursor?: string | undefined
    }) =>
      Effect.gen(function*() {
        if (query.botId !== undefined && !isUuid(query.botId)) return yield* InvalidRequest.single("bot_id", "is not a bot id")
        if (query.botId !== undefined && !botInScope(principal, query.botId)) return yield* BotNotInScope.instance()
        const scope = { list: "rcs-messages", accountId: principal.accountId }
        const after = yield* cursors.readPosition(scope, query.cursor)
        const limit = Math.min(query.limit ?? REPORT_LIMIT_DEFAULT, REPORT_LIMIT_MAX)
        const rows = yield* repo.page({
          accountId: principal.accountId,
          bots: botsOf(principal),
          botId: query.botId,
          status: query.status,
          since: query.from,
          until: query.to,
          after,
          limit
        })
        const page = cursors.positionPage(scope, rows, limit, (row) => ({ createdAt: row.position, id: row.messageId }))
        return { success: true as const, messages: page.rows.map(presentMessage), next_cursor: page.nextCursor ?? "" }
      })

    const visible = (principal: Principal, messageId: string) =>
      Effect.gen(function*() {
        const row = yield* repo.find(principal.accountId, messageId)
        if (row === undefined) return yield* new NotFound({ message: `no message ${messageId}` })
        if (!botInScope(principal, row.botId)) return yield* BotNotInScope.instance()
        return row
      })

    /**
     * GET /api/v1/rcs/messages/{id}: the message as the reports show it (its Gateway error record
     * in `error` when it failed or is unconfirmed) and every status it went through, oldest first.
     */
    const message = (principal: Principal, messageId: string) =>
      Effect.gen(function*() {
        if (!isUuid(messageId)) return yield* InvalidRequest.single("id", "is not a message id (a uuid, as message_id in the answer to a send)")
        const row = yield* visible(principal, messageId)
        const history = yield* repo.history(row.messageId)
        return { success: true as const, message: presentMessage(row), history: history.map(presentStatus) }
      })

    const preview = (principal: Principal, messageId: string) =>
      Effect.map(visible(principal, messageId), (row) => ({
        success: true as const,
        message: presentMessage(row),
        content: row.content,
        preview: renderPreview(row.content),
        rbm: { contentMessage: toContentMessage(row.content) }
      }))

    /** Capability through the given bot, or the caller's first active bot; null when it has none or the gateway does not answer. */
    const capabilityOf = (principal: Principal, phone: string, botId: string | undefined) =>
      Effect.gen(function*() {
        const active = (yield* bots.list(principal.accountId)).filter((b) => b.status === "active" && botInScope(principal, b.botId))
        const bot = botId === undefined ? active[0] : active.find((b) => b.botId === botId)
        if (bot === undefined) return null
        return yield* gateway.capability(bot.botId, phone).pipe(
          Effect.map((c) => ({ bot_id: bot.botId, reachable: c.reachable, features: [...c.features] })),
          Effect.catchTag("GatewayUnavailable", () => Effect.succeed(null))
        )
      })

    const recipient = (principal: Principal, rawPhone: string, botId: string | undefined) =>
      Effect.gen(function*() {
        const phone = toE164(rawPhone)
        if ("problem" in phone) return yield* InvalidRequest.single("phone", phone.problem)
        if (botId !== undefined && !botInScope(principal, botId)) return yield* BotNotInScope.instance()
        const [capability, sent, received] = yield* Effect.all([
          capabilityOf(principal, phone.e164, botId),
          repo.toRecipient(principal.accountId, botsOf(principal), phone.e164, RECIPIENT_HISTORY),
          repo.fromSender(principal.accountId, botsOf(principal), phone.e164, RECIPIENT_HISTORY)
        ], { concurrency: "unbounded" })
        return {
          success: true as const,
          phone: phone.e164,
          capability,
          last_messages: sent.map(presentMessage),
          last_inbound: received.map(presentInbound)
        }
      })

    return { list, message, preview, recipient } as const
  }),
  dependencies: [MessagesRepo.Default, BotsCache.Default, ListCursors.Default]
}) {}
