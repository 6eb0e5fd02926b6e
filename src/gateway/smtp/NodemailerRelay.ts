import { Effect, type Scope } from "effect"
import nodemailer from "nodemailer"
import type { EmailRelayApi, OutgoingMail, RelayOutcome } from "../mail.ts"

export interface NodemailerRelayOptions {
  /** Connections kept open to the relay; 8 by default. */
  readonly maxConnections?: number
  /**
   * A send that has no answer after this long is given up on (Deferred); 60 s by default.
   * Socket timeouts do not catch a server that trickles its replies.
   */
  readonly sendTimeoutMs?: number
}

/** Nodemailer's error fields that say where a transaction failed. */
interface SmtpError {
  readonly code?: string
  readonly command?: string
  readonly responseCode?: number
  readonly response?: string
  readonly message?: string
}

/**
 * Errors nodemailer raises before it speaks to the server about this message (an address it
 * cannot use, an empty message, credentials missing): sending it again changes nothing.
 */
const REFUSED_LOCALLY = new Set(["EENVELOPE", "EMESSAGE", "ECONFIG", "ENOAUTH"])

/** Where an SMTP transaction ended, as the contract names it (mail.ts). */
export const relayOutcome = (error: SmtpError): RelayOutcome => {
  const code = typeof error.responseCode === "number" ? error.responseCode : undefined
  const response = error.response ?? error.message ?? "unknown SMTP error"
  if (code === undefined) {
    return error.code !== undefined && REFUSED_LOCALLY.has(error.code)
      ? { _tag: "Rejected", code: 554, response }
      : { _tag: "Deferred", code: null, response }
  }
  if (code < 500) return { _tag: "Deferred", code, response }
  return error.command === "RCPT TO" ? { _tag: "Bounced", code, response } : { _tag: "Rejected", code, response }
}

/**
 * The relay to `url` (smtp:// or smtps://; nodemailer's URL options, auth and query parameters
 * included) through a pool of connections, closed with the scope. A plain smtp:// server that
 * offers STARTTLS gets it; one that does not is spoken to in the clear.
 */
export const makeNodemailerRelay = (
  url: string,
  options: NodemailerRelayOptions = {}
): Effect.Effect<EmailRelayApi, never, Scope.Scope> =>
  Effect.gen(function*() {
    const sendTimeoutMs = options.sendTimeoutMs ?? 60_000
    const transport = yield* Effect.acquireRelease(
      Effect.sync(() =>
        nodemailer.createTransport({
          pool: true,
          url,
          maxConnections: options.maxConnections ?? 8,
          // A connection dropped mid-send is retried by Herald with backoff, not spun on here.
          maxRequeues: 2,
          connectionTimeout: 10_000,
          greetingTimeout: 10_000,
          socketTimeout: 30_000,
          dnsTimeout: 10_000,
          logger: false
        })
      ),
      (t) => Effect.sync(() => t.close())
    )

    const transmit = (mail: OutgoingMail) =>
      Effect.async<RelayOutcome>((resume) => {
        const abort = new AbortController()
        const deadline = setTimeout(() => abort.abort(new Error(`no answer from the relay within ${sendTimeoutMs} ms`)), sendTimeoutMs)
        transport.sendMail(
          {
            envelope: { from: mail.from, to: [mail.recipient] },
            from: mail.from,
            to: [...mail.to],
            ...(mail.cc.length > 0 ? { cc: [...mail.cc] } : {}),
            ...(mail.replyTo.length > 0 ? { replyTo: [...mail.replyTo] } : {}),
            subject: mail.subject,
            ...(mail.text !== undefined ? { text: mail.text } : {}),
            ...(mail.html !== undefined ? { html: mail.html } : {}),
            messageId: `<${mail.messageId}@herald>`,
            headers: { "X-Herald-Message-Id": mail.messageId },
            ...(mail.dkim !== undefined
              ? { dkim: { domainName: mail.dkim.domainName, keySelector: mail.dkim.keySelector, privateKey: mail.dkim.privateKey } }
              : {}),
            signal: abort.signal
          },
          (error, info) => {
            clearTimeout(deadline)
            if (error !== null) {
              const timedOut = abort.signal.aborted
              return resume(Effect.succeed(timedOut ? { _tag: "Deferred", code: null, response: String(abort.signal.reason) } : relayOutcome(error as SmtpError)))
            }
            resume(Effect.succeed({ _tag: "Accepted", response: info.response }))
          }
        )
        return Effect.sync(() => {
          clearTimeout(deadline)
          abort.abort(new Error("send interrupted"))
        })
      })
    const send = Effect.fn("EmailRelay.send")(function*(mail: OutgoingMail) {
      return yield* transmit(mail)
    })

    return { send, url: redactUrl(url) }
  })

/** The URL without its password, for logs. */
const redactUrl = (raw: string): string => {
  try {
    const url = new URL(raw)
    if (url.password !== "") url.password = "***"
    return url.toString()
  } catch {
    return raw
  }
}
