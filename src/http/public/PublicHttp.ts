import { Effect } from "effect"
import { Conversations } from "../../conversations/Conversations.ts"
import { PublicCustomers as Customers } from "../customerPresent.ts"
import { PublicMessages } from "../../whatsapp/PublicMessages.ts"
import { WaTemplates } from "../../whatsapp/templates/WaTemplates.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentAccount } from "../app/AppAuthentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"

/** A conversation as the public API answers it. */
const answered = <A, E>(conversation: Effect.Effect<A, E>) => Effect.map(conversation, (c) => ({ result: true as const, success: true as const, conversation: c }))

export const PublicHttpLive = apiGroup(HeraldApi, "public", (handlers) =>
  Effect.gen(function*() {
    const messages = yield* PublicMessages
    const templates = yield* WaTemplates
    const customers = yield* Customers
    const conversations = yield* Conversations
    return handlers
      .handle("sendMessage", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => messages.send(account, payload)))
      .handle("readMessage", ({ path }) => Effect.flatMap(CurrentAccount, (account) => messages.read(account, path.id)))
      .handle("trackUser", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => customers.track(account, payload)))
      .handle("searchCustomers", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => customers.search(account, payload)))
      .handle("getCustomer", ({ path }) => Effect.flatMap(CurrentAccount, (account) => customers.get(account, path.id)))
      .handle("assignChat", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => answered(conversations.assign(account.accountId, payload))))
      .handle("resolveChat", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => answered(conversations.resolveWith(account.accountId, payload))))
      .handle("createTemplate", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => templates.create(account, payload)))
      .handle("listTemplates", ({ urlParams }) => Effect.flatMap(CurrentAccount, (account) => templates.list(account, urlParams)))
      .handle("getTemplate", ({ path }) => Effect.flatMap(CurrentAccount, (account) => templates.get(account, path.id)))
      .handle("deleteTemplate", ({ path }) => Effect.flatMap(CurrentAccount, (account) => templates.remove(account, path.id)))
  }))
