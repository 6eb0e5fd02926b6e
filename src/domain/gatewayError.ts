import { Schema } from "effect"

/**
 * How Herald classifies what an upstream (RBM, Meta's Cloud API) answered when it refused or did
 * not confirm a send: the contract's Gateway error record, shared by every channel.
 */

export const GatewayErrorCategory = Schema.Literal("content", "media", "recipient", "config", "quota", "gateway", "unknown")
export type GatewayErrorCategory = typeof GatewayErrorCategory.Type

/** The contract's Gateway error record (send-time and asynchronous rejections). */
export const GatewayErrorRecord = Schema.Struct({
  success: Schema.Literal(false),
  message: Schema.String,
  detail: Schema.String,
  category: GatewayErrorCategory,
  retryable: Schema.Boolean,
  message_id: Schema.optional(Schema.String),
  /** The upstream's own error code (Meta's for WhatsApp), kept for support and debugging. */
  upstream_code: Schema.optional(Schema.Int)
})
export type GatewayErrorRecord = typeof GatewayErrorRecord.Type

/** A send on a node with no gateway for its channel: the operator's to fix, never retried. */
export const notConfiguredRecord = (detail: string): GatewayErrorRecord => ({
  success: false,
  message: "no gateway configured",
  detail,
  category: "config",
  retryable: false
})
