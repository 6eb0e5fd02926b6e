import { createHmac } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Context, Effect, Layer, Redacted, Runtime, Schema, type Scope } from "effect"
import { type ParsedMail, simpleParser } from "mailparser"
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from "smtp-server"
import { AppConfig } from "../../config/AppConfig.ts"
import { SMTP_FEEDBACK_PATH, SMTP_FEEDBACK_SIGNATURE_HEADER, type SmtpFeedback } from "../../gateway/EmailRelay.ts"
import type { GatewayCallbackUrl } from "../../gateway/GatewayCallbackUrl.ts"
import { SimulatedSmtp } from "../../gateway/SimulatedUpstream.ts"
import { makeWebhookSender, resolveCallbackUrl } from "../callbackSender.ts"
import { heraldOrigin } from "../heraldOrigin.ts"
import { queryParam, sendJson } from "../httpHelpers.ts"
import {
  ACCEPTED_MESSAGE,
  DUPLICATE_MESSAGE,
  hardBounceReply,
  recipientFate,
  senderRefused,
  senderRefusedReply,
  type SinkReply,
  softBounceReply
} from "./sinkRules.ts"

/**
 * The SMTP sink: Herald's stand-in for a mail provider, in development, tests and benchmarks. It
 * answers each recipient by its local part (sinkRules.ts), keeps what it accepted in memory for
 * the control API, and reports complaints to Herald as signed HTTP callbacks, as SES would send
 * notifications. Plain smtp-server and node:http, like the gateway simulator.
 */

export interface SmtpSinkOptions {
  /** 0 picks a free port. */
  readonly port: number
  /** Interface to listen on; 127.0.0.1 by default. */
  readonly host?: string
  /**
   * Where reports go, asked at each attempt: in-process Herald knows its own address only once
   * it listens. Undefined means "not yet": the report waits and is retried. A bare origin gets
   * SMTP_FEEDBACK_PATH appended.
   */
  readonly feedbackUrl: () => string | undefined
  /** SMTP_FEEDBACK_SECRET: reports are signed with HMAC-SHA256 under it. */
  readonly feedbackSecret: string
  /** A complaint is reported this long after the message was accepted; 100 ms by default. */
  readonly complaintDelayMs?: number
  /** Messages kept for the control API, the newest; 200 000 by default. */
  readonly keep?: number
}

/** One accepted message, as the control API lists it. */
export interface SinkMessage {
  /** The envelope sender (MAIL FROM). */
  readonly from: string
  /** The envelope recipients (RCPT TO) this message was taken for. */
  readonly to: ReadonlyArray<string>
  readonly subject: string
  readonly text: string | null
  readonly html: string | null
  /** Lower-case names; the first value of a repeated header, unfolded but not decoded. */
  readonly headers: Readonly<Record<string, string>>
  readonly received_at: string
}

export interface SmtpSinkStats {
  /** Recipients a message was accepted for (complaints included). */
  readonly accepted: number
  /** Recipients a message was sent to again (the same Message-ID): answered 250, nothing redone. */
  readonly duplicates: number
  /** Recipients refused 550 (hard bounce). */
  readonly bounced: number
  /** Recipients refused 451 (soft bounce). */
  readonly deferred: number
  /** Messages refused whole for their sender (554). */
  readonly rejected: number
  /** Complaints reported (or still to be). */
  readonly complaints: number
}

export class SmtpSinkError extends Schema.TaggedError<SmtpSinkError>()("SmtpSinkError", {
  message: Schema.String
}) {}

export class SmtpSink extends Context.Tag("herald/SmtpSink")<SmtpSink, {
  readonly port: number
  /** `smtp://127.0.0.1:<port>` (the host listened on, when that is one address): what a relay is pointed at. */
  readonly url: string
  /** Messages accepted, oldest first; only those with `to` among their envelope recipients (case-insensitive) when given. */
  readonly messages: (to?: string) => ReadonlyArray<SinkMessage>
  readonly stats: () => SmtpSinkStats
  /**
   * Serves `GET /simulate/smtp/messages?to=` and `GET /simulate/smtp/stats` on whichever HTTP
   * server mounts it; false (the request untouched) for any other route.
   */
  readonly handleControl: (req: IncomingMessage, res: ServerResponse, path: string, query: string) => boolean
}>() {
  /**
   * The sink in Herald's own process (a single-process node without SMTP_URL) on SMTP_SIM_PORT,
   * reporting to Herald once its HTTP server listens, and as the SimulatedSmtp that
   * `EmailRelay.layerSink` relays to. Its control API is served on the gateway simulator's port
   * (`GatewaySimulator.layerInProcessWithSink`).
   */
  static readonly layerInProcess: Layer.Layer<SmtpSink | SimulatedSmtp, SmtpSinkError, AppConfig | GatewayCallbackUrl> = Layer.scopedContext(
    Effect.gen(function*() {
      const config = yield* AppConfig
      const sink = yield* makeSmtpSink({
        port: config.smtpSimPort,
        feedbackUrl: yield* heraldOrigin,
        feedbackSecret: Redacted.value(config.smtpFeedbackSecret)
      })
      return Context.make(SmtpSink, sink).pipe(Context.add(SimulatedSmtp, { url: sink.url }))
    })
  )
}

const MESSAGES_PATH = "/simulate/smtp/messages"
const STATS_PATH = "/simulate/smtp/stats"

/** SES takes messages up to 40 MB; a sink holding many in memory takes less. */
const MAX_MESSAGE_BYTES = 10 * 1024 * 1024

const DEFAULT_KEEP = 200_000

/** Starts the sink in the current scope; closing the scope closes it, its connections and its timers. */
export const makeSmtpSink = (options: SmtpSinkOptions): Effect.Effect<Context.Tag.Service<SmtpSink>, SmtpSinkError, Scope.Scope> =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const keep = options.keep ?? DEFAULT_KEEP
    const complaintDelayMs = options.complaintDelayMs ?? 100
    const counts = { accepted: 0, duplicates: 0, bounced: 0, deferred: 0, rejected: 0, complaints: 0 }
    const records = new Newest<SinkMessage>(keep)
    // Keys outlive their records by a wide margin: a retry may come long after the message.
    const seen = new Newest<string>(keep * 2, true)

    const feedback = yield* makeWebhookSender({
      callbackUrl: options.feedbackUrl,
      resolveUrl: (raw) => resolveCallbackUrl(raw, SMTP_FEEDBACK_PATH),
      signatureHeader: SMTP_FEEDBACK_SIGNATURE_HEADER,
      userAgent: "Herald-SMTP-Sink/1"
    })
    const timers = new Set<NodeJS.Timeout>()
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const timer of timers) clearTimeout(timer)
        timers.clear()
      })
    )

    const report = (body: SmtpFeedback) => {
      const bytes = Buffer.from(JSON.stringify(body))
      feedback.post(bytes, `sha256=${createHmac("sha256", options.feedbackSecret).update(bytes).digest("hex")}`)
    }

    const complainLater = (messageId: string, recipient: string) => {
      const timer = setTimeout(() => {
        timers.delete(timer)
        report({ type: "complaint", message_id: messageId, recipient, detail: "abuse", occurred_at: new Date().toISOString() })
      }, complaintDelayMs)
      timer.unref()
      timers.add(timer)
    }

    /** Records the message for the recipients it is new to; the SMTP reply text. */
    const accept = (session: SMTPServerSession, mail: ParsedMail): string => {
      const recipients = session.envelope.rcptTo.map((r) => r.address)
      const messageId = mail.messageId
      // Without a Message-ID there is nothing to recognise a repeat by: every copy counts.
      const fresh = messageId === undefined ? recipients : recipients.filter((to) => seen.addIfNew(`${messageId}\n${to.toLowerCase()}`))
      counts.duplicates += recipients.length - fresh.length
      if (fresh.length === 0) return DUPLICATE_MESSAGE
      const headers = headerRecord(mail)
      records.push({
        from: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
        to: fresh,
        subject: mail.subject ?? "",
        text: mail.text ?? null,
        html: typeof mail.html === "string" ? mail.html : null,
        headers,
        received_at: new Date().toISOString()
      })
      counts.accepted += fresh.length
      const heraldId = headers["x-herald-message-id"] ?? messageId?.replace(/^<|>$/g, "") ?? ""
      for (const to of fresh) {
        if (recipientFate(to) !== "complaint") continue
        counts.complaints++
        complainLater(heraldId, to)
      }
      return ACCEPTED_MESSAGE
    }

    const onData = (stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err?: Error | null, message?: string) => void) => {
      simpleParser(stream).then(
        (mail) => {
          // Over the size limit smtp-server answers 552 itself, whatever is said here.
          if (stream.sizeExceeded) return callback()
          callback(null, accept(session, mail))
        },
        (error: unknown) => callback(replyError({ code: 451, message: `4.3.0 message could not be parsed: ${String(error)}` }))
      )
    }

    const server = new SMTPServer({
      banner: "Herald SMTP sink",
      logger: false,
      disabledCommands: ["STARTTLS"],
      authOptional: true,
      // The replies carry their own enhanced codes (sinkRules.ts); smtp-server would add a second.
      hideENHANCEDSTATUSCODES: true,
      // A reverse lookup per connection costs a benchmark a DNS round trip and tells the sink nothing.
      disableReverseLookup: true,
      size: MAX_MESSAGE_BYTES,
      // Herald's relay pool keeps connections open; shutting down should not wait on them long.
      closeTimeout: 1_000,
      onMailFrom: (address, _session, callback) => {
        if (!senderRefused(address.address)) return callback()
        counts.rejected++
        callback(replyError(senderRefusedReply(address.address)))
      },
      onRcptTo: (address, _session, callback) => {
        switch (recipientFate(address.address)) {
          case "bounce":
            counts.bounced++
            return callback(replyError(hardBounceReply(address.address)))
          case "soft":
            counts.deferred++
            return callback(replyError(softBounceReply(address.address)))
          default:
            return callback()
        }
      },
      onData
    })
    // Dropped client connections surface here; without a listener they would crash the process.
    server.on("error", (error: Error) => {
      Runtime.runFork(runtime)(Effect.logDebug("smtp sink connection error").pipe(Effect.annotateLogs({ error: error.message })))
    })

    const host = options.host ?? "127.0.0.1"
    yield* Effect.acquireRelease(listen(server, options.port, host), () =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
      }))
    const port = (server.server.address() as AddressInfo).port

    const messages = (to?: string): ReadonlyArray<SinkMessage> => {
      const all = records.toArray()
      if (to === undefined || to === "") return all
      const wanted = to.toLowerCase()
      return all.filter((m) => m.to.some((r) => r.toLowerCase() === wanted))
    }
    const stats = (): SmtpSinkStats => ({ ...counts })

    const handleControl = (req: IncomingMessage, res: ServerResponse, path: string, query: string): boolean => {
      if (req.method !== "GET") return false
      if (path === MESSAGES_PATH) {
        req.resume()
        sendJson(res, 200, { messages: messages(queryParam(query, "to")) })
        return true
      }
      if (path === STATS_PATH) {
        req.resume()
        sendJson(res, 200, stats())
        return true
      }
      return false
    }

    const shownHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host
    return { port, url: `smtp://${shownHost}:${port}`, messages, stats, handleControl }
  })

const replyError = (reply: SinkReply): Error => Object.assign(new Error(reply.message), { responseCode: reply.code })

const headerRecord = (mail: ParsedMail): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (const { key, line } of mail.headerLines) {
    const name = key.toLowerCase()
    if (name in headers) continue
    const colon = line.indexOf(":")
    headers[name] = line.slice(colon + 1).replace(/\r?\n[ \t]+/g, " ").trim()
  }
  return headers
}

const listen = (server: SMTPServer, port: number, host: string) =>
  Effect.async<void, SmtpSinkError>((resume) => {
    const onError = (error: Error) => resume(Effect.fail(new SmtpSinkError({ message: `smtp sink cannot listen on ${host}:${port}: ${error.message}` })))
    server.server.once("error", onError)
    server.listen(port, host, () => {
      server.server.off("error", onError)
      resume(Effect.void)
    })
  })

/**
 * The newest `cap` items in arrival order. Trimmed in batches, so an insert stays O(1) amortised
 * however full it is; `unique` makes it a bounded set of keys instead.
 */
class Newest<A> {
  private items: Array<A> = []
  private readonly index: Set<A> | undefined

  constructor(private readonly cap: number, unique = false) {
    this.index = unique ? new Set() : undefined
  }

  push(item: A): void {
    this.items.push(item)
    this.index?.add(item)
    if (this.items.length < this.cap + Math.max(1, this.cap >> 3)) return
    const dropped = this.items.splice(0, this.items.length - this.cap)
    if (this.index !== undefined) for (const old of dropped) this.index.delete(old)
  }

  /** Adds the key unless present; whether it was new. */
  addIfNew(item: A): boolean {
    if (this.index?.has(item) === true) return false
    this.push(item)
    return true
  }

  toArray(): ReadonlyArray<A> {
    return this.items.length > this.cap ? this.items.slice(-this.cap) : this.items.slice()
  }
}
