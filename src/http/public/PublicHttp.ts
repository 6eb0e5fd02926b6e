import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { PublicMessages } from "../../whatsapp/PublicMessages.ts"
import { WaTemplates } from "../../whatsapp/templates/WaTemplates.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentAccount } from "../app/AppAuthentication.ts"

export const PublicHttpLive = HttpApiBuilder.group(HeraldApi, "public", (handlers) =>
  Effect.gen(function*() {
    const messages = yield* PublicMessages
    const templates = yield* WaTemplates
    return handlers
      .handle("sendMessage", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => messages.send(account, payload)))
      .handle("createTemplate", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => templates.create(account, payload)))
      .handle("listTemplates", ({ urlParams }) => Effect.flatMap(CurrentAccount, (account) => templates.list(account, urlParams)))
      .handle("getTemplate", ({ path }) => Effect.flatMap(CurrentAccount, (account) => templates.get(account, path.id)))
      .handle("deleteTemplate", ({ path }) => Effect.flatMap(CurrentAccount, (account) => templates.remove(account, path.id)))
  }))
