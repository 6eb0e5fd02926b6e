import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Conflict, NotFound, ServiceUnavailable } from "../../domain/errors.ts"
import { PUBLIC_MESSAGE_TYPES } from "../../whatsapp/message/publicMessage.ts"
import { NoWaNumber, OutsideServiceWindow, TemplateNotUsable, WaTemplateInvalid } from "../../whatsapp/errors.ts"
import { TEMPLATE_CATEGORIES } from "../../whatsapp/templates/templateRules.ts"
import { errorResponse, InvalidRequestResponse } from "../errors.ts"
import { InsufficientBalanceResponse } from "../rcs/MessagesApi.ts"
import { PublicAuthentication } from "./PublicAuthentication.ts"

export const NoWaNumberResponse = errorResponse(NoWaNumber, 409, "no_wa_number")
export const OutsideServiceWindowResponse = errorResponse(OutsideServiceWindow, 422, "outside_service_window")
export const TemplateNotUsableResponse = errorResponse(TemplateNotUsable, 400, "template_not_usable")
export const WaTemplateInvalidResponse = errorResponse(WaTemplateInvalid, 400, "template_invalid")
const TemplateConflictResponse = errorResponse(Conflict, 409, "conflict")
const NotFoundResponse = errorResponse(NotFound, 404, "not_found")
const UnavailableResponse = errorResponse(ServiceUnavailable, 503, "service_unavailable")

const Queued = Schema.Struct({
  result: Schema.Literal(true),
  success: Schema.Literal(true),
  message: Schema.String,
  id: Schema.String.annotations({ description: "Herald's message id: every later event of the message carries it" })
})

const WaTemplate = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  language: Schema.String,
  category: Schema.Literal(...TEMPLATE_CATEGORIES),
  kind: Schema.String,
  status: Schema.Literal("PENDING", "APPROVED", "REJECTED"),
  rejected_reason: Schema.NullOr(Schema.String),
  components: Schema.Unknown,
  warnings: Schema.Array(Schema.String),
  created_at: Schema.String,
  updated_at: Schema.String
})

const TemplateAnswer = Schema.Struct({ result: Schema.Literal(true), success: Schema.Literal(true), template: WaTemplate })

/** The public messaging API (contract, "Public messaging API"; docs/whatsapp.md). */
export class PublicApi extends HttpApiGroup.make("public")
  .add(
    HttpApiEndpoint.post("sendMessage", "/message")
      .setPayload(Schema.Struct({
        fullPhoneNumber: Schema.String.annotations({ description: "digits with the country code, '+' optional" }),
        callbackData: Schema.optional(Schema.String.pipe(Schema.maxLength(512))).annotations({ description: "echoed in every event of the message" }),
        type: Schema.Literal(...PUBLIC_MESSAGE_TYPES),
        data: Schema.Unknown.annotations({ description: "the message, shaped by its type (docs/whatsapp.md)" }),
        fromPhoneNumberId: Schema.optional(Schema.String).annotations({ description: "send from this WhatsApp number of the account instead of its default" })
      }))
      .addSuccess(Queued, { status: 202 })
      .addError(InvalidRequestResponse)
      .addError(TemplateNotUsableResponse)
      .addError(InsufficientBalanceResponse)
      .addError(NoWaNumberResponse)
      .addError(OutsideServiceWindowResponse)
      .annotate(OpenApi.Summary, "Send a WhatsApp message")
  )
  .add(
    HttpApiEndpoint.post("createTemplate", "/templates")
      .setPayload(Schema.Struct({
        name: Schema.String,
        language: Schema.String,
        category: Schema.String,
        components: Schema.Array(Schema.Unknown)
      }))
      .addSuccess(TemplateAnswer, { status: 201 })
      .addError(InvalidRequestResponse)
      .addError(WaTemplateInvalidResponse)
      .addError(TemplateConflictResponse)
      .addError(NoWaNumberResponse)
      .addError(UnavailableResponse)
      .annotate(OpenApi.Summary, "Create a WhatsApp template (submitted to Meta for review)")
  )
  .add(
    HttpApiEndpoint.get("listTemplates", "/templates")
      .setUrlParams(Schema.Struct({
        status: Schema.optional(Schema.Literal("PENDING", "APPROVED", "REJECTED")),
        category: Schema.optional(Schema.Literal(...TEMPLATE_CATEGORIES)),
        limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1000))),
        cursor: Schema.optional(Schema.String)
      }))
      .addSuccess(Schema.Struct({ result: Schema.Literal(true), success: Schema.Literal(true), templates: Schema.Array(WaTemplate), next_cursor: Schema.String }))
      .addError(InvalidRequestResponse)
  )
  .add(
    HttpApiEndpoint.get("getTemplate", "/templates/:id")
      .setPath(Schema.Struct({ id: Schema.String }))
      .addSuccess(TemplateAnswer)
      .addError(NotFoundResponse)
  )
  .add(
    HttpApiEndpoint.del("deleteTemplate", "/templates/:id")
      .setPath(Schema.Struct({ id: Schema.String }))
      .addSuccess(Schema.Struct({ result: Schema.Literal(true), success: Schema.Literal(true) }))
      .addError(NotFoundResponse)
  )
  .middleware(PublicAuthentication)
  .prefix("/api/v1/public") {}
