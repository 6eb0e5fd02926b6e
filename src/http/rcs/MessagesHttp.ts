import { Effect } from "effect"
import { Messages } from "../../messaging/Messages.ts"
import { MessageReports } from "../../messaging/MessageReports.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"
import { presentPreview, presentRecipient, presentReports, presentSent, presentWithHistory } from "./presentMessages.ts"

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
          }).pipe(Effect.map(presentSent))))
      .handle("message", ({ path }) => Effect.flatMap(CurrentPrincipal, (principal) => Effect.map(reports.message(principal, path.id), presentWithHistory)))
      .handle("reports", ({ urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          reports.list(principal, {
            botId: urlParams.bot_id,
            status: urlParams.status,
            from: urlParams.from,
            to: urlParams.to,
            limit: urlParams.limit,
            cursor: urlParams.cursor
          }).pipe(Effect.map(presentReports))))
      .handle("preview", ({ path }) => Effect.flatMap(CurrentPrincipal, (principal) => Effect.map(reports.preview(principal, path.id), presentPreview)))
      .handle("recipient", ({ path, urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => Effect.map(reports.recipient(principal, path.phone, urlParams.bot_id), presentRecipient)))
  }))
