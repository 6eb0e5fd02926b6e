import type { Effect } from "effect"
import type { GatewayErrorRecord } from "../domain/gatewayError.ts"

/**
 * What Herald and the WhatsApp Cloud API say to each other, whatever speaks it (Meta's Graph API
 * or the built-in simulator). Sends never fail the Effect: every answer, including none, is an
 * outcome the `wa_sender` actor records.
 */

export type WaSendOutcome =
  /** Meta took the message and named it (`wamid.…`). */
  | { readonly _tag: "Accepted"; readonly wamid: string; readonly at: number }
  /** Meta answered with an error, or the request never left; `retryable` only for what is safe to send again. */
  | { readonly _tag: "Rejected"; readonly error: GatewayErrorRecord }
  /** The request left and no answer came back: it may have reached the customer. Never resent. */
  | { readonly _tag: "Unconfirmed"; readonly error: GatewayErrorRecord }

export type TemplateSubmission =
  | { readonly _tag: "Submitted"; readonly upstreamId: string; readonly status: string }
  /** Meta refused it (`unavailable`: no answer, or a server error: try again later). */
  | { readonly _tag: "Refused"; readonly reason: string; readonly unavailable: boolean }

/** The WaGateway service (WaGateway.ts). */
export interface WaGatewayApi {
  /** POST /{version}/{phone_number_id}/messages with Meta's body; `messageId` is Herald's (for the record). */
  readonly send: (phoneNumberId: string, body: Record<string, unknown>, messageId: string) => Effect.Effect<WaSendOutcome>
  /** POST /{version}/{waba_id}/message_templates: Meta reviews it and answers by webhook. */
  readonly submitTemplate: (wabaId: string, definition: Record<string, unknown>) => Effect.Effect<TemplateSubmission>
  /** DELETE /{version}/{waba_id}/message_templates?name=…&hsm_id=… (that one template, not every language of the name); best effort (false when Meta did not confirm). */
  readonly deleteTemplate: (wabaId: string, name: string, upstreamId: string | null) => Effect.Effect<boolean>
}
