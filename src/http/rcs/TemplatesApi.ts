import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Carousel, RichCard, Suggestion } from "../../domain/content.ts"
import { NoActiveBot, TemplateInvalid } from "../../templates/errors.ts"
import { TEMPLATE_TYPES } from "../../templates/templateInput.ts"
import { TEMPLATE_STATUSES } from "../../templates/TemplatesRepo.ts"
import { Authentication } from "../Authentication.ts"
import { ConflictResponse, errorResponse, InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { ForbiddenResponse } from "./ApiKeysApi.ts"
import { BotNotInScopeResponse } from "./BotsApi.ts"

export const NoActiveBotResponse = errorResponse(NoActiveBot, 403, "no_active_bot")
export const TemplateInvalidResponse = errorResponse(TemplateInvalid, 400, "template_invalid")

const TemplateType = Schema.Literal(...TEMPLATE_TYPES)
const TemplateStatus = Schema.Literal(...TEMPLATE_STATUSES)

const Template = Schema.Struct({
  template_id: Schema.String,
  bot_id: Schema.String,
  name: Schema.String,
  type: TemplateType,
  status: TemplateStatus,
  text: Schema.optional(Schema.String),
  rich_card: Schema.optional(RichCard),
  carousel: Schema.optional(Carousel),
  suggestions: Schema.Array(Suggestion),
  warnings: Schema.Array(Schema.String),
  created_at: Schema.String
})

const TemplatePath = Schema.Struct({ template_id: Schema.String })

/** Templates (contract: POST validated against RCS limits, needs an active bot; DESIGN.md, Templates and Lists). */
export class TemplatesApi extends HttpApiGroup.make("templates")
  .add(
    HttpApiEndpoint.post("create", "/")
      .setPayload(Schema.Struct({
        bot_id: Schema.UUID,
        name: Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(100)),
        type: TemplateType,
        // Which of these must be present follows from `type`: checked by the handler, which names the field.
        text: Schema.optional(Schema.String),
        rich_card: Schema.optional(RichCard),
        carousel: Schema.optional(Carousel),
        suggestions: Schema.optionalWith(Schema.Array(Suggestion), { default: () => [] })
      }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        template_id: Schema.String,
        name: Schema.String,
        bot_id: Schema.String,
        type: TemplateType,
        status: TemplateStatus,
        warnings: Schema.Array(Schema.String),
        // The template as GET /templates/{id} answers it.
        template: Template
      }))
      .addError(InvalidRequestResponse)
      .addError(TemplateInvalidResponse)
      .addError(ForbiddenResponse)
      .addError(NoActiveBotResponse)
      .addError(BotNotInScopeResponse)
      .addError(ConflictResponse)
  )
  .add(
    HttpApiEndpoint.get("list", "/")
      .setUrlParams(Schema.Struct({
        bot_id: Schema.optional(Schema.UUID),
        status: Schema.optional(TemplateStatus),
        // Above the maximum (1000) is served as the maximum.
        limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.positive())),
        cursor: Schema.optional(Schema.String)
      }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        templates: Schema.Array(Template),
        count: Schema.Int,
        // Absent on the last page.
        next_cursor: Schema.optional(Schema.String)
      }))
      .addError(InvalidRequestResponse)
      .addError(BotNotInScopeResponse)
  )
  .add(
    HttpApiEndpoint.get("get", "/:template_id")
      .setPath(TemplatePath)
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), template: Template }))
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
  )
  .add(
    HttpApiEndpoint.del("remove", "/:template_id")
      .setPath(TemplatePath)
      .addSuccess(Schema.Struct({ success: Schema.Literal(true) }))
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs/templates") {}
