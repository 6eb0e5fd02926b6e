import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Timestamp } from "../../domain/timestamps.ts"
import {
  BotNotActive,
  InsufficientBalance,
  SendGatewayFailed,
  SendRejected,
  SendThrottled,
  SendUnconfirmed
} from "../../messaging/errors.ts"
import { MESSAGE_STATUSES } from "../../messaging/MessagesRepo.ts"
import { Authentication } from "../Authentication.ts"
import { errorResponse, InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { describe, documented } from "../openApiAnnotations.ts"
import { ForbiddenResponse } from "./ApiKeysApi.ts"
import { BotNotInScopeResponse } from "./BotsApi.ts"
import { CarouselSchema, CONTENT_EXAMPLES, GatewayErrorRecordSchema, RichCardSchema, SuggestionSchema } from "./ContentApi.ts"

export const BotNotActiveResponse = errorResponse(BotNotActive, 403, "bot_not_active")
export const InsufficientBalanceResponse = errorResponse(InsufficientBalance, 402, "insufficient_balance")
const SendRejectedResponse = errorResponse(SendRejected, 422, "send_rejected")
const SendThrottledResponse = errorResponse(SendThrottled, 429, "gateway_quota")
const SendGatewayFailedResponse = errorResponse(SendGatewayFailed, 502, "gateway_error")
const SendUnconfirmedResponse = errorResponse(SendUnconfirmed, 504, "send_unconfirmed")

const Status = Schema.Literal(...MESSAGE_STATUSES).annotations({
  description: "queued: recorded, not yet taken by the gateway; unconfirmed: the gateway did not confirm it, so it may still arrive (it is never " +
    "sent again); sent: the gateway took it; delivered and read: as the recipient's device reported; failed: see error."
})
const At = (what: string) => Schema.NullOr(Schema.String).annotations({ description: `When ${what} (ISO 8601, UTC); null until then.` })

const Message = Schema.Struct({
  message_id: Schema.String.annotations({ description: "The message's id." }),
  bot_id: Schema.String.annotations({ description: "The bot that sent it." }),
  to: Schema.String.annotations({ description: "The recipient, E.164 with its '+'." }),
  status: Status,
  source: Schema.String.annotations({
    description: "What sent it: api (POST /api/v1/rcs/messages/send) or auto_reply (an auto-reply rule). Broadcasts' messages are not in this " +
      "log: they are their broadcast's targets."
  }),
  template_id: Schema.NullOr(Schema.String).annotations({ description: "The template it was sent from; null when the send gave its content." }),
  type: Schema.String.annotations({ description: "Its content: text, rich_card or carousel." }),
  price: Schema.Number.annotations({
    description: "Its price, in the wallet's currency (GET /api/v1/rcs/wallet): charged once, when the gateway takes it (an unconfirmed message " +
      "when it is reported delivered), and refunded if it fails after that."
  }),
  attempts: Schema.Int.annotations({ description: "How many times it was handed to the gateway: more than 1 after gateway failures, which Herald retries (5 at most)." }),
  error: Schema.NullOr(GatewayErrorRecordSchema).annotations({ description: "Why it failed or is unconfirmed (the Gateway error record); null otherwise." }),
  created_at: Schema.String.annotations({ description: "When it was recorded (ISO 8601, UTC)." }),
  sent_at: At("the gateway took it"),
  delivered_at: At("it was reported delivered"),
  read_at: At("it was reported read"),
  failed_at: At("it failed")
}).annotations({ description: "A message of the log: a single send or an auto-reply." })

/** One status a message went through; `error` is the Gateway error record it had then (failed, unconfirmed). */
const StatusChange = Schema.Struct({
  status: Status,
  at: Schema.String.annotations({ description: "When it reached that status (ISO 8601, UTC)." }),
  error: Schema.NullOr(GatewayErrorRecordSchema).annotations({ description: "The Gateway error record it had then (failed, unconfirmed); null for the other statuses." })
}).annotations({ description: "A status the message went through." })

const Limit = Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1000))

export const ReportsQuery = Schema.Struct({
  bot_id: Schema.optional(Schema.String.annotations({ description: "Only this bot's messages: a bot id in the caller's scope (403 `bot_not_in_scope` otherwise)." })),
  status: Schema.optional(Status.annotations({ description: "Only messages in this status now." })),
  from: Schema.optional(Timestamp.pipe(describe("Only messages recorded at or after this instant (ISO 8601 with its offset, such as 2026-03-01T00:00:00Z)."))),
  to: Schema.optional(Timestamp.pipe(describe("Only messages recorded before this instant (ISO 8601 with its offset, such as 2026-03-02T00:00:00Z)."))),
  limit: Schema.optional(Limit.pipe(describe("Messages on the page, 1 to 1,000: 100 by default."))),
  cursor: Schema.optional(Schema.String.annotations({ description: "The next_cursor of the previous page, passed back verbatim; absent or empty for the first page." }))
})

/**
 * A value answered as it is (Schema.Unknown), shown in the document as the JSON object it always is: Unknown's own JSON Schema
 * (`$id: "/schemas/unknown"`) twice in one answer makes validators refuse the schema. An annotation only.
 */
const anObject = (description: string) => Schema.Unknown.annotations({ description, jsonSchema: { type: "object", description } })

const MessageId = Schema.Struct({ id: Schema.String.annotations({ description: "The message's id (the message_id a send answered)." }) })

const BOT = "1b2c3d4e-5f60-4718-89ab-cdef01234567"
const PHONE = "+919812345678"
const MESSAGE = {
  message_id: "0c9e7a52-4f1d-4b8e-9a3c-2d5e6f7a8b9c",
  bot_id: BOT,
  to: PHONE,
  status: "delivered",
  source: "api",
  template_id: null,
  type: "rich_card",
  price: 0.1,
  attempts: 1,
  error: null,
  created_at: "2026-03-02T10:15:28.905Z",
  sent_at: "2026-03-02T10:15:29.214Z",
  delivered_at: "2026-03-02T10:15:29.870Z",
  read_at: null,
  failed_at: null
}
const FAILED = {
  ...MESSAGE,
  message_id: "307b7f3a-ecf5-4582-a064-7186a749b2b0",
  to: "+919876543210",
  status: "failed",
  template_id: "3e2d1c0b-9a8f-4e7d-8c6b-5a4f3e2d1c0b",
  error: {
    success: false,
    message: "recipient not reachable over RCS",
    detail: "RBM answered 404 NOT_FOUND: Requested entity was not found. The number has no RCS, or the bot is not launched on the recipient's " +
      "carrier; reach this recipient another way (SMS).",
    category: "recipient",
    retryable: false
  },
  sent_at: null,
  delivered_at: null,
  failed_at: "2026-03-02T10:20:03.118Z",
  created_at: "2026-03-02T10:20:02.761Z"
}
const KEY_READ = "A user token of any role, or an API key with contacts:read (contacts:write grants it): the answer holds phone numbers."
const IN_SCOPE = "A member limited to some bots sees only their messages."

/**
 * Single sends and the message log (DESIGN.md, Messages; contract, "Reads reachable with an API
 * key": the reads need contacts:read with a key). GET /messages/{id} (one message, its status
 * history and error) is not on the contract's API-key allow-list: a key gets 403
 * api_key_endpoint_not_allowed there, a user token any role.
 */
export class MessagesApi extends HttpApiGroup.make("messages")
  .add(
    HttpApiEndpoint.post("send", "/messages/send")
      .setPayload(Schema.Struct({
        bot_id: Schema.String.annotations({ description: "The bot to send from: an active bot of the account, in the caller's scope." }),
        to: Schema.String.annotations({
          description: "The recipient's number with its country code, E.164 such as +919812345678: the '+' may be left out, spaces, dashes " +
            "and brackets are ignored, and the number must be a valid one for its country."
        }),
        text: Schema.optional(Schema.String.annotations({ description: "A text message, 1 to 3,072 characters." })),
        rich_card: Schema.optional(RichCardSchema),
        carousel: Schema.optional(CarouselSchema),
        template_id: Schema.optional(Schema.String.annotations({ description: "An approved template of the same bot, sent as it is (but for suggestions, when given)." })),
        suggestions: Schema.optional(Schema.Array(SuggestionSchema).annotations({
          description: "Suggestion chips under the message, at most 11; with template_id, they replace the template's own."
        }))
      }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        message_id: Schema.String.annotations({ description: "The message's id: GET /api/v1/rcs/messages/{id} reads it, and its message.* events carry it." }),
        status: Schema.Literal("sent").annotations({ description: "Always sent: the gateway took the message. Delivered and read come later (message.* events)." })
      }))
      .addError(InvalidRequestResponse)
      .addError(ForbiddenResponse)
      .addError(BotNotActiveResponse)
      .addError(BotNotInScopeResponse)
      .addError(InsufficientBalanceResponse)
      .addError(SendRejectedResponse)
      .addError(SendThrottledResponse)
      .addError(SendGatewayFailedResponse)
      .addError(SendUnconfirmedResponse)
      .annotateContext(documented({
        summary: "Send an RCS message",
        description: "Sends one message from a bot and answers once the gateway has taken it. The content is exactly one of `text`, " +
          "`rich_card`, `carousel` or `template_id` (400 otherwise), checked against the RCS limits (every problem named at once).\n\n" +
          "The bot must be an active bot of the account (403 `bot_not_active`) in the caller's scope (403 `bot_not_in_scope`). The wallet " +
          "must cover the message's price (402 `insufficient_balance`, nothing sent); the price is charged once the gateway takes it. " +
          "When the gateway refuses the message, the answer is the Gateway error record: 422 `send_rejected` (content, media, recipient " +
          "or the bot's configuration), 429 `gateway_quota`, 502 `gateway_error` (after Herald's automatic retries), or 504 " +
          "`send_unconfirmed` with the message_id of a message that may still arrive: do not send it again.\n\n" +
          "An operator or the owner, with a user token (API keys cannot send: 403 `api_key_endpoint_not_allowed`). Takes an Idempotency-Key.",
        request: { bot_id: BOT, to: PHONE, rich_card: CONTENT_EXAMPLES.rich_card, suggestions: CONTENT_EXAMPLES.suggestions },
        response: { success: true, message_id: MESSAGE.message_id, status: "sent" },
        returns: "Sent: the gateway took the message."
      }))
  )
  .add(
    HttpApiEndpoint.get("message", "/messages/:id")
      .setPath(MessageId)
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        message: Message,
        history: Schema.Array(StatusChange).annotations({ description: "Every status the message went through, oldest first." })
      }))
      .addError(InvalidRequestResponse)
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
      .annotateContext(documented({
        summary: "Read a message and its status history",
        description: "One message of the log (a single send or an auto-reply), with every status it went through and, when it failed or " +
          "is unconfirmed, the Gateway error record. An id that is not a UUID is 400; another account's message is 404. A user token of " +
          "any role (not an API key).",
        response: {
          success: true,
          message: MESSAGE,
          history: [
            { status: "queued", at: MESSAGE.created_at, error: null },
            { status: "sent", at: MESSAGE.sent_at, error: null },
            { status: "delivered", at: MESSAGE.delivered_at, error: null }
          ]
        },
        returns: "The message and its history."
      }))
  )
  .add(
    HttpApiEndpoint.get("reports", "/reports/messages")
      .setUrlParams(ReportsQuery)
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        messages: Schema.Array(Message).annotations({ description: "The messages, newest first." }),
        next_cursor: Schema.String.annotations({ description: "Pass it as cursor for the next page; empty on the last page." })
      }))
      .addError(InvalidRequestResponse)
      .addError(BotNotInScopeResponse)
      .annotateContext(documented({
        summary: "List sent messages",
        description: "The message log (single sends and auto-replies), newest first, by cursor, filtered by bot, status and time. A cursor " +
          `that this list did not give out is 400. ${IN_SCOPE} ${KEY_READ}`,
        response: { success: true, messages: [FAILED, MESSAGE], next_cursor: "WyIyMDI2LTAzLTAyVDEwOjE1OjI4LjkwNTAwMFoiLCIwYzllN2E1Mi00ZjFkLTRiOGUtOWEzYy0yZDVlNmY3YThiOWMiXQ.bN4uR1zKc7YpHs0vWq2eTg" },
        returns: "A page of messages."
      }))
  )
  .add(
    HttpApiEndpoint.get("preview", "/reports/messages/:id/preview")
      .setPath(MessageId)
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        message: Message,
        content: anObject("The content as it was sent: {type, and text, rich_card or carousel, suggestions}, in the shapes a send takes (a template's content included)."),
        preview: Schema.String.annotations({ description: "The message as a phone would show it, in plain-text lines: media, title, text, then [chips]." }),
        rbm: anObject("The content as it went to the gateway: {contentMessage}, RBM's AgentContentMessage.")
      }))
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
      .annotateContext(documented({
        summary: "Preview a sent message",
        description: `One message of the log with its content: as recorded, as plain text, and as RBM received it. ${IN_SCOPE} ${KEY_READ}`,
        response: {
          success: true,
          message: MESSAGE,
          content: { type: "rich_card", rich_card: CONTENT_EXAMPLES.rich_card, suggestions: CONTENT_EXAMPLES.suggestions },
          preview: "(medium media: https://cdn.acme.example.com/box.png)\nYour order has shipped\nOrder 1042 arrives on Friday.\n" +
            "[Track] → https://acme.example.com/t/1042\n[Track order]\n[Open] → https://acme.example.com/orders/1042",
          rbm: {
            contentMessage: {
              richCard: {
                standaloneCard: {
                  cardOrientation: "VERTICAL",
                  cardContent: {
                    title: "Your order has shipped",
                    description: "Order 1042 arrives on Friday.",
                    media: { height: "MEDIUM", contentInfo: { fileUrl: "https://cdn.acme.example.com/box.png", forceRefresh: false } },
                    suggestions: [{ action: { text: "Track", postbackData: "Track", openUrlAction: { url: "https://acme.example.com/t/1042" } } }]
                  }
                }
              },
              suggestions: [
                { reply: { text: "Track order", postbackData: "track_order" } },
                { action: { text: "Open", postbackData: "Open", openUrlAction: { url: "https://acme.example.com/orders/1042" } } }
              ]
            }
          }
        },
        returns: "The message and its content."
      }))
  )
  .add(
    HttpApiEndpoint.get("recipient", "/recipients/:phone")
      .setPath(Schema.Struct({
        phone: Schema.String.annotations({ description: "The number with its country code, such as +919812345678 (the '+' may be left out)." })
      }))
      .setUrlParams(Schema.Struct({
        bot_id: Schema.optional(Schema.String.annotations({
          description: "The bot to check RCS capability through: one of the caller's active bots. Absent: the first of them."
        }))
      }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        phone: Schema.String.annotations({ description: "The number, E.164 with its '+'." }),
        capability: Schema.NullOr(Schema.Struct({
          bot_id: Schema.String.annotations({ description: "The bot the check went through." }),
          reachable: Schema.Boolean.annotations({ description: "Whether the number can receive RCS messages from the bot." }),
          features: Schema.Array(Schema.String).annotations({
            description: "The RBM features the device supports (RICHCARD_STANDALONE, RICHCARD_CAROUSEL, ACTION_DIAL…); empty when not reachable."
          })
        })).annotations({
          description: "What the gateway says of the number now; null when the caller has no active bot (or bot_id is not one) or the gateway did not answer."
        }),
        last_messages: Schema.Array(Message).annotations({ description: "The last 20 messages the caller's bots sent to the number, newest first." }),
        last_inbound: Schema.Array(Schema.Struct({
          bot_id: Schema.String.annotations({ description: "The bot the user wrote to." }),
          from: Schema.String.annotations({ description: "The user's number, E.164 with its '+'." }),
          text: Schema.String.annotations({ description: "What the user wrote, or the text of the suggestion tapped." }),
          postback_data: Schema.NullOr(Schema.String).annotations({ description: "The tapped suggestion's postback_data; null for typed text." }),
          received_at: Schema.String.annotations({ description: "When the gateway received it (ISO 8601, UTC)." })
        })).annotations({ description: "The last 20 messages the number sent to the caller's bots, newest first." })
      }))
      .addError(InvalidRequestResponse)
      .addError(BotNotInScopeResponse)
      .annotateContext(documented({
        summary: "Look up a recipient",
        description: "Whether a number can receive RCS (asked of the gateway now) and its recent history with the account's bots, both ways. " +
          `A number that is not a valid phone number is 400. ${IN_SCOPE} ${KEY_READ}`,
        response: {
          success: true,
          phone: PHONE,
          capability: { bot_id: BOT, reachable: true, features: ["RICHCARD_STANDALONE", "RICHCARD_CAROUSEL", "ACTION_DIAL", "ACTION_OPEN_URL"] },
          last_messages: [MESSAGE],
          last_inbound: [{ bot_id: BOT, from: PHONE, text: "Track order", postback_data: "track_order", received_at: "2026-03-02T10:17:45.302Z" }]
        },
        returns: "The number's capability and history."
      }))
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs")
  .annotate(
    OpenApi.Description,
    "Single RCS sends and the message log: one message with its status history, reports, previews, and a recipient's capability and history."
  ) {}
