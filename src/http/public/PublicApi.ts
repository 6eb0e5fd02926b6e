import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Conflict, NotFound, ServiceUnavailable } from "../../domain/errors.ts"
import { PUBLIC_MESSAGE_TYPES } from "../../whatsapp/message/publicMessage.ts"
import { NoWaNumber, OutsideServiceWindow, TemplateNotUsable, WaTemplateInvalid } from "../../whatsapp/errors.ts"
import { TEMPLATE_CATEGORIES } from "../../whatsapp/templates/templateRules.ts"
import { AgentNotFound, ConversationNotFound } from "../../conversations/errors.ts"
import { CUSTOMERS_LIMIT_MAX } from "../../customers/Customers.ts"
import { OPERATORS } from "../../customers/traitFilters.ts"
import { errorResponse, InvalidRequestResponse } from "../errors.ts"
import { InsufficientBalanceResponse } from "../rcs/MessagesApi.ts"
import { PublicAuthentication } from "./PublicAuthentication.ts"

export const NoWaNumberResponse = errorResponse(NoWaNumber, 409, "no_wa_number")
export const OutsideServiceWindowResponse = errorResponse(OutsideServiceWindow, 422, "outside_service_window")
export const TemplateNotUsableResponse = errorResponse(TemplateNotUsable, 400, "template_not_usable")
export const WaTemplateInvalidResponse = errorResponse(WaTemplateInvalid, 400, "template_invalid")
export const AgentNotFoundResponse = errorResponse(AgentNotFound, 404, "agent_not_found")
export const ConversationNotFoundResponse = errorResponse(ConversationNotFound, 404, "conversation_not_found")
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

const Customer = Schema.Struct({
  id: Schema.String,
  fullPhoneNumber: Schema.String.annotations({ description: "digits with the country code, no '+'" }),
  name: Schema.NullOr(Schema.String),
  userId: Schema.NullOr(Schema.String),
  traits: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  tags: Schema.Array(Schema.String),
  created_at: Schema.String,
  last_seen_at: Schema.NullOr(Schema.String)
})

const Conversation = Schema.Struct({
  id: Schema.String,
  phone_number_id: Schema.String,
  customer: Schema.Struct({ id: Schema.String, fullPhoneNumber: Schema.String, name: Schema.NullOr(Schema.String) }),
  status: Schema.Literal("open", "resolved"),
  assignee_email: Schema.NullOr(Schema.String),
  last_message: Schema.Unknown,
  updated_at: Schema.String
})

const ConversationAnswer = Schema.Struct({ result: Schema.Literal(true), success: Schema.Literal(true), conversation: Conversation })

export const TraitFilter = Schema.Struct({
  trait: Schema.String,
  op: Schema.String.annotations({ description: `one of ${OPERATORS.join(", ")}` }),
  value: Schema.optional(Schema.Unknown).annotations({ description: "a string, number or boolean; a list for in; none for exists and not_exists" })
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
    HttpApiEndpoint.post("trackUser", "/track/users")
      .setPayload(Schema.Struct({
        fullPhoneNumber: Schema.String.annotations({ description: "digits with the country code, '+' optional" }),
        userId: Schema.optional(Schema.String),
        name: Schema.optional(Schema.String),
        traits: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })).annotations({ description: "merged into the customer's traits; a null value removes the trait" }),
        tags: Schema.optional(Schema.Array(Schema.String)).annotations({ description: "added to the customer's tags" })
      }))
      .addSuccess(Schema.Struct({ result: Schema.Literal(true), success: Schema.Literal(true), id: Schema.String }))
      .addError(InvalidRequestResponse)
      .annotate(OpenApi.Summary, "Create or update a customer by phone")
  )
  .add(
    HttpApiEndpoint.post("searchCustomers", "/customers/search")
      .setPayload(Schema.Struct({
        filters: Schema.optional(Schema.Array(TraitFilter)),
        tags: Schema.optional(Schema.Array(Schema.String)).annotations({ description: "every tag given must be present" }),
        limit: Schema.optional(Schema.Int.pipe(Schema.between(1, CUSTOMERS_LIMIT_MAX))),
        cursor: Schema.optional(Schema.String)
      }))
      .addSuccess(Schema.Struct({
        result: Schema.Literal(true),
        success: Schema.Literal(true),
        customers: Schema.Array(Customer),
        count: Schema.Int.annotations({ description: "customers on this page" }),
        next_cursor: Schema.String
      }))
      .addError(InvalidRequestResponse)
      .annotate(OpenApi.Summary, "Search customers by trait and tag (newest first, by cursor)")
  )
  .add(
    HttpApiEndpoint.get("getCustomer", "/customers/:id")
      .setPath(Schema.Struct({ id: Schema.String }))
      .addSuccess(Schema.Struct({ result: Schema.Literal(true), success: Schema.Literal(true), customer: Customer }))
      .addError(NotFoundResponse)
  )
  .add(
    HttpApiEndpoint.post("assignChat", "/chats/assign")
      .setPayload(Schema.Struct({
        fullPhoneNumber: Schema.String,
        agentEmail: Schema.String.annotations({ description: "a team member's e-mail, or ai:<agent id> for an AI agent; empty unassigns" }),
        phoneNumberId: Schema.optional(Schema.String).annotations({ description: "the conversation on this number of the account; else the customer's most recently active open one" })
      }))
      .addSuccess(ConversationAnswer)
      .addError(InvalidRequestResponse)
      .addError(AgentNotFoundResponse)
      .addError(ConversationNotFoundResponse)
      .annotate(OpenApi.Summary, "Assign a customer's open conversation to an agent")
  )
  .add(
    HttpApiEndpoint.post("resolveChat", "/chats/resolve")
      .setPayload(Schema.Struct({ fullPhoneNumber: Schema.String, phoneNumberId: Schema.optional(Schema.String) }))
      .addSuccess(ConversationAnswer)
      .addError(InvalidRequestResponse)
      .addError(ConversationNotFoundResponse)
      .annotate(OpenApi.Summary, "Resolve a customer's open conversation (their next message reopens it)")
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
