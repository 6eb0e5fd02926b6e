import { type Effect, Schema } from "effect"
import type { MessageContent } from "../domain/content.ts"
import type { GatewayErrorRecord } from "../domain/gatewayError.ts"

/**
 * What Herald and an upstream RCS gateway say to each other, whatever speaks to it (the RBM
 * adapter against Google's API or the built-in simulator's RBM endpoints). Sends never fail the
 * Effect: every upstream answer, including none, is an outcome the sender actor records.
 */

export interface RcsSendRequest {
  /** Herald's message_id, passed as RBM's messageId: a reused id is ignored upstream. */
  readonly messageId: string
  /** The bot (RBM agent) sending. */
  readonly agentId: string
  /** E.164, with the leading '+'. */
  readonly to: string
  readonly content: MessageContent
  /** Asked just before the request is written (exchange.ts): false, and it is not sent. */
  readonly proceed?: () => boolean
}

export type SendOutcome =
  /** The gateway took the message. */
  | { readonly _tag: "Accepted"; readonly at: number }
  /** The gateway answered with an error; `retryable` only for category `gateway`. */
  | { readonly _tag: "Rejected"; readonly error: GatewayErrorRecord }
  /** No answer in time, or the connection broke after the request left: never resent. */
  | { readonly _tag: "Unconfirmed"; readonly error: GatewayErrorRecord }

export interface Capability {
  readonly phone: string
  /** Whether the number can receive RCS at all (RBM answers 404 when not). */
  readonly reachable: boolean
  /** RBM feature names, e.g. RICHCARD_STANDALONE, ACTION_DIAL. */
  readonly features: ReadonlyArray<string>
}

export class GatewayUnavailable extends Schema.TaggedError<GatewayUnavailable>()("GatewayUnavailable", {
  message: Schema.String
}) {}

/** What the gateway tells Herald about a message or a user, from its callbacks. */
export type GatewayReport =
  | {
    readonly _tag: "Status"
    /** Unique per event upstream (RBM eventId): duplicate callbacks repeat it. */
    readonly eventId: string
    readonly messageId: string
    readonly agentId: string
    readonly phone: string
    readonly status: "delivered" | "read" | "failed"
    readonly at: number
    /** For `failed`: the asynchronous rejection as a Gateway error record. */
    readonly error?: GatewayErrorRecord
  }
  | {
    readonly _tag: "Inbound"
    /** The user's message id upstream: duplicate callbacks repeat it. */
    readonly messageId: string
    readonly agentId: string
    readonly phone: string
    /** The text, or a suggestion's text when the user tapped one. */
    readonly text: string
    readonly postbackData?: string
    readonly at: number
  }
  /** Events Herald does not act on (typing indicators, locations, files). */
  | { readonly _tag: "Ignored"; readonly reason: string }

/** The RcsGateway service (RcsGateway.ts). */
export interface RcsGatewayApi {
  readonly send: (request: RcsSendRequest) => Effect.Effect<SendOutcome>
  readonly capability: (agentId: string, phone: string) => Effect.Effect<Capability, GatewayUnavailable>
}
