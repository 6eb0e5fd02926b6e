import { randomBytes } from "node:crypto"
import { type Answer, answer } from "../httpHelpers.ts"

/**
 * Meta's Graph error envelope, as the Cloud API answers it:
 * `{error: {message, type, code, error_data: {messaging_product, details}, fbtrace_id}}`.
 * The codes and their wording are those of Meta's error-code page (reference/UPSTREAMS.md).
 */

/** Graph answers carry a trace id per request; never the same twice. */
export const fbtraceId = (): string => `A${randomBytes(15).toString("base64url")}`

export const cloudApiError = (status: number, code: number, title: string, details: string): Answer =>
  answer(status, {
    error: {
      message: `(#${code}) ${title}`,
      type: "OAuthException",
      code,
      error_data: { messaging_product: "whatsapp", details },
      fbtrace_id: fbtraceId()
    }
  })

/** A Graph error outside the messaging product (tokens, CAPI): no `messaging_product`. */
export const graphError = (status: number, code: number, message: string, details?: string): Answer =>
  answer(status, {
    error: {
      message,
      type: "OAuthException",
      code,
      ...(details !== undefined ? { error_data: { details } } : {}),
      fbtrace_id: fbtraceId()
    }
  })

export const missingToken = (): Answer => graphError(401, 190, "An access token is required to request this resource.")

export const invalidParameter = (details: ReadonlyArray<string>): Answer =>
  cloudApiError(400, 100, "Invalid parameter", details.join("; "))

export const undeliverable = (): Answer => cloudApiError(400, 131026, "Message Undeliverable.", "Message Undeliverable.")

export const somethingWentWrong = (): Answer => cloudApiError(500, 131000, "Something went wrong", "Something went wrong")

export const outsideWindow = (): Answer =>
  cloudApiError(
    400,
    131047,
    "Re-engagement message",
    "Message failed to send because more than 24 hours have passed since the customer last replied to this number."
  )

/** The asynchronous failure of 0006 numbers, as a `failed` status's `errors[]` carries it. */
export const ECOSYSTEM_ERROR = {
  code: 131049,
  title: "This message was not delivered to maintain healthy ecosystem engagement.",
  message: "This message was not delivered to maintain healthy ecosystem engagement.",
  error_data: { details: "In order to maintain healthy ecosystem engagement, the message failed to be delivered." },
  href: "https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/"
} as const
