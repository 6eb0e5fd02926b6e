import type { GatewayErrorCategory, GatewayErrorRecord } from "../../domain/gatewayError.ts"

/**
 * RBM's answers and silences as the contract's Gateway error record. `message` is the one-line
 * title a broadcast target keeps as its failure_reason; `detail` tells the caller what to do.
 */

/** Google's error envelope, `{"error":{"code","message","status"}}`. */
export interface GoogleError {
  readonly code: number
  readonly message: string
  readonly status: string
}

export const parseGoogleError = (body: string): GoogleError | undefined => {
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown; message?: unknown; status?: unknown } }
    const error = parsed?.error
    if (error === null || typeof error !== "object") return undefined
    return {
      code: typeof error.code === "number" ? error.code : 0,
      message: typeof error.message === "string" ? error.message : "",
      status: typeof error.status === "string" ? error.status : ""
    }
  } catch {
    return undefined
  }
}

const MAX_QUOTED = 300

/** Upstream text goes into one-line fields: no line breaks, bounded length. */
const oneLine = (text: string) => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > MAX_QUOTED ? `${flat.slice(0, MAX_QUOTED - 1)}…` : flat
}

const record = (category: GatewayErrorCategory, message: string, detail: string, messageId?: string): GatewayErrorRecord => ({
  success: false,
  message,
  detail,
  category,
  // The contract: only gateway trouble is re-queued; with a message_id a resend could double.
  retryable: category === "gateway" && messageId === undefined,
  ...(messageId !== undefined ? { message_id: messageId } : {})
})

// RBM's INVALID_ARGUMENT answers about media name the field (`...media.content_info.file_url`,
// fileUrl, thumbnailUrl) or say "media"/"MIME"; other content problems do not.
const MEDIA_WORDS = /\b(media|file_?url|thumbnail_?url|mime)/i

/** The error record for an HTTP answer that was not 2xx, from its status and body. */
export const rejectionRecord = (httpStatus: number, body: string): GatewayErrorRecord => {
  const google = parseGoogleError(body)
  const said = google !== undefined && google.message !== ""
    ? `RBM answered ${httpStatus} ${google.status || ""}: ${oneLine(google.message)}`.replace(" :", ":")
    : `RBM answered HTTP ${httpStatus}${body.trim() !== "" ? `: ${oneLine(body)}` : ""}`
  if (httpStatus >= 500) {
    return record("gateway", "gateway unavailable", `${said}. Nothing was delivered; Herald sends it again automatically.`)
  }
  switch (httpStatus) {
    case 404:
      return record(
        "recipient",
        "recipient not reachable over RCS",
        `${said}. The number has no RCS, or the bot is not launched on the recipient's carrier; reach this recipient another way (SMS).`
      )
    case 400:
      return google !== undefined && MEDIA_WORDS.test(google.message)
        ? record(
          "media",
          "media rejected by the gateway",
          `${said}. Use a publicly reachable HTTPS file of a supported type (JPEG, GIF, PNG or MP4/WebM video) within RBM's size limits.`
        )
        : record(
          "content",
          "content rejected by the gateway",
          `${said}. Fix the message (text and suggestion lengths, card fields, suggestion counts, or a feature the device lacks) and send it again.`
        )
    case 401:
      return record("config", "gateway credentials rejected", `${said}. Check the RBM service-account credentials Herald sends with.`)
    case 403:
      return record(
        "config",
        "bot not allowed to message this recipient",
        `${said}. The bot's RBM agent is not launched, or this number is not one of its testers; launch the agent or add the tester.`
      )
    case 429:
      return record(
        "quota",
        "gateway rate limit reached",
        `${said}. Lower the bot's throughput (herald admin bot-throughput) or raise the RBM quota, then send again.`
      )
    default:
      return record("unknown", "unexpected gateway answer", `${said}.`)
  }
}

/** No answer in time: the message may have reached RBM, so it is never sent again. */
export const unconfirmedTimeout = (messageId: string, timeoutMs: number): GatewayErrorRecord =>
  record(
    "unknown",
    "send not confirmed",
    `The gateway did not answer within ${timeoutMs} ms. The message may still be delivered; it is not sent again, and a later delivery report settles it.`,
    messageId
  )

/** The connection broke after the request left: as unknown as a timeout. */
export const unconfirmedCut = (messageId: string, cause: string): GatewayErrorRecord =>
  record(
    "unknown",
    "send not confirmed",
    `The connection to the gateway broke after the message was sent (${oneLine(cause)}). The message may still be delivered; it is not sent again, and a later delivery report settles it.`,
    messageId
  )

/** Nothing left Herald (refused, unresolvable, or never got a connection): safe to send again. */
export const notSent = (cause: string): GatewayErrorRecord =>
  record("gateway", "gateway unreachable", `Could not reach the RCS gateway (${oneLine(cause)}); nothing was sent. Herald sends it again automatically.`)

/** RBM's TTL_EXPIRATION_REVOKED: accepted, never delivered, withdrawn by RBM. */
export const expiredRecord = (): GatewayErrorRecord =>
  record(
    "recipient",
    "message expired undelivered",
    "The recipient's device did not come online before the message expired, and RBM withdrew it. Reach this recipient another way (SMS) or send a new message later."
  )
