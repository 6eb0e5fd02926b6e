import { Duration, Effect, Option } from "effect"
import { idFor } from "../domain/requestKey.ts"
import { ActorClient } from "../actors/runtime/index.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { mayWrite } from "../domain/access.ts"
import type { Carousel, MessageContent, RichCard, Suggestion } from "../domain/content.ts"
import { checkContent } from "../domain/contentLimits.ts"
import { describeIssues, FieldIssue, InvalidRequest } from "../domain/errors.ts"
import type { Principal } from "../domain/signIn.ts"
import type { GatewayErrorRecord } from "../domain/gatewayError.ts"
import { BotsCache } from "../bots/BotsCache.ts"
import { TemplatesRepo } from "../templates/TemplatesRepo.ts"
import { Wallet } from "../wallet/Wallet.ts"
import { InsufficientBalance, SendGatewayFailed, SendRejected, SendThrottled, SendUnconfirmed } from "./errors.ts"
import { toE164 } from "./phone.ts"
import { activeBot } from "./activeBot.ts"
import { Send, SenderKind, type SendReply } from "./SenderKind.ts"
import { retriesTotalMs } from "./sendRetries.ts"

/** POST /api/v1/rcs/messages/send (DESIGN.md, Messages). */
export interface SendInput {
  readonly botId: string
  readonly to: string
  readonly text?: string | undefined
  readonly richCard?: RichCard | undefined
  readonly carousel?: Carousel | undefined
  readonly templateId?: string | undefined
  readonly suggestions?: ReadonlyArray<Suggestion> | undefined
}

const CONTENT_FIELDS = ["text", "rich_card", "carousel", "template_id"] as const

/** The Gateway error record as the answer of a send, with the status its category calls for. */
export const sendError = (error: GatewayErrorRecord) => {
  const fields = { message: error.message, detail: error.detail, category: error.category, retryable: error.retryable, message_id: error.message_id }
  if (error.message_id !== undefined) return new SendUnconfirmed(fields)
  switch (error.category) {
    case "content":
    case "media":
    case "recipient":
    case "config":
      return new SendRejected(fields)
    case "quota":
      return new SendThrottled(fields)
    default:
      return new SendGatewayFailed(fields)
  }
}

/**
 * Single sends. The API node checks what it can answer alone (role, bot, content, recipient,
 * balance), then hands the send to the bot's sender actor with its own inbox, and waits for the
 * outcome the actor publishes once it is committed: sent, or the Gateway error record.
 */
export class Messages extends Effect.Service<Messages>()("herald/messaging/Messages", {
  effect: Effect.gen(function*() {
    const wallet = yield* Wallet
    const bots = yield* BotsCache
    const templates = yield* TemplatesRepo
    const client = yield* ActorClient
    const config = yield* AppConfig
    const answerWithin = Duration.millis(config.gatewayTimeoutMs + retriesTotalMs + 3_000)

    /** Exactly one of text, rich_card, carousel or template_id; a template must be the bot's. */
    const contentOf = (principal: Principal, input: SendInput) =>
      Effect.gen(function*() {
        const given = CONTENT_FIELDS.filter((f) =>
          (f === "text" ? input.text : f === "rich_card" ? input.richCard : f === "carousel" ? input.carousel : input.templateId) !== undefined
        )
        if (given.length !== 1) {
          return yield* InvalidRequest.single("", `give exactly one of ${CONTENT_FIELDS.join(", ")}${given.length > 1 ? ` (got ${given.join(", ")})` : ""}`)
        }
        const suggestions = input.suggestions ?? []
        let content: MessageContent
        let templateId: string | null = null
        if (input.templateId !== undefined) {
          const template = yield* templates.usable(principal.accountId, input.templateId)
          if (template === undefined) return yield* InvalidRequest.single("template_id", "is not a template of this account")
          if (template.botId !== input.botId) return yield* InvalidRequest.single("template_id", "belongs to another bot")
          content = input.suggestions === undefined ? template.content : { ...template.content, suggestions }
          templateId = input.templateId
        } else if (input.text !== undefined) content = { type: "text", text: input.text, suggestions }
        else if (input.richCard !== undefined) content = { type: "rich_card", rich_card: input.richCard, suggestions }
        else content = { type: "carousel", carousel: input.carousel!, suggestions }
        const check = checkContent(content)
        if (check.errors.length > 0) {
          const issues = check.errors.map((e) => {
            const at = e.indexOf(": ")
            return at > 0 ? new FieldIssue({ path: e.slice(0, at), message: e.slice(at + 2) }) : new FieldIssue({ path: "", message: e })
          })
          return yield* new InvalidRequest({ message: describeIssues(issues), errors: issues })
        }
        return { content, templateId }
      })

    /** Publishes the Send with the caller's own inbox and waits there for the committed outcome. */
    const sendAndWait = (botId: string, makeSend: (inbox: string) => Send) =>
      client.awaitingInbox((inbox) => {
        const command = makeSend(inbox)
        // The inbox also hears if the Send is parked (its message could not be recorded).
        return client.send(SenderKind, botId, command, { msgId: `send-${command.message.messageId}`, replyTo: inbox })
      }, answerWithin).pipe(
        Effect.orDie,
        Effect.flatMap((answer) => {
          const reply = Option.getOrUndefined(answer) as SendReply | { readonly parked: string } | undefined
          // Parked before anything was sent (the gateway is called only once the message is
          // recorded): a fault of Herald's, not of the request, and nothing to undo.
          return reply !== undefined && "parked" in reply ? Effect.dieMessage(`the send could not be recorded: ${reply.parked}`) : Effect.succeed(reply)
        })
      )

    const send = (principal: Principal, input: SendInput) =>
      Effect.gen(function*() {
        yield* mayWrite.sendMessages(principal)
        const bot = yield* activeBot(bots, principal, input.botId)
        const { content, templateId } = yield* contentOf(principal, input)
        const to = toE164(input.to)
        if ("problem" in to) return yield* InvalidRequest.single("to", to.problem)
        const price = config.messagePrice
        const balance = yield* wallet.balanceFor(principal.accountId, price)
        if (balance < price) {
          return yield* new InsufficientBalance({ message: `the wallet balance ${balance.toFixed(2)} does not cover the message price ${price.toFixed(2)}`, balance, price })
        }
        const messageId = yield* idFor("rcs-send")
        const reply = yield* sendAndWait(bot.botId, (inbox) =>
          new Send({
            message: { messageId, accountId: principal.accountId, to: to.e164, content },
            templateId,
            source: "api",
            price,
            replyTo: inbox
          }))
        if (reply === undefined) {
          return yield* new SendUnconfirmed({
            message: "send not confirmed",
            detail: "Herald did not learn the outcome in time; the message may still be sent. Watch for its webhooks or read its report; do not resend.",
            category: "unknown",
            retryable: false,
            message_id: messageId
          })
        }
        if (reply._tag === "Failed") return yield* sendError(reply.error)
        yield* wallet.spent(principal.accountId, price)
        return { messageId: reply.messageId }
      })

    return { send } as const
  }),
  dependencies: [BotsCache.Default, TemplatesRepo.Default, Wallet.Default]
}) {}
