import { Effect } from "effect"
import { Conversations } from "../../conversations/Conversations.ts"
import { PublicCustomers as Customers } from "../customerPresent.ts"
import { PublicMessages } from "../../whatsapp/PublicMessages.ts"
import { WaTemplates } from "../../whatsapp/templates/WaTemplates.ts"
import type { Conversation } from "../../conversations/ConversationsRepo.ts"
import type { WaTemplateRow } from "../../whatsapp/templates/WaTemplatesRepo.ts"
import { HeraldApi } from "../Api.ts"
import { presentPage } from "../page.ts"
import { presentConversation, presentWaMessage, presentWaStatus, presentWaTemplate } from "./presentWhatsApp.ts"
import { CurrentAccount } from "../app/AppAuthentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"

/** A conversation as the public API answers it. */
const answered = <E>(conversation: Effect.Effect<Conversation, E>) =>
  Effect.map(conversation, (c) => ({ result: true as const, success: true as const, conversation: presentConversation(c) }))

/** A template as the public API answers it. */
const template = <E>(row: Effect.Effect<WaTemplateRow, E>) =>
  Effect.map(row, (t) => ({ result: true as const, success: true as const, template: presentWaTemplate(t) }))

export const PublicHttpLive = apiGroup(HeraldApi, "public", (handlers) =>
  Effect.gen(function*() {
    const messages = yield* PublicMessages
    const templates = yield* WaTemplates
    const customers = yield* Customers
    const conversations = yield* Conversations
    return handlers
      .handle("sendMessage", ({ payload }) =>
        Effect.flatMap(CurrentAccount, (account) =>
          Effect.map(messages.send(account, payload), (queued) => ({ result: true as const, success: true as const, message: "Message queued", id: queued.id }))))
      .handle("readMessage", ({ path }) =>
        Effect.flatMap(CurrentAccount, (account) =>
          Effect.map(messages.read(account, path.id), (sent) => ({
            result: true as const,
            success: true as const,
            message: presentWaMessage(sent.message),
            history: sent.history.map(presentWaStatus)
          }))))
      .handle("trackUser", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => customers.track(account, payload)))
      .handle("searchCustomers", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => customers.search(account, payload)))
      .handle("getCustomer", ({ path }) => Effect.flatMap(CurrentAccount, (account) => customers.get(account, path.id)))
      .handle("assignChat", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => answered(conversations.assign(account.accountId, payload))))
      .handle("resolveChat", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => answered(conversations.resolveWith(account.accountId, payload))))
      .handle("createTemplate", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => template(templates.create(account, payload))))
      .handle("listTemplates", ({ urlParams }) =>
        Effect.flatMap(CurrentAccount, (account) =>
          Effect.map(templates.list(account, urlParams), (page) => ({ result: true as const, ...presentPage("templates", page, presentWaTemplate) }))))
      .handle("getTemplate", ({ path }) => Effect.flatMap(CurrentAccount, (account) => template(templates.get(account, path.id))))
      .handle("deleteTemplate", ({ path }) =>
        Effect.flatMap(CurrentAccount, (account) => Effect.as(templates.remove(account, path.id), { result: true as const, success: true as const })))
  }))
