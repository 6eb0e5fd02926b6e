import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { Outbox } from "../actors/runtime/index.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { botInScope, requireRole } from "../domain/access.ts"
import type { MessageContent } from "../domain/content.ts"
import { BotNotInScope, Conflict, describeIssues, InvalidRequest, NotFound } from "../domain/errors.ts"
import type { Principal } from "../domain/signIn.ts"
import type { GatewayReport } from "../gateway/rcs.ts"
import { toE164 } from "../messaging/phone.ts"
import { Send, SenderKind } from "../messaging/SenderKind.ts"
import { type BotRow, BotsRepo } from "../bots/BotsRepo.ts"
import { TemplatesRepo } from "../templates/TemplatesRepo.ts"
import { Wallet } from "../wallet/Wallet.ts"
import { AutoRepliesRepo, type RuleRow, RULES_PER_BOT_MAX, type StoredReply } from "./AutoRepliesRepo.ts"
import { NotFired } from "./errors.ts"
import { type MatchKind, pickRule, type Reply, replyOf } from "./rules.ts"
import { ListCursors } from "../storage/ListCursors.ts"

type InboundReport = Extract<GatewayReport, { _tag: "Inbound" }>

export const FIRES_LIMIT_DEFAULT = 100
export const FIRES_LIMIT_MAX = 1000

/** A rule as a request gives it (the HTTP schema has trimmed the keyword and applied defaults). */
export interface RuleInput {
  readonly match: MatchKind
  readonly keyword: string
  readonly reply: { readonly text?: string | undefined; readonly template_id?: string | undefined }
  readonly cooldownSeconds: number
  readonly active: boolean
}

export type RuleChanges = { readonly [K in keyof RuleInput]?: RuleInput[K] | undefined }

const stored = (reply: Reply): StoredReply =>
  "text" in reply ? { replyText: reply.text, replyTemplateId: null } : { replyText: null, replyTemplateId: reply.template_id }

/**
 * Auto-replies (docs/auto-replies.md): a bot's keyword rules, managed by operators and owners and
 * read by every role (a member scoped to bots only on its bots), and the firing of a rule when a
 * user's message arrives. A firing is one transaction: the (rule, recipient) cooldown claimed, the
 * fire recorded, and the reply's Send written to the outbox for the bot's sender actor — so a reply
 * is queued exactly when its firing is recorded, and the sender sends, records and charges it like
 * any other message. Its reads and writes answer domain values (rules, firings, pages of them):
 * http/rcs/presentAutoReplies.ts presents them.
 */
export class AutoReplies extends Effect.Service<AutoReplies>()("herald/autoReplies/AutoReplies", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const wallet = yield* Wallet
    const repo = yield* AutoRepliesRepo
    const cursors = yield* ListCursors
    const bots = yield* BotsRepo
    const templates = yield* TemplatesRepo
    const outbox = yield* Outbox
    const config = yield* AppConfig

    /**
     * The bot, if the caller may act on it: another account's or an unknown one → 404 (it is none
     * of the caller's business whether it exists), outside a scoped member's bots → 403.
     */
    const visibleBot = (principal: Principal, botId: string) =>
      Effect.gen(function*() {
        const bot = yield* bots.find(principal.accountId, botId)
        if (bot === undefined) return yield* new NotFound({ message: `no bot ${botId}` })
        if (!botInScope(principal, bot.botId)) return yield* BotNotInScope.instance()
        return bot
      })

    const visibleRule = (principal: Principal, botId: string, ruleId: string) =>
      Effect.gen(function*() {
        const bot = yield* visibleBot(principal, botId)
        const rule = yield* repo.find(bot.botId, ruleId)
        if (rule === undefined) return yield* new NotFound({ message: `no auto-reply rule ${ruleId} on bot ${botId}` })
        return rule
      })

    /** A valid reply: exactly one of text (within the RBM text limits) or a usable template of this bot. */
    const checkReply = (accountId: string, botId: string, input: RuleInput["reply"]) =>
      Effect.gen(function*() {
        const reply = replyOf(input)
        if (Array.isArray(reply)) return yield* new InvalidRequest({ message: describeIssues(reply), errors: reply })
        if ("template_id" in reply) {
          const template = yield* templates.usable(accountId, reply.template_id)
          if (template === undefined || template.botId !== botId) {
            return yield* InvalidRequest.single("reply.template_id", "is not an approved template of this bot")
          }
        }
        return reply
      })

    const list = Effect.fn("AutoReplies.list")(function*(principal: Principal, botId: string) {
      const bot = yield* visibleBot(principal, botId)
      const rows = yield* repo.list(bot.botId)
      return rows
    })

    const create = Effect.fn("AutoReplies.create")(function*(principal: Principal, botId: string, input: RuleInput) {
      yield* requireRole(principal, "operator", "manage auto-replies")
      const bot = yield* visibleBot(principal, botId)
      const reply = yield* checkReply(principal.accountId, bot.botId, input.reply)
      const row = yield* repo.insert({
        accountId: principal.accountId,
        botId: bot.botId,
        match: input.match,
        keyword: input.keyword,
        reply: stored(reply),
        cooldownSeconds: input.cooldownSeconds,
        active: input.active
      })
      if (row === "TooMany") return yield* new Conflict({ key: "bot_id", message: `a bot has at most ${RULES_PER_BOT_MAX} auto-reply rules` })
      return row
    })

    const update = Effect.fn("AutoReplies.update")(function*(principal: Principal, botId: string, ruleId: string, changes: RuleChanges) {
      yield* requireRole(principal, "operator", "manage auto-replies")
      const rule = yield* visibleRule(principal, botId, ruleId)
      const reply = changes.reply === undefined ? undefined : yield* checkReply(principal.accountId, rule.botId, changes.reply)
      const row = yield* repo.update(rule.botId, rule.ruleId, {
        match: changes.match,
        keyword: changes.keyword,
        reply: reply && stored(reply),
        cooldownSeconds: changes.cooldownSeconds,
        active: changes.active
      })
      if (row === undefined) return yield* new NotFound({ message: `no auto-reply rule ${ruleId} on bot ${botId}` })
      return row
    })

    const remove = Effect.fn("AutoReplies.remove")(function*(principal: Principal, botId: string, ruleId: string) {
      yield* requireRole(principal, "operator", "manage auto-replies")
      const rule = yield* visibleRule(principal, botId, ruleId)
      if (!(yield* repo.remove(rule.botId, rule.ruleId))) return yield* new NotFound({ message: `no auto-reply rule ${ruleId} on bot ${botId}` })
    })

    /** The bot's firings, newest first, paged by an opaque cursor (DESIGN.md, Lists). */
    const fires = Effect.fn("AutoReplies.fires")(function*(principal: Principal, botId: string, query: { readonly limit?: number | undefined; readonly cursor?: string | undefined }) {
      const bot = yield* visibleBot(principal, botId)
      const scope = { list: `auto-reply-fires:${bot.botId}`, accountId: principal.accountId }
      const after = yield* cursors.readPosition(scope, query.cursor)
      const limit = Math.min(query.limit ?? FIRES_LIMIT_DEFAULT, FIRES_LIMIT_MAX)
      const rows = yield* repo.fires(bot.botId, after, limit)
      return cursors.positionPage(scope, rows, limit, (row) => ({ createdAt: row.position, id: row.fireId }))
    })

    /** The content the rule replies with, or why it cannot reply now (its template deleted since). */
    const contentOf = (bot: BotRow, rule: RuleRow) =>
      Effect.gen(function*() {
        if (rule.replyTemplateId === null) {
          return { content: { type: "text", text: rule.replyText ?? "", suggestions: [] } as MessageContent, templateId: null }
        }
        const template = yield* templates.usable(bot.accountId, rule.replyTemplateId)
        if (template === undefined || template.botId !== bot.botId) {
          return yield* new NotFired({ reason: "template_unusable", detail: `template ${rule.replyTemplateId} is no longer an approved template of the bot` })
        }
        return { content: template.content, templateId: rule.replyTemplateId }
      })

    /**
     * The same check as a single send makes: a reply the wallet cannot pay for is not queued. Like
     * a single send's, it is a read, not a reservation; the charge is booked when the gateway takes
     * the message.
     */
    const requireBalance = (accountId: string) =>
      Effect.gen(function*() {
        const balance = yield* wallet.balanceFor(accountId, config.messagePrice)
        if (balance < config.messagePrice) {
          return yield* new NotFired({
            reason: "insufficient_balance",
            detail: `the wallet balance ${balance.toFixed(2)} does not cover the message price ${config.messagePrice.toFixed(2)}`
          })
        }
      })

    /**
     * A user's new message to `bot` (the callback route calls this once per upstream message id):
     * fires the first active matching rule unless its cooldown for this sender is running. Never
     * fails: whatever goes wrong is logged, and the callback is answered as usual.
     */
    const onInbound = Effect.fn("AutoReplies.onInbound")(
      function*(bot: BotRow, report: InboundReport) {
        if (bot.status !== "active") return
        const rule = pickRule(yield* repo.active(bot.botId), report.text)
        if (rule === undefined) return
        const normalized = toE164(report.phone)
        // The number as upstream wrote it when it is not one libphonenumber knows: the gateway answers for it.
        const recipient = "e164" in normalized ? normalized.e164 : report.phone
        const { content, templateId } = yield* contentOf(bot, rule)
        yield* requireBalance(bot.accountId)
        const messageId = randomUUID()
        yield* Effect.gen(function*() {
          // The inbound id first: a repeated callback is refused before it could touch the cooldown.
          const firing = {
            ruleId: rule.ruleId,
            accountId: bot.accountId,
            botId: bot.botId,
            recipient,
            inboundText: report.text,
            inboundId: report.messageId,
            messageId
          }
          if (!(yield* repo.insertFire(firing))) return yield* new NotFired({ reason: "already_fired", detail: `inbound message ${report.messageId} fired already` })
          if (!(yield* repo.claimCooldown(rule.ruleId, recipient, rule.cooldownSeconds))) {
            // Failing rolls the fire row back with the transaction.
            return yield* new NotFired({ reason: "cooling_down", detail: `rule ${rule.ruleId} fired for this sender less than ${rule.cooldownSeconds}s ago` })
          }
          yield* outbox.enqueue(
            SenderKind,
            bot.botId,
            new Send({ message: { messageId, accountId: bot.accountId, to: recipient, content }, templateId, source: "auto_reply", price: config.messagePrice, replyTo: null }),
            { msgId: `send-${messageId}` }
          )
        }).pipe(sql.withTransaction)
        yield* outbox.nudge
        yield* Effect.logInfo("auto-reply fired").pipe(Effect.annotateLogs({ bot_id: bot.botId, rule_id: rule.ruleId, message_id: messageId }))
      },
      (effect, bot, report) =>
        effect.pipe(
          Effect.catchTag("NotFired", (e) =>
            (e.reason === "cooling_down" || e.reason === "already_fired" ? Effect.logDebug : Effect.logWarning)(`auto-reply not sent: ${e.detail}`).pipe(
              Effect.annotateLogs({ bot_id: bot.botId, inbound_id: report.messageId, reason: e.reason })
            )),
          Effect.catchAllCause((cause) =>
            Effect.logError("auto-reply failed; the inbound message is recorded, no reply was sent", cause).pipe(
              Effect.annotateLogs({ bot_id: bot.botId, inbound_id: report.messageId })
            ))
        )
    )

    return { list, create, update, remove, fires, onInbound } as const
  }),
  dependencies: [AutoRepliesRepo.Default, TemplatesRepo.Default, BotsRepo.Default, Wallet.Default, ListCursors.Default]
}) {}
