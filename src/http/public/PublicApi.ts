import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Conflict, NotFound, ServiceUnavailable } from "../../domain/errors.ts"
import {
  BUTTON_ID_MAX,
  BUTTON_TITLE_MAX,
  BUTTONS_MAX,
  CAPTION_MAX,
  FILE_NAME_MAX,
  FOOTER_TEXT_MAX,
  HEADER_TEXT_MAX,
  INTERACTIVE_BODY_MAX,
  LIST_BUTTON_MAX,
  LIST_ROWS_MAX,
  MEDIA_URL_MAX,
  PUBLIC_MESSAGE_TYPES,
  ROW_DESCRIPTION_MAX,
  ROW_ID_MAX,
  ROW_TITLE_MAX,
  SECTION_TITLE_MAX,
  SECTIONS_MAX,
  TEXT_MAX
} from "../../whatsapp/message/publicMessage.ts"
import { NoWaNumber, OutsideServiceWindow, RecipientOptedOut, TemplateNotUsable, WaTemplateInvalid } from "../../whatsapp/errors.ts"
import { NAME_MAX, TEMPLATE_CATEGORIES } from "../../whatsapp/templates/templateRules.ts"
import { AgentNotFound, ConversationNotFound } from "../../conversations/errors.ts"
import { CUSTOMERS_LIMIT_DEFAULT, CUSTOMERS_LIMIT_MAX } from "../../customers/Customers.ts"
import { MAX_FILTERS, MAX_IN_VALUES, MAX_TAG_LENGTH, MAX_TAGS_FILTERED, MAX_TRAIT_NAME, OPERATORS } from "../../customers/traitFilters.ts"
import { MAX_NAME, MAX_TAGS, MAX_TRAITS, MAX_USER_ID } from "../../customers/traits.ts"
import { WA_TEMPLATES_LIMIT_DEFAULT } from "../../whatsapp/templates/WaTemplates.ts"
import { WA_MESSAGE_STATUSES } from "../../whatsapp/message/WaMessagesRepo.ts"
import { errorResponse, InvalidRequestResponse } from "../errors.ts"
import { describe, documented } from "../openApiAnnotations.ts"
import { GatewayErrorRecordSchema } from "../rcs/ContentApi.ts"
import { InsufficientBalanceResponse } from "../rcs/MessagesApi.ts"
import { PublicAuthentication } from "./PublicAuthentication.ts"

export const NoWaNumberResponse = errorResponse(NoWaNumber, 409, "no_wa_number")
export const OutsideServiceWindowResponse = errorResponse(OutsideServiceWindow, 422, "outside_service_window")
export const RecipientOptedOutResponse = errorResponse(RecipientOptedOut, 422, "recipient_opted_out")
export const TemplateNotUsableResponse = errorResponse(TemplateNotUsable, 400, "template_not_usable")
export const WaTemplateInvalidResponse = errorResponse(WaTemplateInvalid, 400, "template_invalid")
export const AgentNotFoundResponse = errorResponse(AgentNotFound, 404, "agent_not_found")
export const ConversationNotFoundResponse = errorResponse(ConversationNotFound, 404, "conversation_not_found")
const TemplateConflictResponse = errorResponse(Conflict, 409, "conflict")
const NotFoundResponse = errorResponse(NotFound, 404, "not_found")
const UnavailableResponse = errorResponse(ServiceUnavailable, 503, "service_unavailable")

/** Who may call every operation of the group. */
const CALLER = "The account's secret key as `Authorization: Basic`, on any plan but Starter."

const n = (value: number) => value.toLocaleString("en-US")

// ---------------------------------------------------------------------------------------------
// Fields shared by several operations
// ---------------------------------------------------------------------------------------------

const FullPhoneNumber = Schema.String.annotations({
  description: "The customer's phone number with its country code, '+' optional (919812345678 or +919812345678); spaces, dashes and " +
    "brackets are tolerated. It must be a valid number for its country."
})

const CustomerPhone = FullPhoneNumber.annotations({
  description: "The customer's phone number with its country code, '+' optional (919812345678 or +919812345678). Required: give it as " +
    "fullPhoneNumber (Interakt's name) or as phone (the name answers use), or both if they are the same number."
})
const PhoneAlias = Schema.String.annotations({ description: "fullPhoneNumber under the name answers use: give one of the two (both only if they are the same number)." })

const ChatNumber = Schema.String.annotations({
  description: "The conversation on this WhatsApp number of the account (Meta's phone_number_id); without it, the customer's most recently " +
    "active open conversation."
})

const Cursor = Schema.String.annotations({ description: "The next_cursor of the previous page, passed back verbatim; absent or empty for the first page." })
const NextCursor = Schema.String.annotations({ description: "Pass it as cursor for the next page; empty (\"\") on the last page." })

const Queued = Schema.Struct({
  result: Schema.Literal(true),
  success: Schema.Literal(true),
  message: Schema.String.annotations({ description: "Always \"Message queued\" (Interakt's wording)." }),
  id: Schema.String.annotations({
    description: "Herald's message id (a UUID): every later event of the message (message.sent, message.delivered, message.read, " +
      "message.failed) carries it as id."
  })
})

const WaMessageStatus = Schema.Literal(...WA_MESSAGE_STATUSES).annotations({
  description: "queued: accepted by Herald, waiting for its number's turn; accepted: Meta took the request (answered a wamid); unconfirmed: " +
    "Meta's answer never came, so it may still arrive (it is never sent again; a status from Meta moves it on, else it fails after 24 " +
    "hours); sent, delivered, read: Meta's status webhooks; failed: see error. A status only moves forward."
})
const At = (what: string) => Schema.NullOr(Schema.String).annotations({ description: `When ${what} (ISO 8601, UTC); null until then.` })

const WaMessage = Schema.Struct({
  id: Schema.String.annotations({ description: "Herald's message id, as the send answered it and its events carry it." }),
  callbackData: Schema.NullOr(Schema.String).annotations({ description: "The callbackData the send gave; null when none was." }),
  channel: Schema.Literal("whatsapp").annotations({ description: "Always whatsapp (as in the message's events)." }),
  fullPhoneNumber: Schema.String.annotations({ description: "The recipient: digits with the country code, no '+' (as the message's events carry it)." }),
  type: Schema.String.annotations({ description: "The send's type (Text, Image, …, Template)." }),
  status: WaMessageStatus,
  error: Schema.NullOr(GatewayErrorRecordSchema).annotations({
    description: "Why it failed or is unconfirmed (the Gateway error record, Meta's code as upstream_code); null otherwise."
  }),
  phone_number_id: Schema.String.annotations({ description: "The account's WhatsApp number it left from (Meta's phone_number_id)." }),
  template_id: Schema.NullOr(Schema.String).annotations({ description: "The template it was sent with (type Template); null for a free-form message." }),
  price: Schema.Number.annotations({
    description: "What it costs, in the wallet's currency: its template category's price, charged once when Meta reports it delivered or read; 0 " +
      "for a free-form message."
  }),
  attempts: Schema.Int.annotations({ description: "How many times it was handed to Meta: more than 1 after Meta's own failures, which Herald retries." }),
  created_at: Schema.String.annotations({ description: "When Herald recorded it (ISO 8601, UTC)." }),
  sent_at: At("Meta reported it sent"),
  delivered_at: At("Meta reported it delivered"),
  read_at: At("Meta reported it read"),
  failed_at: At("it failed")
}).annotations({ description: "A WhatsApp message sent with POST /api/v1/public/message." })

const WaStatusChange = Schema.Struct({
  status: WaMessageStatus,
  at: Schema.String.annotations({ description: "When it reached that status (ISO 8601, UTC)." }),
  error: Schema.NullOr(GatewayErrorRecordSchema).annotations({ description: "The Gateway error record it had then (failed, unconfirmed); null for the other statuses." })
}).annotations({ description: "A status the message went through." })

const TemplateStatus = Schema.Literal("PENDING", "APPROVED", "REJECTED")
const TemplateCategory = Schema.Literal(...TEMPLATE_CATEGORIES)

const WaTemplate = Schema.Struct({
  id: Schema.String.annotations({ description: "The template's id in Herald." }),
  name: Schema.String.annotations({ description: "Its name: lowercase letters, digits and underscores." }),
  language: Schema.String.annotations({ description: "Its language, as Meta's code (en, en_US, hi, pt_BR…)." }),
  category: TemplateCategory.annotations({ description: "Meta's category, which sets the price of each message sent with it." }),
  kind: Schema.String.annotations({
    description: "What Herald read it as: text, media, auth, dynamic_cta (a URL button ending in {{1}}), carousel or order_details."
  }),
  status: TemplateStatus.annotations({
    description: "Meta's review: PENDING until it comes, then APPROVED (it can be sent) or REJECTED (rejected_reason says why)."
  }),
  rejected_reason: Schema.NullOr(Schema.String).annotations({ description: "Meta's reason for rejecting it; null unless it is REJECTED." }),
  components: Schema.Unknown.annotations({ description: "Its components as created, in Meta's format (HEADER, BODY, FOOTER, BUTTONS, CAROUSEL)." }),
  warnings: Schema.Array(Schema.String).annotations({
    description: "What passed Meta's limits but Meta's review may refuse or recategorise (a UTILITY template that reads like marketing…)."
  }),
  created_at: Schema.String.annotations({ description: "When it was created (ISO 8601, UTC)." }),
  updated_at: Schema.String.annotations({ description: "When it last changed, such as by Meta's review (ISO 8601, UTC)." })
}).annotations({ description: "A WhatsApp template of the account, submitted to Meta for review." })

const TemplatePath = Schema.Struct({
  id: Schema.String.annotations({ description: "The template's id (id in a template answer)." })
})

const Customer = Schema.Struct({
  id: Schema.String.annotations({ description: "The customer's id: one per phone number and account." }),
  phone: Schema.String.annotations({ description: "The customer's phone number, E.164 with its '+' (as /api/v1/app and GraphQL show it)." }),
  name: Schema.NullOr(Schema.String).annotations({ description: "Their name, as last given by track/users or by their WhatsApp profile; null when unknown." }),
  user_id: Schema.NullOr(Schema.String).annotations({ description: "Your own id for the customer, as last given (userId or user_id); null when none was." }),
  traits: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
    description: "What you know about the customer, by trait name: any JSON values (strings, numbers, booleans, ISO dates, lists…)."
  }),
  tags: Schema.Array(Schema.String).annotations({ description: "The customer's tags, in the order they were added." }),
  created_at: Schema.String.annotations({ description: "When Herald first recorded the customer (ISO 8601, UTC)." }),
  last_seen_at: Schema.NullOr(Schema.String).annotations({
    description: "When the customer last wrote to one of the account's WhatsApp numbers (ISO 8601, UTC); null if they never did."
  }),
  fullPhoneNumber: Schema.String.annotations({ description: "Interakt's name for the phone: digits with the country code, without '+'." }),
  userId: Schema.NullOr(Schema.String).annotations({ description: "Interakt's name for user_id (the same value)." })
}).annotations({
  description: "A customer of the account: a person it talks to on WhatsApp, in the shape every surface answers (docs/customers.md), " +
    "with Interakt's names for the phone and your id beside it."
})

const Conversation = Schema.Struct({
  id: Schema.String.annotations({ description: "The conversation's id." }),
  phone_number_id: Schema.String.annotations({ description: "The account's WhatsApp number it is on (Meta's phone_number_id)." }),
  customer: Schema.Struct({
    id: Schema.String.annotations({ description: "The customer's id." }),
    phone: Schema.String.annotations({ description: "Their phone number, E.164 with its '+'." }),
    name: Schema.NullOr(Schema.String).annotations({ description: "Their name; null when unknown." })
  }).annotations({ description: "The customer the conversation is with." }),
  status: Schema.Literal("open", "resolved").annotations({ description: "open, or resolved (the customer's next message reopens it)." }),
  assignee_email: Schema.NullOr(Schema.String).annotations({
    description: "Who handles it: a team member's e-mail, ai:<agent id> for an AI agent, or null when nobody does."
  }),
  last_message: Schema.Unknown.annotations({
    description: "Its latest message as `{direction, id, type, text, at}`: direction inbound or outbound; id Meta's wamid (inbound) or " +
      "Herald's message id (outbound); type such as Text or Image; text null when the message has none; at in ISO 8601 UTC. Null before any."
  }),
  updated_at: Schema.String.annotations({ description: "When it last changed: a message, an assignment, a resolve (ISO 8601, UTC)." })
}).annotations({ description: "A conversation: one per WhatsApp number of the account and customer." })

const ConversationAnswer = Schema.Struct({ result: Schema.Literal(true), success: Schema.Literal(true), conversation: Conversation })

export const TraitFilter = Schema.Struct({
  trait: Schema.String.annotations({ description: `The trait's name (1 to ${n(MAX_TRAIT_NAME)} characters).` }),
  op: Schema.String.annotations({
    description: `How the trait compares with value, one of ${OPERATORS.join(", ")}. contains matches a string holding value (case ` +
      "does not matter) or a list holding it; gt, gte, lt and lte compare numbers or ISO dates; in matches any value of a list; exists and " +
      "not_exists take no value."
  }),
  value: Schema.optional(Schema.Unknown).annotations({
    description: `What the trait is compared with: a string (at most ${n(1000)} characters), a number or a boolean; a list of 1 to ` +
      `${MAX_IN_VALUES} of them for in; none for exists and not_exists. An ISO 8601 date or date-time compares as an instant. A trait of ` +
      "another type than value does not match."
  })
}).annotations({ description: "A condition on one trait of the customer." })

const TemplateAnswer = Schema.Struct({ result: Schema.Literal(true), success: Schema.Literal(true), template: WaTemplate })

// ---------------------------------------------------------------------------------------------
// Examples
// ---------------------------------------------------------------------------------------------

const PHONE = "919812345678"
const PHONE_NUMBER_ID = "115416010524074"

const CUSTOMER = {
  id: "1b7c2d3e-4f50-4a61-8b72-9c8d7e6f5a4b",
  phone: `+${PHONE}`,
  name: "Asha Rao",
  user_id: "u-1077",
  traits: { city: "Pune", orders: 12, plan: "pro", signup: "2025-03-14" },
  tags: ["vip", "newsletter"],
  created_at: "2026-02-14T08:15:00.000Z",
  last_seen_at: "2026-03-01T09:30:00.000Z",
  // Interakt's names for the same two fields (docs/customers.md, "One customer shape").
  fullPhoneNumber: PHONE,
  userId: "u-1077"
}

const CONVERSATION = {
  id: "5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a",
  phone_number_id: PHONE_NUMBER_ID,
  customer: { id: CUSTOMER.id, phone: `+${PHONE}`, name: "Asha Rao" },
  status: "open",
  assignee_email: "ravi@example.com",
  last_message: {
    direction: "inbound",
    id: "wamid.HBgMOTE5ODEyMzQ1Njc4FQIAEhgUM0EwQjFDMkQzRTRGNTA2MTcyODMA",
    type: "Text",
    text: "Where is my order?",
    at: "2026-03-01T09:30:00.000Z"
  },
  updated_at: "2026-03-01T09:32:10.000Z"
}

const TEMPLATE_COMPONENTS = [
  { type: "BODY", text: "Hi {{1}}, your order {{2}} has shipped and is on its way to you.", example: { body_text: [["Asha", "A-1234"]] } },
  { type: "BUTTONS", buttons: [{ type: "URL", text: "Track", url: "https://acme.example.com/track/{{1}}", example: ["A-1234"] }] }
]

const TEMPLATE = {
  id: "2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f",
  name: "order_update",
  language: "en",
  category: "UTILITY",
  kind: "dynamic_cta",
  status: "APPROVED",
  rejected_reason: null,
  components: TEMPLATE_COMPONENTS,
  warnings: [],
  created_at: "2026-02-20T11:00:00.000Z",
  updated_at: "2026-02-20T11:04:12.000Z"
}

const MESSAGE_DATA = [
  `The message, shaped by type (Meta's limits; lengths count Unicode code points; an optional text, when given, must not be empty):\n`,
  `- Text: {message}, 1 to ${n(TEXT_MAX)} characters.`,
  `- Image, Video: {mediaUrl, message?}, message being the caption (at most ${n(CAPTION_MAX)}).`,
  `- Audio, Sticker: {mediaUrl}.`,
  `- Document: {mediaUrl, fileName?, message?}: fileName at most ${FILE_NAME_MAX} characters, without slashes; caption at most ${n(CAPTION_MAX)}.`,
  `- InteractiveButton: {message, header?, footer?, buttons}: message at most ${n(INTERACTIVE_BODY_MAX)}, header at most ${HEADER_TEXT_MAX}, ` +
  `footer at most ${FOOTER_TEXT_MAX}; 1 to ${BUTTONS_MAX} buttons {id, title}, id at most ${BUTTON_ID_MAX} and title at most ` +
  `${BUTTON_TITLE_MAX}, both unique.`,
  `- InteractiveList: {message, button, header?, footer?, sections}: button (the label that opens the list) at most ${LIST_BUTTON_MAX}; ` +
  `1 to ${SECTIONS_MAX} sections {title?, rows}, title at most ${SECTION_TITLE_MAX} and required with more than one section; at most ` +
  `${LIST_ROWS_MAX} rows in all, each {id, title, description?}: id at most ${ROW_ID_MAX} and unique, title at most ${ROW_TITLE_MAX}, ` +
  `description at most ${ROW_DESCRIPTION_MAX}.`,
  `- Template: {name, languageCode, headerValues?, bodyValues?, buttonValues?, carouselCards?, orderDetails?}: an APPROVED template of ` +
  `the account by name and language, with exactly the values its placeholders ask for (buttonValues by button index: {"0": ["A-1234"]}).`,
  `\nmediaUrl is an absolute https URL of at most ${n(MEDIA_URL_MAX)} characters, which Meta fetches. A field the type does not take is an error.`
].join("\n")

/** The public messaging API (contract, "Public messaging API"; docs/whatsapp.md). */
export class PublicApi extends HttpApiGroup.make("public")
  .add(
    HttpApiEndpoint.post("sendMessage", "/message")
      .setPayload(Schema.Struct({
        fullPhoneNumber: FullPhoneNumber,
        callbackData: Schema.optional(Schema.String.pipe(Schema.maxLength(512))).annotations({
          description: "Your own reference for the message (at most 512 characters), echoed as callbackData in every event of the message."
        }),
        type: Schema.Literal(...PUBLIC_MESSAGE_TYPES).annotations({
          description: "The kind of message, which decides the shape of data. Every type but Template is free-form: it needs the customer " +
            "to have written to the number in the last 24 hours."
        }),
        data: Schema.Unknown.annotations({ description: MESSAGE_DATA }),
        fromPhoneNumberId: Schema.optional(Schema.String).annotations({
          description: "Send from this WhatsApp number of the account (Meta's phone_number_id) instead of its default one."
        })
      }))
      .addSuccess(Queued, { status: 202 })
      .addError(InvalidRequestResponse)
      .addError(TemplateNotUsableResponse)
      .addError(InsufficientBalanceResponse)
      .addError(NoWaNumberResponse)
      .addError(OutsideServiceWindowResponse)
      .addError(RecipientOptedOutResponse)
      .annotateContext(documented({
        summary: "Send a WhatsApp message",
        description: "Queues a message to one customer from the account's default WhatsApp number, or from `fromPhoneNumberId` (a number " +
          "the account does not have is 400). Everything is checked before anything is written, and every problem is answered at once: " +
          "400 `invalid_request` with `errors[]` naming each field (`fullPhoneNumber`, `data.buttons[2].title`…).\n\n" +
          "Free-form types (all but Template) need the customer to have written to that number in the last 24 hours (422 " +
          "`outside_service_window`: send an approved template instead). A Template send needs an APPROVED template of that name and " +
          "language (400 `template_not_usable`) and a wallet balance that covers its category's price (402 `insufficient_balance`), charged " +
          "when Meta reports it delivered or read. A MARKETING template to a customer who opted out (they sent STOP or another opt-out keyword; " +
          "their `opted_out` trait is true) is 422 `recipient_opted_out`. Free-form messages are free. An account without a WhatsApp number is 409 `no_wa_number`.\n\n" +
          "The 202 means the message is queued for its number. What happens next comes to the developer webhook as message.sent, " +
          "message.delivered, message.read or message.failed, each with the message's `id` and `callbackData`. " + CALLER,
        request: { fullPhoneNumber: PHONE, callbackData: "order-1234", type: "Text", data: { message: "Your order A-1234 has shipped." } },
        response: { result: true, success: true, message: "Message queued", id: "6e2aa670-73b1-4b35-abd7-22cbceab9053" },
        returns: "Queued: the message's id."
      }))
  )
  .add(
    HttpApiEndpoint.get("readMessage", "/message/:id")
      .setPath(Schema.Struct({ id: Schema.String.annotations({ description: "The message's id (id in the send's answer and in its events)." }) }))
      .addSuccess(Schema.Struct({
        result: Schema.Literal(true),
        success: Schema.Literal(true),
        message: WaMessage,
        history: Schema.Array(WaStatusChange).annotations({ description: "Every status the message went through, oldest first." })
      }))
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Read a WhatsApp message and its status history",
        description: "One message the account sent with POST /api/v1/public/message: its status now, every status it went through, its " +
          "callbackData and, when it failed or is unconfirmed, the Gateway error record. The send is recorded by its number's queue a moment " +
          "after the 202: until then, and for another account's message or an id that is not one, it is 404 `not_found`. " + CALLER,
        response: {
          result: true,
          success: true,
          message: {
            id: "6e2aa670-73b1-4b35-abd7-22cbceab9053",
            callbackData: "order-1234",
            channel: "whatsapp",
            fullPhoneNumber: PHONE,
            type: "Text",
            status: "read",
            error: null,
            phone_number_id: PHONE_NUMBER_ID,
            template_id: null,
            price: 0,
            attempts: 1,
            created_at: "2026-03-01T09:31:00.412Z",
            sent_at: "2026-03-01T09:31:01.000Z",
            delivered_at: "2026-03-01T09:31:02.000Z",
            read_at: "2026-03-01T09:31:40.000Z",
            failed_at: null
          },
          history: [
            { status: "queued", at: "2026-03-01T09:31:00.412Z", error: null },
            { status: "accepted", at: "2026-03-01T09:31:00.530Z", error: null },
            { status: "sent", at: "2026-03-01T09:31:01.000Z", error: null },
            { status: "delivered", at: "2026-03-01T09:31:02.000Z", error: null },
            { status: "read", at: "2026-03-01T09:31:40.000Z", error: null }
          ]
        },
        returns: "The message and its history."
      }))
  )
  .add(
    HttpApiEndpoint.post("trackUser", "/track/users")
      .setPayload(Schema.Struct({
        fullPhoneNumber: Schema.optional(CustomerPhone),
        phone: Schema.optional(PhoneAlias),
        userId: Schema.optional(Schema.String).annotations({
          description: `Your own id for the customer, 1 to ${MAX_USER_ID} characters (trimmed): replaces the stored one when given. user_id ` +
            "(the name answers use) is taken for it too."
        }),
        user_id: Schema.optional(Schema.String).annotations({ description: "userId under the name answers use: give one of the two (both only if they are equal)." }),
        name: Schema.optional(Schema.String).annotations({
          description: `The customer's name, 1 to ${MAX_NAME} characters (trimmed): replaces the stored one when given.`
        }),
        traits: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })).annotations({
          description: `Traits merged into the customer's, by name (1 to ${MAX_TRAIT_NAME} characters): any JSON value; null removes the ` +
            `trait. A customer has at most ${MAX_TRAITS} traits and 32 KiB of them as JSON.`
        }),
        tags: Schema.optional(Schema.Array(Schema.String)).annotations({
          description: `Tags added to the customer's (each 1 to ${MAX_TAG_LENGTH} characters); never removed here, never duplicated. A ` +
            `customer has at most ${MAX_TAGS} tags.`
        })
      }))
      .addSuccess(Schema.Struct({
        result: Schema.Literal(true),
        success: Schema.Literal(true),
        id: Schema.String.annotations({ description: "The customer's id: the same for every call with the same phone number." })
      }))
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "Create or update a customer by phone",
        description: "Upserts the customer with that phone number: the same phone is the same customer. Traits are merged into the ones " +
          "the customer has (a null trait is removed), tags are added, and name and userId replace the stored values when given. A body " +
          "that breaks a limit is 400 `invalid_request` naming the field, and nothing is written. " + CALLER,
        request: {
          fullPhoneNumber: "+91 98123 45678",
          name: "Asha Rao",
          userId: "u-1077",
          traits: { city: "Pune", orders: 12, signup: "2025-03-14", coupon: null },
          tags: ["vip"]
        },
        response: { result: true, success: true, id: CUSTOMER.id },
        returns: "The customer's id."
      }))
  )
  .add(
    HttpApiEndpoint.post("searchCustomers", "/customers/search")
      .setPayload(Schema.Struct({
        filters: Schema.optional(Schema.Array(TraitFilter)).annotations({
          description: `Conditions on traits, at most ${MAX_FILTERS}: a customer must meet every one.`
        }),
        tags: Schema.optional(Schema.Array(Schema.String)).annotations({
          description: `Tags the customer must all have (at most ${MAX_TAGS_FILTERED}, each 1 to ${MAX_TAG_LENGTH} characters).`
        }),
        limit: Schema.optional(Schema.Int.pipe(
          Schema.between(1, CUSTOMERS_LIMIT_MAX),
          describe(`Customers per page, 1 to ${n(CUSTOMERS_LIMIT_MAX)}; ${CUSTOMERS_LIMIT_DEFAULT} by default.`)
        )),
        cursor: Schema.optional(Cursor)
      }))
      .addSuccess(Schema.Struct({
        result: Schema.Literal(true),
        success: Schema.Literal(true),
        customers: Schema.Array(Customer).annotations({ description: "The matching customers on this page, newest first." }),
        count: Schema.Int.annotations({ description: "Customers on this page." }),
        next_cursor: NextCursor
      }))
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "Search customers by trait and tag",
        description: "The account's customers that meet every filter and have every tag given, newest first (by created_at), by cursor. " +
          "Numbers compare as numbers and ISO dates as instants; a trait of another type than the value does not match. Customers added " +
          "while you walk the pages never shift a page or appear twice. An unknown operator or a value the operator cannot take is 400 " +
          "`invalid_request` naming it (`filters[0].op`). " + CALLER,
        request: {
          filters: [{ trait: "city", op: "eq", value: "Pune" }, { trait: "orders", op: "gte", value: 5 }],
          tags: ["newsletter"],
          limit: 1
        },
        response: {
          result: true,
          success: true,
          customers: [CUSTOMER],
          count: 1,
          next_cursor: "WyIyMDI2LTAyLTE0VDA4OjE1OjAwLjAwMDAwMFoiLCIxYjdjMmQzZS00ZjUwLTRhNjEtOGI3Mi05YzhkN2U2ZjVhNGIiXQ.Xf3kP0sVq8LmZ2TnR6wYbA"
        },
        returns: "A page of customers."
      }))
  )
  .add(
    HttpApiEndpoint.get("getCustomer", "/customers/:id")
      .setPath(Schema.Struct({ id: Schema.String.annotations({ description: "The customer's id (id in track/users' or a search's answer)." }) }))
      .addSuccess(Schema.Struct({ result: Schema.Literal(true), success: Schema.Literal(true), customer: Customer }))
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Read a customer",
        description: "One customer of the account, with traits and tags. Another account's id, or one that is not an id, is 404 " +
          "`not_found`. " + CALLER,
        response: { result: true, success: true, customer: CUSTOMER },
        returns: "The customer."
      }))
  )
  .add(
    HttpApiEndpoint.post("assignChat", "/chats/assign")
      .setPayload(Schema.Struct({
        fullPhoneNumber: Schema.optional(CustomerPhone),
        phone: Schema.optional(PhoneAlias),
        agentEmail: Schema.String.annotations({
          description: "Who handles the conversation: a team member's e-mail (any role; case does not matter), ai:<agent id> for an AI " +
            "agent of the account, or \"\" to unassign. At most 320 characters."
        }),
        phoneNumberId: Schema.optional(ChatNumber)
      }))
      .addSuccess(ConversationAnswer)
      .addError(InvalidRequestResponse)
      .addError(AgentNotFoundResponse)
      .addError(ConversationNotFoundResponse)
      .annotateContext(documented({
        summary: "Assign a customer's open conversation",
        description: "Assigns the customer's open conversation to a team member, to an AI agent (`ai:<agent id>`), or to nobody (an " +
          "empty agentEmail). 404 `agent_not_found` when no member of the account has the e-mail (a member of another account is not one) " +
          "or the account has no such AI agent; 404 `conversation_not_found` when the customer has no open conversation (on that number). " +
          CALLER,
        request: { fullPhoneNumber: PHONE, agentEmail: "ravi@example.com", phoneNumberId: PHONE_NUMBER_ID },
        response: { result: true, success: true, conversation: CONVERSATION },
        returns: "The conversation, assigned."
      }))
  )
  .add(
    HttpApiEndpoint.post("resolveChat", "/chats/resolve")
      .setPayload(Schema.Struct({ fullPhoneNumber: Schema.optional(CustomerPhone), phone: Schema.optional(PhoneAlias), phoneNumberId: Schema.optional(ChatNumber) }))
      .addSuccess(ConversationAnswer)
      .addError(InvalidRequestResponse)
      .addError(ConversationNotFoundResponse)
      .annotateContext(documented({
        summary: "Resolve a customer's open conversation",
        description: "Marks the customer's open conversation resolved; their next message reopens it. A customer without an open " +
          "conversation (on that number), one already resolved included, is 404 `conversation_not_found`. " + CALLER,
        request: { fullPhoneNumber: PHONE },
        response: { result: true, success: true, conversation: { ...CONVERSATION, status: "resolved", updated_at: "2026-03-01T10:05:00.000Z" } },
        returns: "The conversation, resolved."
      }))
  )
  .add(
    HttpApiEndpoint.post("createTemplate", "/templates")
      .setPayload(Schema.Struct({
        name: Schema.String.annotations({
          description: `The template's name: lowercase letters, digits and underscores, at most ${NAME_MAX} characters. One template per name and ` +
            "language."
        }),
        language: Schema.String.annotations({ description: "A language code Meta supports for templates, such as en, en_US, hi or pt_BR." }),
        category: Schema.String.annotations({
          description: "MARKETING, UTILITY or AUTHENTICATION (case does not matter). A carousel must be MARKETING."
        }),
        components: Schema.Array(Schema.Unknown).annotations({
          description: "The components in Meta's own format: HEADER (TEXT, IMAGE, VIDEO, DOCUMENT), BODY with {{1}}…{{n}} placeholders and " +
            "their examples, FOOTER, BUTTONS (QUICK_REPLY, URL, PHONE_NUMBER, COPY_CODE, OTP, ORDER_DETAILS), CAROUSEL with 2 to 10 cards."
        })
      }))
      .addSuccess(TemplateAnswer, { status: 201 })
      .addError(InvalidRequestResponse)
      .addError(WaTemplateInvalidResponse)
      .addError(TemplateConflictResponse)
      .addError(NoWaNumberResponse)
      .addError(UnavailableResponse)
      .annotateContext(documented({
        summary: "Create a WhatsApp template",
        description: "Checks the template against Meta's limits for its kind (text, media, authentication, dynamic CTA, carousel, order " +
          "details) and names every problem at once (400 `template_invalid`), then submits it to Meta under the account's WhatsApp " +
          "Business Account. It is recorded, PENDING, only once Meta took it: Meta refusing it writes nothing (400 `template_invalid` with " +
          "Meta's reason; 503 `service_unavailable` when Meta did not answer or failed: try again). Meta's review comes later and moves it " +
          "to APPROVED or REJECTED. A name already used in that language is 409 `conflict`; an account without a WhatsApp number is 409 " +
          "`no_wa_number`. " + CALLER,
        request: { name: "order_update", language: "en", category: "UTILITY", components: TEMPLATE_COMPONENTS },
        response: { result: true, success: true, template: { ...TEMPLATE, status: "PENDING", updated_at: TEMPLATE.created_at } },
        returns: "The template, PENDING Meta's review."
      }))
  )
  .add(
    HttpApiEndpoint.get("listTemplates", "/templates")
      .setUrlParams(Schema.Struct({
        status: Schema.optional(TemplateStatus.annotations({ description: "Only templates in this review status." })),
        category: Schema.optional(TemplateCategory.annotations({ description: "Only templates of this category." })),
        limit: Schema.optional(Schema.NumberFromString.pipe(
          Schema.int(),
          Schema.between(1, 1000),
          describe(`Templates per page, 1 to ${n(1000)}; ${WA_TEMPLATES_LIMIT_DEFAULT} by default.`)
        )),
        cursor: Schema.optional(Cursor)
      }))
      .addSuccess(Schema.Struct({
        result: Schema.Literal(true),
        success: Schema.Literal(true),
        templates: Schema.Array(WaTemplate).annotations({ description: "The templates on this page, newest first." }),
        next_cursor: NextCursor
      }))
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "List WhatsApp templates",
        description: "The account's templates, newest first, by cursor; deleted ones are left out. " + CALLER,
        response: { result: true, success: true, templates: [TEMPLATE], next_cursor: "" },
        returns: "A page of templates."
      }))
  )
  .add(
    HttpApiEndpoint.get("getTemplate", "/templates/:id")
      .setPath(TemplatePath)
      .addSuccess(TemplateAnswer)
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Read a WhatsApp template",
        description: "One template of the account, with its review status. A deleted template, another account's, or an id that is not " +
          "one is 404 `not_found`. " + CALLER,
        response: { result: true, success: true, template: TEMPLATE },
        returns: "The template."
      }))
  )
  .add(
    HttpApiEndpoint.del("deleteTemplate", "/templates/:id")
      .setPath(TemplatePath)
      .addSuccess(Schema.Struct({ result: Schema.Literal(true), success: Schema.Literal(true) }))
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Delete a WhatsApp template",
        description: "Deletes the template at once: it can no longer be sent, leaves every read, and its name and language are free again. " +
          "Meta is asked to delete it too (best effort: a failure there is not reported). A second DELETE is 404 `not_found`. " + CALLER,
        response: { result: true, success: true },
        returns: "Deleted."
      }))
  )
  .middleware(PublicAuthentication)
  .prefix("/api/v1/public")
  .annotate(
    OpenApi.Description,
    "The public messaging API, compatible with Interakt's: send WhatsApp messages, track and search customers, assign and resolve " +
      "conversations, and manage WhatsApp templates. Every call takes the account's secret key as `Authorization: Basic`, and every " +
      "answer carries Interakt's `result` beside `success` (docs/whatsapp.md, docs/customers.md)."
  ) {}
