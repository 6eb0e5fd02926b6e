import { HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Redacted } from "effect"
import { createHmac } from "node:crypto"
import { ActorClient } from "../../actors/runtime/index.ts"
import { AppConfig } from "../../config/AppConfig.ts"
import { isUuid } from "../../domain/ids.ts"
import { EmailMessagesRepo } from "../../email/EmailMessagesRepo.ts"
import { MailerKind, MailFeedback } from "../../email/MailerKind.ts"
import { SMTP_FEEDBACK_PATH, SMTP_FEEDBACK_SIGNATURE_HEADER, type SmtpFeedback } from "../../gateway/EmailRelay.ts"
import { safeEqual } from "../../crypto/secrets.ts"
import { envelope } from "../errors.ts"

const readFeedback = (body: Uint8Array): SmtpFeedback | undefined => {
  try {
    const parsed = JSON.parse(Buffer.from(body).toString("utf8")) as Partial<SmtpFeedback>
    return (parsed.type === "complaint" || parsed.type === "bounce") && typeof parsed.message_id === "string" &&
        typeof parsed.recipient === "string" && typeof parsed.detail === "string"
      ? parsed as SmtpFeedback
      : undefined
  } catch {
    return undefined
  }
}

/**
 * POST /api/v1/partner/email/smtp-feedback: the SMTP sink's reports after acceptance (complaints,
 * late bounces), as SES notifications would come. The signature (HMAC-SHA256 of the raw body
 * under SMTP_FEEDBACK_SECRET) is checked before anything is read. The report goes to the message's
 * partner's `mailer` once the delivery it follows is recorded; before that it is 404, so the sink
 * calls again (as RBM's callbacks are answered when they overtake their send).
 */
export const SmtpFeedbackRoute = HttpLayerRouter.use((router) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const messages = yield* EmailMessagesRepo
    const client = yield* ActorClient
    const secret = Redacted.value(config.smtpFeedbackSecret)
    yield* router.add(
      "POST",
      SMTP_FEEDBACK_PATH,
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const body = new Uint8Array(yield* request.arrayBuffer)
        const expected = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`
        if (!safeEqual(request.headers[SMTP_FEEDBACK_SIGNATURE_HEADER] ?? "", expected)) {
          return envelope(401, "invalid_signature", "feedback signature does not verify")
        }
        const report = readFeedback(body)
        if (report === undefined) return envelope(400, "invalid_request", "malformed feedback report", { errors: [] })
        // Herald's own mail (a verification link) has no partner's message behind it.
        if (!isUuid(report.message_id)) return HttpServerResponse.unsafeJson({ success: true, ignored: "not a partner's message" })
        const recipient = report.recipient.toLowerCase()
        const message = yield* messages.deliveryOf(report.message_id, recipient)
        // A report can overtake the commit of the delivery it is about: the sink calls again.
        if (message === undefined || message.status === "queued" || message.status === "sending") {
          return envelope(404, "not_found", `no delivery of ${report.message_id} to ${recipient} recorded (yet)`)
        }
        if (message.status === null) return HttpServerResponse.unsafeJson({ success: true, ignored: "not a recipient of this message" })
        if (message.status !== "delivered") return HttpServerResponse.unsafeJson({ success: true, ignored: `the recipient is ${message.status}` })
        yield* client.send(MailerKind, message.partnerId, new MailFeedback({
          messageId: report.message_id,
          recipient,
          type: report.type,
          detail: report.detail.slice(0, 500)
        }), { msgId: `feedback-${report.type}-${report.message_id}-${recipient}` })
        return HttpServerResponse.unsafeJson({ success: true })
      })
    )
  })
)
