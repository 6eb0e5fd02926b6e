import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { NoActiveBot, TemplateInvalid } from "../../templates/errors.ts"
import { TEMPLATE_TYPES } from "../../templates/templateInput.ts"
import { TEMPLATE_STATUSES } from "../../templates/TemplatesRepo.ts"
import { Authentication } from "../Authentication.ts"
import { ConflictResponse, errorResponse, InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { describe, documented } from "../openApiAnnotations.ts"
import { ForbiddenResponse } from "./ApiKeysApi.ts"
import { BotNotInScopeResponse } from "./BotsApi.ts"
import { CarouselSchema, CONTENT_EXAMPLES, RichCardSchema, SuggestionSchema } from "./ContentApi.ts"

export const NoActiveBotResponse = errorResponse(NoActiveBot, 403, "no_active_bot")
export const TemplateInvalidResponse = errorResponse(TemplateInvalid, 400, "template_invalid")

const TemplateType = Schema.Literal(...TEMPLATE_TYPES).annotations({ description: "text, rich_card or carousel: the content field of that name is the template's content." })
const TemplateStatus = Schema.Literal(...TEMPLATE_STATUSES).annotations({ description: "Only an approved template sends (the built-in gateway approves at once; real gateways review)." })
const Warnings = Schema.Array(Schema.String).annotations({ description: "What passed the RCS limits but may be a mistake (a PDF, media of unknown type…), kept with the template." })

const Template = Schema.Struct({
  template_id: Schema.String.annotations({ description: "The template's id." }),
  bot_id: Schema.String.annotations({ description: "The bot it belongs to." }),
  name: Schema.String.annotations({ description: "Its name, unique per bot among live templates." }),
  type: TemplateType,
  status: TemplateStatus,
  text: Schema.optional(Schema.String.annotations({ description: "The text, for a text template; may carry {{placeholders}}." })),
  rich_card: Schema.optional(RichCardSchema),
  carousel: Schema.optional(CarouselSchema),
  suggestions: Schema.Array(SuggestionSchema).annotations({ description: "The message's suggestion chips." }),
  warnings: Warnings,
  created_at: Schema.String.annotations({ description: "When it was created (ISO 8601, UTC)." })
}).annotations({ description: "An RCS template: content stored once for a bot, sent by id later." })

const TemplatePath = Schema.Struct({ template_id: Schema.String.annotations({ description: "The template's id." }) })

const TEMPLATE = {
  template_id: "3e2d1c0b-9a8f-4e7d-8c6b-5a4f3e2d1c0b",
  bot_id: "1b2c3d4e-5f60-4718-89ab-cdef01234567",
  name: "order-shipped",
  type: "rich_card",
  status: "approved",
  rich_card: CONTENT_EXAMPLES.rich_card,
  suggestions: [],
  warnings: [],
  created_at: "2026-03-01T10:00:00.000Z"
}

/** Templates (contract: POST validated against RCS limits, needs an active bot; DESIGN.md, Templates and Lists). */
export class TemplatesApi extends HttpApiGroup.make("templates")
  .add(
    HttpApiEndpoint.post("create", "/")
      .setPayload(Schema.Struct({
        bot_id: Schema.UUID.annotations({ description: "An active bot of the account, in the caller's scope." }),
        name: Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(100), describe("1 to 100 characters after trimming, unique per bot among live templates (case matters).")),
        type: TemplateType,
        // Which of these must be present follows from `type`: checked by the handler, which names the field.
        text: Schema.optional(Schema.String.pipe(describe("The text (1 to 3,072 characters): required when type is text, absent otherwise. {{name}} and {{param}} placeholders are filled per recipient by broadcasts."))),
        rich_card: Schema.optional(RichCardSchema),
        carousel: Schema.optional(CarouselSchema),
        suggestions: Schema.optionalWith(Schema.Array(SuggestionSchema).pipe(describe("The message's suggestion chips, at most 11.")), { default: () => [] })
      }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        template_id: Schema.String.annotations({ description: "The new template's id." }),
        name: Schema.String.annotations({ description: "Its name, trimmed." }),
        bot_id: Schema.String.annotations({ description: "The bot it belongs to." }),
        type: TemplateType,
        status: TemplateStatus,
        warnings: Warnings,
        // The template as GET /templates/{id} answers it.
        template: Template
      }))
      .addError(InvalidRequestResponse)
      .addError(TemplateInvalidResponse)
      .addError(ForbiddenResponse)
      .addError(NoActiveBotResponse)
      .addError(BotNotInScopeResponse)
      .addError(ConflictResponse)
      .annotateContext(documented({
        summary: "Create an RCS template",
        description: "Checks the content against RCS Business Messaging's limits and names every problem at once (400 " +
          "`template_invalid`), and probes card media with a HEAD request. `type` decides which content field is required (the other " +
          "two must be absent). Needs an active bot of the account (403 `no_active_bot`); a name already used on the bot is 409 " +
          "`conflict`. An operator or the owner, with a user token (API keys cannot write templates).",
        request: {
          bot_id: "1b2c3d4e-5f60-4718-89ab-cdef01234567",
          name: "order-shipped",
          type: "rich_card",
          rich_card: CONTENT_EXAMPLES.rich_card
        },
        response: {
          success: true,
          template_id: TEMPLATE.template_id,
          name: "order-shipped",
          bot_id: TEMPLATE.bot_id,
          type: "rich_card",
          status: "approved",
          warnings: [],
          template: TEMPLATE
        },
        returns: "The template, with its warnings."
      }))
  )
  .add(
    HttpApiEndpoint.get("list", "/")
      .setUrlParams(Schema.Struct({
        bot_id: Schema.optional(Schema.UUID.annotations({ description: "Only this bot's templates." })),
        status: Schema.optional(TemplateStatus.annotations({ description: "Only templates in this status." })),
        // Above the maximum (1000) is served as the maximum.
        limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.positive(), describe("Rows on the page: 100 by default; above 1,000 is served as 1,000."))),
        cursor: Schema.optional(Schema.String.annotations({ description: "The next_cursor of the previous page, passed back verbatim; absent for the first page." }))
      }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        templates: Schema.Array(Template).annotations({ description: "The templates, newest first." }),
        count: Schema.Int.annotations({ description: "Templates on this page." }),
        // Absent on the last page.
        next_cursor: Schema.optional(Schema.String.annotations({ description: "Pass it as cursor for the next page; absent on the last page." }))
      }))
      .addError(InvalidRequestResponse)
      .addError(BotNotInScopeResponse)
      .annotateContext(documented({
        summary: "List RCS templates",
        description: "Newest first, by cursor. A bot-scoped member sees its bots' templates. A user token of any role, or an API key " +
          "with templates:read (templates:write grants it).",
        response: { success: true, templates: [TEMPLATE], count: 1 },
        returns: "A page of templates."
      }))
  )
  .add(
    HttpApiEndpoint.get("get", "/:template_id")
      .setPath(TemplatePath)
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), template: Template }))
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
      .annotateContext(documented({
        summary: "Read an RCS template",
        description: "One live template. A user token of any role (not an API key).",
        response: { success: true, template: TEMPLATE },
        returns: "The template."
      }))
  )
  .add(
    HttpApiEndpoint.del("remove", "/:template_id")
      .setPath(TemplatePath)
      .addSuccess(Schema.Struct({ success: Schema.Literal(true) }))
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
      .annotateContext(documented({
        summary: "Delete an RCS template",
        description: "The template disappears from every read and can no longer be sent; its name is free again. A second DELETE is 404. " +
          "An operator or the owner, with a user token.",
        response: { success: true },
        returns: "Deleted."
      }))
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs/templates")
  .annotate(OpenApi.Description, "RCS templates: message content checked against RCS limits once, sent by id by single sends, broadcasts and auto-replies (docs/templates.md).") {}
