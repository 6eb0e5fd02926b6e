import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Carousel, RichCard, Suggestion } from "../../domain/content.ts"
import { Timestamp } from "../../domain/timestamps.ts"
import { GatewayErrorRecord } from "../../gateway/RcsGateway.ts"
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
import { ForbiddenResponse } from "./ApiKeysApi.ts"
import { BotNotInScopeResponse } from "./BotsApi.ts"

export const BotNotActiveResponse = errorResponse(BotNotActive, 403, "bot_not_active")
export const InsufficientBalanceResponse = errorResponse(InsufficientBalance, 402, "insufficient_balance")
const SendRejectedResponse = errorResponse(SendRejected, 422, "send_rejected")
const SendThrottledResponse = errorResponse(SendThrottled, 429, "gateway_quota")
const SendGatewayFailedResponse = errorResponse(SendGatewayFailed, 502, "gateway_error")
const SendUnconfirmedResponse = errorResponse(SendUnconfirmed, 504, "send_unconfirmed")

const Message = Schema.Struct({
  message_id: Schema.String,
  bot_id: Schema.String,
  to: Schema.String,
  status: Schema.Literal(...MESSAGE_STATUSES),
  source: Schema.String,
  template_id: Schema.NullOr(Schema.String),
  type: Schema.String,
  price: Schema.Number,
  attempts: Schema.Int,
  error: Schema.NullOr(GatewayErrorRecord),
  created_at: Schema.String,
  sent_at: Schema.NullOr(Schema.String),
  delivered_at: Schema.NullOr(Schema.String),
  read_at: Schema.NullOr(Schema.String),
  failed_at: Schema.NullOr(Schema.String)
})

/** One status a message went through; `error` is the Gateway error record it had then (failed, unconfirmed). */
const StatusChange = Schema.Struct({
  status: Schema.Literal(...MESSAGE_STATUSES),
  at: Schema.String,
  error: Schema.NullOr(GatewayErrorRecord)
})

const Limit = Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1000))

export const ReportsQuery = Schema.Struct({
  bot_id: Schema.optional(Schema.String),
  status: Schema.optional(Schema.Literal(...MESSAGE_STATUSES)),
  from: Schema.optional(Timestamp),
  to: Schema.optional(Timestamp),
  limit: Schema.optional(Limit),
  cursor: Schema.optional(Schema.String)
})

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
        bot_id: Schema.String,
        to: Schema.String,
        text: Schema.optional(Schema.String),
        rich_card: Schema.optional(RichCard),
        carousel: Schema.optional(Carousel),
        template_id: Schema.optional(Schema.String),
        suggestions: Schema.optional(Schema.Array(Suggestion))
      }))
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), message_id: Schema.String, status: Schema.Literal("sent") }))
      .addError(InvalidRequestResponse)
      .addError(ForbiddenResponse)
      .addError(BotNotActiveResponse)
      .addError(BotNotInScopeResponse)
      .addError(InsufficientBalanceResponse)
      .addError(SendRejectedResponse)
      .addError(SendThrottledResponse)
      .addError(SendGatewayFailedResponse)
      .addError(SendUnconfirmedResponse)
  )
  .add(
    HttpApiEndpoint.get("message", "/messages/:id")
      .setPath(Schema.Struct({ id: Schema.String }))
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), message: Message, history: Schema.Array(StatusChange) }))
      .addError(InvalidRequestResponse)
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
  )
  .add(
    HttpApiEndpoint.get("reports", "/reports/messages")
      .setUrlParams(ReportsQuery)
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), messages: Schema.Array(Message), next_cursor: Schema.String }))
      .addError(InvalidRequestResponse)
      .addError(BotNotInScopeResponse)
  )
  .add(
    HttpApiEndpoint.get("preview", "/reports/messages/:id/preview")
      .setPath(Schema.Struct({ id: Schema.String }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        message: Message,
        content: Schema.Unknown,
        preview: Schema.String,
        rbm: Schema.Unknown
      }))
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
  )
  .add(
    HttpApiEndpoint.get("recipient", "/recipients/:phone")
      .setPath(Schema.Struct({ phone: Schema.String }))
      .setUrlParams(Schema.Struct({ bot_id: Schema.optional(Schema.String) }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        phone: Schema.String,
        capability: Schema.NullOr(Schema.Struct({ bot_id: Schema.String, reachable: Schema.Boolean, features: Schema.Array(Schema.String) })),
        last_messages: Schema.Array(Message),
        last_inbound: Schema.Array(Schema.Struct({
          bot_id: Schema.String,
          from: Schema.String,
          text: Schema.String,
          postback_data: Schema.NullOr(Schema.String),
          received_at: Schema.String
        }))
      }))
      .addError(InvalidRequestResponse)
      .addError(BotNotInScopeResponse)
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs") {}
