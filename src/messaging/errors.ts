import { Schema } from "effect"
import { GatewayErrorCategory } from "../domain/gatewayError.ts"

/** 403 bot_not_active: the bot is not the caller's, or not in status active (contract, Errors). */
export class BotNotActive extends Schema.TaggedError<BotNotActive>()("BotNotActive", {
  message: Schema.String
}) {}

/** 402 insufficient_balance: the wallet cannot pay for the message; nothing was sent. */
export class InsufficientBalance extends Schema.TaggedError<InsufficientBalance>()("InsufficientBalance", {
  message: Schema.String,
  balance: Schema.Number,
  price: Schema.Number
}) {}

// The contract's Gateway error record, answered by a send. Its HTTP status follows the category
// (DESIGN.md, Messages): one class per status, so each has its fixed status and code.
const record = {
  message: Schema.String,
  detail: Schema.String,
  category: GatewayErrorCategory,
  retryable: Schema.Boolean,
  message_id: Schema.optional(Schema.String)
}

/** 422: content, media, recipient or config: fix the request or the bot. */
export class SendRejected extends Schema.TaggedError<SendRejected>()("SendRejected", record) {}
/** 429: the upstream quota. */
export class SendThrottled extends Schema.TaggedError<SendThrottled>()("SendThrottled", record) {}
/** 502: the gateway failed (after the automatic retries) or answered something unknown. */
export class SendGatewayFailed extends Schema.TaggedError<SendGatewayFailed>()("SendGatewayFailed", record) {}
/** 504: the send could not be confirmed; message_id given, never resent. */
export class SendUnconfirmed extends Schema.TaggedError<SendUnconfirmed>()("SendUnconfirmed", record) {}
