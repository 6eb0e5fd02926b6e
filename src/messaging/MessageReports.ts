import { Effect } from "effect"
import { botInScope, seesAllBots } from "../domain/access.ts"
import { BotNotInScope, InvalidRequest, NotFound } from "../domain/errors.ts"
import { isUuid } from "../domain/ids.ts"
import type { Principal } from "../domain/signIn.ts"
import { RcsGateway } from "../gateway/RcsGateway.ts"
import { BotsCache } from "../bots/BotsCache.ts"
import { type BotFilter, type InboundRow, type MessageRow, type MessageStatus, MessagesRepo, type StatusRow } from "./MessagesRepo.ts"
import { toE164 } from "./phone.ts"
import { ListCursors } from "../storage/ListCursors.ts"

export const REPORT_LIMIT_DEFAULT = 100
export const REPORT_LIMIT_MAX = 1000
/** A recipient's history: the last this many messages each way. */
export const RECIPIENT_HISTORY = 20

/** One message with every status it went through, oldest first. */
export interface MessageWithHistory {
  readonly message: MessageRow
  readonly history: ReadonlyArray<StatusRow>
}

/** Whether a phone can get RCS through a bot, as the gateway says. */
export interface Capability {
  readonly botId: string
  readonly reachable: boolean
  readonly features: ReadonlyArray<string>
}

/** A recipient: its capability (null without an active bot or a gateway answer) and its last messages each way. */
export interface RecipientHistory {
  readonly phone: string
  readonly capability: Capability | null
  readonly sent: ReadonlyArray<MessageRow>
  readonly received: ReadonlyArray<InboundRow>
}


const botsOf = (principal: Principal): BotFilter => (seesAllBots(principal) ? "all" : principal.bots)

/**
 * The message log as callers read it (contacts:read with a key; any role): reports with filters
 * and cursor pagination, one message with its status history, one message's rendered preview, and
 * a recipient's capability and history. A member limited to some bots sees only their messages.
 * Domain values: http/rcs/presentMessages.ts presents them.
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
        return cursors.positionPage(scope, rows, limit, (row) => ({ createdAt: row.position, id: row.messageId }))
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
        return { message: row, history } satisfies MessageWithHistory
      })

    /** The message, for its rendered preview. */
    const preview = (principal: Principal, messageId: string) => visible(principal, messageId)

    /** Capability through the given bot, or the caller's first active bot; null when it has none or the gateway does not answer. */
    const capabilityOf = (principal: Principal, phone: string, botId: string | undefined) =>
      Effect.gen(function*() {
        const active = (yield* bots.list(principal.accountId)).filter((b) => b.status === "active" && botInScope(principal, b.botId))
        const bot = botId === undefined ? active[0] : active.find((b) => b.botId === botId)
        if (bot === undefined) return null
        return yield* gateway.capability(bot.botId, phone).pipe(
          Effect.map((c): Capability => ({ botId: bot.botId, reachable: c.reachable, features: [...c.features] })),
          Effect.catchTag("GatewayUnavailable", () => Effect.succeed(null as Capability | null))
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
        return { phone: phone.e164, capability, sent, received } satisfies RecipientHistory
      })

    return { list, message, preview, recipient } as const
  }),
  dependencies: [MessagesRepo.Default, BotsCache.Default, ListCursors.Default]
}) {}
