import { Effect } from "effect"
import { BotApplications } from "../../bots/BotApplications.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"

export const BotApplicationsHttpLive = apiGroup(HeraldApi, "botApplications", (handlers) =>
  Effect.map(BotApplications, (applications) =>
    handlers.handle("apply", ({ payload }) =>
      Effect.flatMap(CurrentPrincipal, (principal) =>
        applications.apply(principal, {
          botName: payload.bot_name,
          companyName: payload.company_name,
          companyGstin: payload.company_gstin,
          brandWebsite: payload.brand_website,
          useCase: payload.use_case
        }).pipe(Effect.map((bot) => ({ success: true as const, bot_id: bot.botId, status: "pending" as const })))))))
