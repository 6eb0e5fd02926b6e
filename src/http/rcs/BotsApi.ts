import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BotNotInScope } from "../../domain/errors.ts"
import { Authentication } from "../Authentication.ts"
import { errorResponse, NotFoundResponse } from "../errors.ts"
import { documented } from "../openApiAnnotations.ts"

export const BotNotInScopeResponse = errorResponse(BotNotInScope, 403, "bot_not_in_scope")

export const Bot = Schema.Struct({
  bot_id: Schema.String.annotations({ description: "The bot's id." }),
  name: Schema.String.annotations({ description: "The bot's name as users see it." }),
  status: Schema.Literal("pending", "active", "rejected", "suspended").annotations({ description: "Only an active bot sends; pending waits for the platform's approval." }),
  can_broadcast: Schema.Boolean.annotations({ description: "Whether the bot may send broadcasts (promotional bots, and bots without a recorded use case)." }),
  bot_use_case: Schema.NullOr(Schema.Literal("promotional", "transactional", "otp")).annotations({ description: "The use case it was approved for; null when none was recorded." }),
  suspend_reason: Schema.optional(Schema.String.annotations({ description: "Why the bot is suspended; present only while it is." })),
  created_at: Schema.String.annotations({ description: "When it was applied for (ISO 8601, UTC)." })
}).annotations({ description: "An RCS bot of the account." })

export const BotsListQuery = Schema.Struct({
  can_broadcast: Schema.optional(Schema.Literal("true", "false").annotations({ description: "Only the bots that may (true) or may not (false) broadcast." }))
})

const BOT = {
  bot_id: "1b2c3d4e-5f60-4718-89ab-cdef01234567",
  name: "Acme Orders",
  status: "active",
  can_broadcast: true,
  bot_use_case: "promotional",
  created_at: "2026-02-20T11:00:00.000Z"
}

/** The account's bots: served by readRoute (src/http/rcs/BotsHttp.ts), declared here. */
export class BotsApi extends HttpApiGroup.make("bots")
  .add(
    HttpApiEndpoint.get("list", "/")
      .setUrlParams(BotsListQuery)
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), bots: Schema.Array(Bot).annotations({ description: "The bots the caller may see, newest first." }) }))
      .annotateContext(documented({
        summary: "List the bots",
        description: "The account's bots the caller may see (a bot-scoped member sees its bots). A user token of any role, or any API key.",
        response: { success: true, bots: [BOT] },
        returns: "The bots."
      }))
  )
  .add(
    HttpApiEndpoint.get("get", "/:bot_id")
      .setPath(Schema.Struct({ bot_id: Schema.String.annotations({ description: "The bot's id." }) }))
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), bot: Bot }))
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
      .annotateContext(documented({
        summary: "Read a bot",
        description: "One bot, with the suspension reason while it is suspended. A user token of any role (not an API key).",
        response: { success: true, bot: { ...BOT, status: "suspended", suspend_reason: "Brand verification expired" } },
        returns: "The bot."
      }))
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs/bots")
  .annotate(OpenApi.Description, "The account's RCS bots and their status.") {}
