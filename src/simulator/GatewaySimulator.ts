import { randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Context, Effect, Layer, Option, Redacted, Schema, type Scope } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import type { GatewayCallbackUrl } from "../gateway/GatewayCallbackUrl.ts"
import { SimulatedUpstream } from "../gateway/SimulatedUpstream.ts"
import { makeCallbackSender } from "./callbackSender.ts"
import { contentProblem } from "./contentCheck.ts"
import { directTransport, waDirectTransport } from "./directTransport.ts"
import { heraldOrigin } from "./heraldOrigin.ts"
import { type Answer, answer, CUT, HELD, notFound, parseJsonObject, queryParam, readBody, safeDecode, type SendAnswer, sendJson } from "./httpHelpers.ts"
import { Ledger } from "./ledger.ts"
import { reachesRecipient, type RecipientRule, ruleOf, SIMULATED_FEATURES } from "./rules.ts"
import { SmtpSink } from "./smtp/SmtpSink.ts"
import { makeWaSimulator, type WaMessageLog, type WaTotals, type WhatsAppSimulatorOptions } from "./whatsapp/WaSimulator.ts"

/**
 * The gateway simulator: an HTTP server speaking RBM's send and capability endpoints, choosing
 * each recipient's fate by the number's last four digits (rules.ts), and calling Herald back with
 * signed RBM webhook events; and, on the same server, Meta's WhatsApp Cloud API
 * (whatsapp/WaSimulator.ts). Plain node:http, not the platform server: it must not be the
 * bottleneck of a benchmark that measures Herald.
 */

export interface GatewaySimulatorOptions {
  /** 0 picks a free port. */
  readonly port: number
  /** Interface to listen on; 127.0.0.1 by default. */
  readonly host?: string
  /**
   * Where callbacks go, asked at each attempt: in-process Herald knows its own port only once it
   * listens. Undefined means "not yet": the callback waits and is retried. A bare origin gets
   * Herald's RBM events path appended.
   */
  readonly callbackUrl: () => string | undefined
  /** The RBM client token callbacks are signed with (GATEWAY_RBM_CLIENT_TOKEN). */
  readonly clientToken: string
  /** DELIVERED this long after the send is accepted. */
  readonly deliveredMs: number
  /** READ this long after the send is accepted (not after DELIVERED). */
  readonly readMs: number
  /**
   * false: no delivery or read callbacks at all, RBM's or WhatsApp's statuses (a benchmark of
   * sends alone). Default true.
   */
  readonly callbacks?: boolean
  /**
   * Where WhatsApp webhooks go and how they are signed. Without it the WhatsApp and CAPI routes
   * still answer (and count), but no webhook is posted.
   */
  readonly whatsapp?: WhatsAppSimulatorOptions
  /**
   * The SMTP sink's control API (smtp/SmtpSink.ts), served on this server when the sink runs
   * in-process: one HTTP port for every simulator a test or a demo reads.
   */
  readonly smtp?: {
    readonly handleControl: (req: IncomingMessage, res: ServerResponse, path: string, query: string) => boolean
  }
}

export interface MessageLog {
  readonly sends: number
  readonly deliveries: number
}

export interface SimulatorTotals {
  readonly messages: number
  readonly sends: number
  readonly deliveries: number
  readonly inbound: number
  /** Send requests held open right now (0002 numbers). */
  readonly held: number
  /** Callbacks Herald took, attempts that failed, callbacks given up on, and those still to go. */
  readonly callbacks: { readonly sent: number; readonly failed_attempts: number; readonly failed: number; readonly pending: number }
  /** The WhatsApp half's own counts; the fields above are RBM's alone. */
  readonly whatsapp: WaTotals
}

export class GatewaySimulatorError extends Schema.TaggedError<GatewaySimulatorError>()("GatewaySimulatorError", {
  message: Schema.String
}) {}

export class GatewaySimulator extends Context.Tag("herald/GatewaySimulator")<GatewaySimulator, {
  /** Base URL to point an RBM adapter at. */
  readonly url: string
  readonly port: number
  /** How many send requests carried `messageId`, and how many times it reached the recipient. */
  readonly log: (messageId: string) => MessageLog
  readonly totals: () => SimulatorTotals
  /** The RBM endpoints called in-process (method, path with query, body). */
  readonly direct: (method: "GET" | "POST", pathAndQuery: string, body: string) => SendAnswer
  /** The WhatsApp and CAPI routes called in-process: HTTP's answers, held and cut sends included. */
  readonly waDirect: (method: "GET" | "POST" | "DELETE", pathAndQuery: string, body: string) => SendAnswer
  /** How many send requests carried `heraldMessageId` as biz_opaque_callback_data. */
  readonly waLog: (heraldMessageId: string) => WaMessageLog
}>() {
  static readonly layer = (options: GatewaySimulatorOptions): Layer.Layer<GatewaySimulator, GatewaySimulatorError> =>
    Layer.scoped(GatewaySimulator, makeGatewaySimulator(options))

  /**
   * The simulator in Herald's own process (a single-process node, DESIGN.md "Simulator
   * processes"): on GATEWAY_SIM_PORT, calling Herald back once its HTTP server listens, and as the
   * SimulatedUpstream the gateways' `layerSimulated` send to, over HTTP or by direct calls
   * (GATEWAY_SIM_TRANSPORT). Lives as long as the layer.
   */
  static readonly layerInProcess: Layer.Layer<GatewaySimulator | SimulatedUpstream, GatewaySimulatorError, AppConfig | GatewayCallbackUrl> =
    Layer.scopedContext(Effect.suspend(() => inProcess(Option.none())))

  /** `layerInProcess` serving the in-process SMTP sink's control API on its port too. */
  static readonly layerInProcessWithSink: Layer.Layer<GatewaySimulator | SimulatedUpstream, GatewaySimulatorError, AppConfig | GatewayCallbackUrl | SmtpSink> =
    Layer.scopedContext(Effect.flatMap(SmtpSink, (sink) => inProcess(Option.some(sink))))
}

/** Starts the simulator from the node's settings, and logs where it listens. */
const inProcess = (sink: Option.Option<Context.Tag.Service<SmtpSink>>) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const origin = yield* heraldOrigin
    const simulator = yield* makeGatewaySimulator({
      port: config.gatewaySimPort,
      callbackUrl: origin,
      clientToken: Redacted.value(config.gatewayRbmClientToken),
      deliveredMs: config.gatewaySimDeliveredMs,
      readMs: config.gatewaySimReadMs,
      callbacks: config.gatewaySimCallbacks,
      whatsapp: {
        callbackUrl: origin,
        appSecret: Redacted.value(config.gatewayWaAppSecret),
        templateReviewMs: config.gatewaySimTemplateReviewMs
      },
      ...(Option.isSome(sink) ? { smtp: sink.value } : {})
    })
    yield* Effect.logInfo("gateway simulator started in-process").pipe(
      Effect.annotateLogs({ url: simulator.url, transport: config.gatewaySimTransport, callbacks: config.gatewaySimCallbacks })
    )
    if (Option.isSome(sink)) {
      yield* Effect.logInfo("smtp sink started in-process").pipe(
        Effect.annotateLogs({ url: sink.value.url, control_url: `${simulator.url}/simulate/smtp/messages` })
      )
    }
    const direct = config.gatewaySimTransport === "direct"
    return Context.make(GatewaySimulator, simulator).pipe(Context.add(SimulatedUpstream, {
      url: simulator.url,
      rbmTransport: direct ? directTransport(simulator, config.gatewayTimeoutMs) : undefined,
      cloudTransport: direct ? waDirectTransport(simulator, config.gatewayTimeoutMs) : undefined
    }))
  })

/** RBM's callbacks about a message the ledger keeps the last of (0: none yet). */
const EventKind = { None: 0, Delivered: 1, Read: 2, Expired: 3 } as const
type EventKind = (typeof EventKind)[keyof typeof EventKind]

const SUBSCRIPTION = "projects/rbm-herald-simulator/subscriptions/rbm-herald-simulator-webhook"

/** User messages (POST /simulate/inbound) kept for replay, the latest this many. */
const INBOUND_KEPT = 10_000

/** Starts the simulator in the current scope; closing the scope closes it and every connection. */
export const makeGatewaySimulator = (
  options: GatewaySimulatorOptions
): Effect.Effect<Context.Tag.Service<GatewaySimulator>, GatewaySimulatorError, Scope.Scope> =>
  Effect.gen(function*() {
    const ledger = new Ledger<EventKind>()
    // Event ids must never repeat across simulator runs, or Herald would drop new events as duplicates.
    const instance = randomBytes(4).toString("hex")
    const pubsubBase = 1e15 + Math.floor(Math.random() * 1e15)
    const eventId = (seq: number) => `sim-${instance}-${seq.toString(36)}`
    const sender = yield* makeCallbackSender({ callbackUrl: options.callbackUrl, clientToken: options.clientToken, subscription: SUBSCRIPTION })
    const wa = yield* makeWaSimulator({
      whatsapp: options.whatsapp,
      deliveredMs: options.deliveredMs,
      readMs: options.readMs,
      callbacks: options.callbacks !== false
    })
    /** User messages by their messageId: the event's JSON and its Pub/Sub sequence and time, for replay. */
    const inbound = new Map<string, { readonly event: string; readonly seq: number; readonly at: number }>()
    let held = 0
    let closed = false
    yield* Effect.addFinalizer(() => Effect.sync(() => void (closed = true)))

    const postEvent = (event: object, seq: number, at: number) => sender.post(JSON.stringify(event), seq, ledger.isoAt(at), pubsubBase)

    /** The message's last callback, rebuilt from its row: the same bytes every time. */
    const lastEvent = (messageId: string, row: number) => {
      const last = ledger.lastOf(row)
      const sendTime = ledger.isoAt(last.at)
      return last.kind === EventKind.Expired
        ? { phoneNumber: ledger.recipientOf(row), agentId: ledger.senderOf(row), messageId, eventType: "TTL_EXPIRATION_REVOKED", eventId: eventId(last.seq), sendTime }
        : {
          senderPhoneNumber: ledger.recipientOf(row),
          eventType: last.kind === EventKind.Delivered ? "DELIVERED" : "READ",
          eventId: eventId(last.seq),
          messageId,
          sendTime,
          agentId: ledger.senderOf(row)
        }
    }

    const emit = (messageId: string, row: number, kind: EventKind) => {
      const seq = ledger.nextSeq()
      const at = ledger.now()
      ledger.setLast(row, kind, seq, at)
      postEvent(lastEvent(messageId, row), seq, at)
    }

    // Plain timers, not a fiber per message: a sleeping fiber weighs kilobytes and a benchmark
    // keeps thousands waiting. The timer gets its arguments instead of a closure, holds only the
    // id and the row, and nothing once fired; unref'd, and a no-op once the scope has closed.
    const readStep = (messageId: string, row: number) => {
      if (!closed) emit(messageId, row, EventKind.Read)
    }
    const deliveredStep = (messageId: string, row: number, rule: RecipientRule) => {
      if (closed) return
      if (rule === "expires") return emit(messageId, row, EventKind.Expired)
      emit(messageId, row, EventKind.Delivered)
      if (rule !== "never-read") setTimeout(readStep, Math.max(0, options.readMs - options.deliveredMs), messageId, row).unref()
    }
    const followUp = (messageId: string, row: number, rule: RecipientRule) =>
      void setTimeout(deliveredStep, options.deliveredMs, messageId, row, rule).unref()

    const agentMessage = (phone: string, messageId: string, acceptedAt: number): Answer =>
      answer(200, { name: `phones/${phone}/agentMessages/${messageId}`, sendTime: ledger.isoAt(acceptedAt) })

    /** What RBM does with an agentMessages.create, whichever way it came in. */
    const answerSend = (phone: string, query: string, text: string): SendAnswer => {
      const messageId = queryParam(query, "messageId")
      const agentId = queryParam(query, "agentId")
      if (!messageId) return googleAnswer(400, "INVALID_ARGUMENT", "messageId is required.")
      if (!agentId) return googleAnswer(400, "INVALID_ARGUMENT", "agentId is required.")
      const body = parseJsonObject(text)
      if (body === undefined) return googleAnswer(400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
      const problem = contentProblem(body)
      if (problem !== undefined) return googleAnswer(400, "INVALID_ARGUMENT", problem)
      const row = ledger.recordSend(messageId, agentId, phone)
      const rule = ruleOf(phone)
      switch (rule) {
        case "not-rcs":
          return googleAnswer(404, "NOT_FOUND", "Requested entity was not found.")
        case "unavailable":
          return googleAnswer(503, "UNAVAILABLE", "The service is currently unavailable.")
        case "no-answer":
          return HELD
      }
      // RBM ignores a messageId it has seen: the same resource again, nothing delivered or called back.
      const seen = ledger.acceptedAt(row)
      if (seen !== undefined) return agentMessage(phone, messageId, seen)
      const at = ledger.now()
      ledger.accept(row, at)
      if (reachesRecipient(rule)) ledger.recordDelivery(row)
      if (options.callbacks !== false) followUp(messageId, row, rule)
      return rule === "cut-after-accept" ? CUT : agentMessage(phone, messageId, at)
    }

    const onSend = (req: IncomingMessage, res: ServerResponse, phone: string, query: string, text: string) => {
      const result = answerSend(phone, query, text)
      if (result === HELD) {
        held++
        res.once("close", () => held--)
        return
      }
      if (result === CUT) return void req.socket.destroy()
      sendJson(res, result.status, result.body)
    }

    const answerCapabilities = (phone: string): Answer => {
      switch (ruleOf(phone)) {
        case "not-rcs":
          return googleAnswer(404, "NOT_FOUND", "Requested entity was not found.")
        case "unavailable":
          return googleAnswer(503, "UNAVAILABLE", "The service is currently unavailable.")
        default:
          return answer(200, { features: SIMULATED_FEATURES })
      }
    }

    const onCapabilities = (res: ServerResponse, phone: string) => {
      const result = answerCapabilities(phone)
      sendJson(res, result.status, result.body)
    }

    /**
     * The RBM endpoints without HTTP, for an adapter in the same process (GATEWAY_SIM_TRANSPORT=
     * direct): the same answers and ledger, none of the sockets, so a benchmark measures Herald.
     */
    const direct = (method: "GET" | "POST", pathAndQuery: string, body: string): SendAnswer => {
      const q = pathAndQuery.indexOf("?")
      const path = q === -1 ? pathAndQuery : pathAndQuery.slice(0, q)
      const query = q === -1 ? "" : pathAndQuery.slice(q + 1)
      const operation = phoneOperation(path)
      if (operation?.name === "agentMessages" && method === "POST") return answerSend(operation.phone, query, body)
      if (operation?.name === "capabilities" && method === "GET") return answerCapabilities(operation.phone)
      return answer(404, { error: { code: 404, message: "Not Found", status: "NOT_FOUND" } })
    }

    const onInbound = (res: ServerResponse, text: string) => {
      const body = parseJsonObject(text)
      const botId = body?.bot_id
      const from = body?.from
      const message = body?.text
      const postback = body?.postback_data
      if (typeof botId !== "string" || botId === "" || typeof from !== "string" || from === "" || typeof message !== "string") {
        return sendJson(res, 400, { error: "body must be {bot_id, from, text, postback_data?} with non-empty bot_id and from" })
      }
      const seq = ledger.nextSeq()
      const at = ledger.now()
      const messageId = `sim-${instance}-m${seq.toString(36)}`
      const event = {
        senderPhoneNumber: from,
        messageId,
        sendTime: ledger.isoAt(at),
        agentId: botId,
        // A postback makes it a tapped suggestion, as RBM reports one.
        ...(typeof postback === "string" && postback !== ""
          ? { suggestionResponse: { postbackData: postback, text: message, type: "REPLY" } }
          : { text: message })
      }
      ledger.inbound++
      const json = JSON.stringify(event)
      inbound.set(messageId, { event: json, seq, at })
      if (inbound.size > INBOUND_KEPT) inbound.delete(inbound.keys().next().value!)
      sender.post(json, seq, ledger.isoAt(at), pubsubBase)
      sendJson(res, 202, { message_id: messageId })
    }

    const onReplay = (res: ServerResponse, text: string) => {
      const messageId = parseJsonObject(text)?.message_id
      if (typeof messageId !== "string" || messageId === "") return sendJson(res, 400, { error: "body must be {message_id}" })
      const row = ledger.rowOf(messageId)
      const user = row === undefined ? inbound.get(messageId) : undefined
      if (user !== undefined) {
        // RBM retrying a user message: the same event (same messageId), signed again.
        sender.post(user.event, user.seq, ledger.isoAt(user.at), pubsubBase)
        return sendJson(res, 202, { message_id: messageId, event_type: "USER_MESSAGE" })
      }
      if (row === undefined || ledger.lastOf(row).kind === EventKind.None) {
        return sendJson(res, 404, { error: "no callback has been sent for that message_id" })
      }
      const event = lastEvent(messageId, row)
      const last = ledger.lastOf(row)
      postEvent(event, last.seq, last.at)
      sendJson(res, 202, { message_id: messageId, event_id: event.eventId, event_type: event.eventType })
    }

    const log = (messageId: string): MessageLog => {
      const row = ledger.rowOf(messageId)
      return row === undefined ? { sends: 0, deliveries: 0 } : { sends: ledger.sendsOf(row), deliveries: ledger.deliveriesOf(row) }
    }

    const totals = (): SimulatorTotals => ({
      messages: ledger.size,
      sends: ledger.sends,
      deliveries: ledger.deliveries,
      inbound: ledger.inbound,
      held,
      callbacks: {
        sent: sender.stats.sent,
        failed_attempts: sender.stats.failedAttempts,
        failed: sender.stats.failed,
        pending: sender.stats.pending
      },
      whatsapp: wa.totals()
    })

    const onLog = (res: ServerResponse, query: string) => {
      const messageId = queryParam(query, "message_id")
      if (messageId === undefined) return sendJson(res, 200, totals())
      sendJson(res, 200, { message_id: messageId, ...log(messageId) })
    }

    const handle = (req: IncomingMessage, res: ServerResponse) => {
      const raw = req.url ?? "/"
      const q = raw.indexOf("?")
      const path = q === -1 ? raw : raw.slice(0, q)
      const query = q === -1 ? "" : raw.slice(q + 1)
      const operation = phoneOperation(path)
      if (operation?.name === "agentMessages" && req.method === "POST") {
        return readBody(req, res, (text) => onSend(req, res, operation.phone, query, text))
      }
      if (operation?.name === "capabilities" && req.method === "GET") return onCapabilities(res, operation.phone)
      if (path === "/simulate/inbound" && req.method === "POST") return readBody(req, res, (text) => onInbound(res, text))
      if (path === "/simulate/replay-callback" && req.method === "POST") return readBody(req, res, (text) => onReplay(res, text))
      if (path === "/simulate/log" && req.method === "GET") return onLog(res, query)
      if (wa.handle(req, res, path, query)) return
      if (options.smtp?.handleControl(req, res, path, query) === true) return
      req.resume()
      notFound(res)
    }

    const host = options.host ?? "127.0.0.1"
    const server = yield* Effect.acquireRelease(listen(handle, options.port, host), closeServer)
    const port = (server.address() as AddressInfo).port
    const shownHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host
    return GatewaySimulator.of({ url: `http://${shownHost}:${port}`, port, log, totals, direct, waDirect: wa.direct, waLog: wa.log })
  })

// Defined beside the HTTP helpers so the WhatsApp half shares them without an import cycle.
export { type Answer, CUT, HELD, type SendAnswer } from "./httpHelpers.ts"

/** Google's error envelope, as RBM answers. */
const googleAnswer = (code: number, status: string, message: string): Answer => answer(code, { error: { code, message, status } })

/** `/v1/phones/{phone}/{operation}`, or undefined for any other path. */
const phoneOperation = (path: string): { readonly phone: string; readonly name: string } | undefined => {
  if (!path.startsWith("/v1/phones/")) return undefined
  const rest = path.slice("/v1/phones/".length)
  const slash = rest.indexOf("/")
  const phone = slash > 0 ? safeDecode(rest.slice(0, slash)) : undefined
  return phone === undefined ? undefined : { phone, name: rest.slice(slash + 1) }
}

const listen = (handle: (req: IncomingMessage, res: ServerResponse) => void, port: number, host: string) =>
  Effect.async<Server, GatewaySimulatorError>((resume) => {
    const server = createServer(handle)
    // Longer than the adapter's keep-alive, so the adapter is the side that retires idle sockets:
    // a socket closed by the server just as a send is written would make that send unconfirmed.
    server.keepAliveTimeout = 65_000
    server.headersTimeout = 66_000
    server.once("error", (error) => resume(Effect.fail(new GatewaySimulatorError({ message: `gateway simulator cannot listen on ${host}:${port}: ${error.message}` }))))
    server.listen(port, host, () => resume(Effect.succeed(server)))
  })

const closeServer = (server: Server) =>
  Effect.async<void>((resume) => {
    server.close(() => resume(Effect.void))
    // Held (0002) requests and idle keep-alive sockets would otherwise keep close() waiting.
    server.closeAllConnections()
  })
