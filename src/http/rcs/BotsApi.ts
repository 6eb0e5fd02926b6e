import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { BotNotInScope } from "../../domain/errors.ts"
import { Authentication } from "../Authentication.ts"
import { errorResponse, NotFoundResponse } from "../errors.ts"

export const BotNotInScopeResponse = errorResponse(BotNotInScope, 403, "bot_not_in_scope")

export const Bot = Schema.Struct({
  bot_id: Schema.String,
  name: Schema.String,
  status: Schema.Literal("pending", "active", "rejected", "suspended"),
  can_broadcast: Schema.Boolean,
  bot_use_case: Schema.NullOr(Schema.Literal("promotional", "transactional", "otp")),
  suspend_reason: Schema.optional(Schema.String),
  created_at: Schema.String
})

export const BotsListQuery = Schema.Struct({ can_broadcast: Schema.optional(Schema.Literal("true", "false")) })

export class BotsApi extends HttpApiGroup.make("bots")
  .add(
    HttpApiEndpoint.get("list", "/")
      .setUrlParams(BotsListQuery)
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), bots: Schema.Array(Bot) }))
  )
  .add(
    HttpApiEndpoint.get("get", "/:bot_id")
      .setPath(Schema.Struct({ bot_id: Schema.String }))
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), bot: Bot }))
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs/bots") {}

