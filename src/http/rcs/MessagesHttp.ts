import { Effect } from "effect"
import { Messages } from "../../messaging/Messages.ts"
import { MessageReports } from "../../messaging/MessageReports.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"

export const MessagesHttpLive = apiGroup(HeraldApi, "messages", (handlers) =>
  Effect.gen(function*() {
    const messages = yield* Messages
    const reports = yield* MessageReports
    return handlers
      .handle("send", ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          messages.send(principal, {
            botId: payload.bot_id,
            to: payload.to,
            text: payload.text,
            richCard: payload.rich_card,
            carousel: payload.carousel,
            templateId: payload.template_id,
            suggestions: payload.suggestions
          })))
      .handle("message", ({ path }) => Effect.flatMap(CurrentPrincipal, (principal) => reports.message(principal, path.id)))
      .handle("reports", ({ urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          reports.list(principal, {
            botId: urlParams.bot_id,
            status: urlParams.status,
            from: urlParams.from,
            to: urlParams.to,
            limit: urlParams.limit,
            cursor: urlParams.cursor
          })))
      .handle("preview", ({ path }) => Effect.flatMap(CurrentPrincipal, (principal) => reports.preview(principal, path.id)))
      .handle("recipient", ({ path, urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => reports.recipient(principal, path.phone, urlParams.bot_id)))
  }))
