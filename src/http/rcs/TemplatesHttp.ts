import { Effect } from "effect"
import { Templates } from "../../templates/Templates.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"
import { presentDone } from "./listPage.ts"
import { presentCreated, presentTemplate, presentTemplates } from "./presentTemplates.ts"

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
          }).pipe(Effect.map(presentCreated))))
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (p) =>
          templates.list(p, { botId: urlParams.bot_id, status: urlParams.status, limit: urlParams.limit, cursor: urlParams.cursor }).pipe(Effect.map(presentTemplates))))
      .handle("get", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => Effect.map(templates.get(p, path.template_id), presentTemplate)))
      .handle("remove", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => Effect.map(templates.remove(p, path.template_id), presentDone)))))
