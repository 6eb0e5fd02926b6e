import { Effect } from "effect"
import { Templates } from "../../templates/Templates.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"

export const TemplatesHttpLive = apiGroup(HeraldApi, "templates", (handlers) =>
  Effect.map(Templates, (templates) =>
    handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) =>
          templates.create(p, {
            botId: payload.bot_id,
            name: payload.name,
            type: payload.type,
            text: payload.text,
            rich_card: payload.rich_card,
            carousel: payload.carousel,
            suggestions: payload.suggestions
          })))
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (p) =>
          templates.list(p, { botId: urlParams.bot_id, status: urlParams.status, limit: urlParams.limit, cursor: urlParams.cursor })))
      .handle("get", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => templates.get(p, path.template_id)))
      .handle("remove", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => templates.remove(p, path.template_id)))))
