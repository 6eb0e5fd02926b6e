import { Clock, Effect } from "effect"
import { randomUUID } from "node:crypto"
import { ActorClient } from "../actors/runtime/index.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { describeIssues, FieldIssue, InvalidRequest, NotFound } from "../domain/errors.ts"
import { isUuid } from "../domain/ids.ts"
import { InsufficientBalance } from "../messaging/errors.ts"
import { toE164 } from "../messaging/phone.ts"
import type { SecretKeyAccount } from "../security/SecretKeys.ts"
import { Wallet } from "../wallet/Wallet.ts"
import { NoWaNumber, OutsideServiceWindow, RecipientOptedOut } from "./errors.ts"
import { checkMessageData, type CloudContent, isFreeFormType, type PublicMessageType } from "./message/publicMessage.ts"
import { WaNumbers } from "./numbers/WaNumbers.ts"
import { type WaMessage, type WaMessageStatusEntry, WaMessagesRepo } from "./message/WaMessagesRepo.ts"
import { ConversationsRepo } from "../conversations/ConversationsRepo.ts"
import { WaSend, WaSenderKind } from "./sender/WaSenderKind.ts"
import { buildTemplateSend } from "./templates/templateValues.ts"
import { WaTemplatesRepo } from "./templates/WaTemplatesRepo.ts"
import { approvedTemplate } from "./templates/approvedTemplate.ts"
import { CustomersRepo } from "../customers/CustomersRepo.ts"
import { isOptedOut } from "../customers/optOut.ts"

/** The customer service window (contract, Limits): free-form messages only this long after the customer wrote. */
export const SERVICE_WINDOW_MS = 24 * 60 * 60 * 1000

/** Whether a window opened by the customer's last message at `lastInboundAt` is open at `now`. */
export const windowOpen = (lastInboundAt: Date | null | undefined, now: number) =>
  lastInboundAt != null && now - lastInboundAt.getTime() < SERVICE_WINDOW_MS

export interface PublicMessageInput {
  readonly fullPhoneNumber: string
  readonly callbackData?: string | undefined
  readonly type: PublicMessageType
  readonly data: unknown
  readonly fromPhoneNumberId?: string | undefined
}

/** A send the number's sender took (POST /api/v1/public/message answers it 202). */
export interface QueuedMessage {
  readonly id: string
}

/** A message the account sent, with every status it went through. */
export interface SentMessage {
  readonly message: WaMessage
  readonly history: ReadonlyArray<WaMessageStatusEntry>
}

interface Prepared {
  readonly content: CloudContent
  readonly templateId: string | null
  readonly category: string | null
  readonly price: number
}

/**
 * POST /api/v1/public/message. Everything a client can get wrong is checked here on the API node
 * (number, recipient, content against Meta's limits, the 24-hour window, the template and its
 * values, the balance) and answered before anything is written; the send then goes to its
 * number's `wa_sender` actor and is answered 202 once JetStream has it.
 */
export class PublicMessages extends Effect.Service<PublicMessages>()("herald/whatsapp/PublicMessages", {
  effect: Effect.gen(function*() {
    const numbers = yield* WaNumbers
    const templates = yield* WaTemplatesRepo
    const wallet = yield* Wallet
    const client = yield* ActorClient
    const config = yield* AppConfig
    const messages = yield* WaMessagesRepo
    const conversations = yield* ConversationsRepo
    const customers = yield* CustomersRepo
    const allowHttpMedia = config.mediaAllowHttp

    const template = (accountId: string, data: unknown, issues: Array<FieldIssue>) =>
      Effect.gen(function*() {
        const named = data as { name?: unknown; languageCode?: unknown } | null
        if (typeof named !== "object" || named === null || Array.isArray(named)) {
          issues.push(new FieldIssue({ path: "data", message: "must be an object with name and languageCode" }))
          return undefined
        }
        if (typeof named.name !== "string" || named.name === "") issues.push(new FieldIssue({ path: "data.name", message: "must be the template's name" }))
        if (typeof named.languageCode !== "string" || named.languageCode === "") {
          issues.push(new FieldIssue({ path: "data.languageCode", message: "must be the template's language code, e.g. en or en_US" }))
        }
        if (issues.length > 0) return undefined
        const exact = yield* approvedTemplate(templates, accountId, named.name as string, named.languageCode as string)
        const built = buildTemplateSend(exact.definition, data, { allowHttpMedia })
        if ("issues" in built) {
          issues.push(...built.issues)
          return undefined
        }
        return {
          content: { type: "template", object: built.object },
          templateId: exact.templateId,
          category: exact.category,
          price: config.waPrices[exact.category]
        } satisfies Prepared
      })

    /**
     * `messageId` is given by a sender that must be able to send the same message again without it
     * leaving twice (an AI agent's answer, src/aiAgents/AgentTurns.ts): the actor's stream
     * deduplicates on it. Anyone else gets a new one.
     */
    const send = (account: Pick<SecretKeyAccount, "accountId">, input: PublicMessageInput, messageId: string = randomUUID()) =>
      Effect.gen(function*() {
        const number = yield* numbers.sender(account.accountId, input.fromPhoneNumberId)
        if (number === undefined) {
          if (input.fromPhoneNumberId !== undefined) return yield* InvalidRequest.single("fromPhoneNumberId", "is not a WhatsApp number of this account")
          return yield* new NoWaNumber({ message: "this account has no WhatsApp number to send from; ask the platform operator to onboard one" })
        }
        const issues: Array<FieldIssue> = []
        const to = toE164(input.fullPhoneNumber)
        if ("problem" in to) issues.push(new FieldIssue({ path: "fullPhoneNumber", message: to.problem }))
        let prepared: Prepared | undefined
        if (isFreeFormType(input.type)) {
          const checked = checkMessageData(input.type, input.data, { allowHttpMedia })
          if ("issues" in checked) issues.push(...checked.issues)
          else prepared = { content: checked.content, templateId: null, category: null, price: 0 }
        } else {
          prepared = yield* template(account.accountId, input.data, issues)
        }
        if (issues.length > 0 || prepared === undefined || "problem" in to) {
          return yield* new InvalidRequest({ message: describeIssues(issues), errors: issues })
        }
        if (isFreeFormType(input.type)) {
          const now = yield* Clock.currentTimeMillis
          if (!windowOpen(yield* conversations.lastInboundAt(number.phoneNumberId, to.e164), now)) {
            return yield* new OutsideServiceWindow({
              message: `${to.e164} has not written to this number in the last 24 hours: a free-form message cannot be sent; send an approved template (type Template) instead`
            })
          }
        }
        if (prepared.category === "MARKETING" && isOptedOut((yield* customers.findByPhone(account.accountId, to.e164))?.traits)) {
          return yield* new RecipientOptedOut({
            message: `${to.e164} opted out of marketing (they sent an opt-out keyword such as STOP): a MARKETING template cannot be sent to them until they send START; UTILITY and AUTHENTICATION templates still can`
          })
        }
        if (prepared.price > 0) {
          const balance = yield* wallet.balanceFor(account.accountId, prepared.price)
          if (balance < prepared.price) {
            return yield* new InsufficientBalance({
              message: `the wallet balance ${balance.toFixed(2)} does not cover the template's price ${prepared.price.toFixed(2)}`,
              balance,
              price: prepared.price
            })
          }
        }
        yield* client.send(
          WaSenderKind,
          number.phoneNumberId,
          new WaSend({
            messageId,
            accountId: account.accountId,
            to: to.e164,
            type: input.type,
            content: prepared.content as WaSend["content"],
            templateId: prepared.templateId,
            category: prepared.category,
            callbackData: input.callbackData ?? null,
            price: prepared.price
          }),
          { msgId: `wa-send-${messageId}` }
        ).pipe(Effect.orDie)
        if (prepared.price > 0) yield* wallet.spent(account.accountId, prepared.price)
        return { id: messageId } satisfies QueuedMessage
      })

    /**
     * GET /api/v1/public/message/{id}: one message the account sent through the public API, and
     * every status it went through (oldest first, in the order statuses can be reached: Meta's
     * status timestamps are whole seconds, so an `at` may read earlier than the one before it).
     * Another account's message, or an id that is not one, is 404 (as the surface's other reads).
     * The send is recorded by its number's actor a moment after the 202: until then, 404 too.
     */
    const read = (account: Pick<SecretKeyAccount, "accountId">, messageId: string) =>
      Effect.gen(function*() {
        const row = isUuid(messageId) ? yield* messages.findOfAccount(account.accountId, messageId) : undefined
        if (row === undefined) return yield* new NotFound({ message: `no message ${messageId}` })
        const history = yield* messages.history(messageId)
        return { message: row, history } satisfies SentMessage
      })

    return { send, read } as const
  }),
  dependencies: [WaNumbers.Default, WaTemplatesRepo.Default, Wallet.Default, WaMessagesRepo.Default, ConversationsRepo.Default, CustomersRepo.Default]
}) {}
