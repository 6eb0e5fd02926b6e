import { Context, Effect, Layer, Option } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import type { EmailRelayApi } from "./mail.ts"
import { SimulatedSmtp } from "./SimulatedUpstream.ts"
import { makeNodemailerRelay } from "./smtp/NodemailerRelay.ts"

/**
 * Hands partner e-mail to an SMTP relay (the vocabulary is in mail.ts). Two layers, chosen once at
 * the composition root (node.ts): `layerSmtp`, the relay at SMTP_URL (a real one or a shared
 * `herald smtp-sim`), and `layerSink`, the SMTP sink running in this process. Either way the same
 * nodemailer relay speaks SMTP over a real socket.
 */
export class EmailRelay extends Context.Tag("herald/EmailRelay")<EmailRelay, EmailRelayApi>() {
  /** The relay at SMTP_URL; without it (a node of a cluster), mail is refused whole, the operator's to fix. */
  static readonly layerSmtp: Layer.Layer<EmailRelay, never, AppConfig> = Layer.scoped(
    EmailRelay,
    Effect.flatMap(AppConfig, (config) =>
      Option.match(config.smtpUrl, {
        onNone: () => Effect.succeed(unconfigured),
        onSome: (url) => makeNodemailerRelay(url)
      }))
  )

  /** The SMTP sink in this process. */
  static readonly layerSink: Layer.Layer<EmailRelay, never, SimulatedSmtp> = Layer.scoped(
    EmailRelay,
    Effect.flatMap(SimulatedSmtp, (sink) => makeNodemailerRelay(sink.url))
  )
}

/** A node of a cluster without SMTP_URL: mail is refused whole, the operator's to fix. */
const unconfigured: EmailRelayApi = {
  send: () => Effect.succeed({ _tag: "Rejected", code: 554, response: "no SMTP relay configured: set SMTP_URL on every node" } as const),
  url: "none"
}

/** The path of Herald's route that takes the SMTP sink's signed bounce and complaint reports. */
export const SMTP_FEEDBACK_PATH = "/api/v1/partner/email/smtp-feedback"

/** The header carrying `sha256=<hex HMAC-SHA256 of the raw body under SMTP_FEEDBACK_SECRET>`. */
export const SMTP_FEEDBACK_SIGNATURE_HEADER = "x-herald-smtp-signature"

/**
 * A report the SMTP sink posts after it accepted a message (as SES notifications come after the
 * send): a complaint from the recipient, or a bounce that came after acceptance.
 */
export interface SmtpFeedback {
  readonly type: "complaint" | "bounce"
  /** The `X-Herald-Message-Id` header of the message reported on. */
  readonly message_id: string
  readonly recipient: string
  readonly detail: string
  readonly occurred_at: string
}
