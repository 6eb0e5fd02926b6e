import { randomBytes } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import { Effect, type Scope } from "effect"
import { validateCloudMessage, validateTemplateCreation } from "../../whatsapp/cloud/metaSchema.ts"
import { Ledger } from "../ledger.ts"
import { type CallbackStats, makeWebhookSender, resolveCallbackUrl, type WebhookSender } from "../callbackSender.ts"
import { type Answer, answer, CUT, HELD, parseJsonObject, queryParam, readBody, safeDecode, type SendAnswer, sendJson } from "../httpHelpers.ts"
import { CapiLog, capiAnswer } from "./capi.ts"
import { ECOSYSTEM_ERROR, graphError, invalidParameter, missingToken, outsideWindow, somethingWentWrong, undeliverable } from "./metaErrors.ts"
import { reviewOf, type TemplateRecord, TemplateRegistry } from "./templates.ts"
import { digitsOf, isPhoneDigits, type WaRule, waRuleOf } from "./waRules.ts"
import {
  callWebhook,
  inboundWebhook,
  paymentWebhook,
  PRICING_CATEGORIES,
  type PricingCategory,
  SIM_WABA_ID,
  signWaBody,
  type StatusName,
  statusWebhook,
  templateStatusWebhook,
  WA_EVENTS_PATH,
  WA_SIGNATURE_HEADER,
  type WaNumber
} from "./webhooks.ts"

/** Meta's statuses of a message the ledger keeps the last of (0: none yet). */
const WaStatus = { None: 0, Sent: 1, Delivered: 2, Read: 3, Failed: 4 } as const
type WaStatus = (typeof WaStatus)[keyof typeof WaStatus]

/**
 * The gateway simulator's WhatsApp half: Meta's Cloud API (messages, message templates), the
 * Conversions API's events edge, and control routes that play the customer (inbound messages,
 * calls, payments). Shares the RBM half's server and its ways: recipient fates by the number's
 * last four digits, a columnar ledger, timers rather than fibers, webhooks through the shared
 * FIFO sender, and the same answers in-process (`direct`) as over HTTP.
 */

export interface WhatsAppSimulatorOptions {
  /**
   * Herald's Meta webhook, asked at each attempt; undefined means "not yet" (retried). A bare
   * origin gets WA_EVENTS_PATH appended.
   */
  readonly callbackUrl: () => string | undefined
  /** Meta's app secret webhooks are signed with (GATEWAY_WA_APP_SECRET). */
  readonly appSecret: string
  /** A submitted template is approved or rejected this long after creation. Default 1000. */
  readonly templateReviewMs?: number
}

export interface WaMessageLog {
  readonly sends: number
}

export interface WaTotals {
  /** Herald message ids seen (plus sends without `biz_opaque_callback_data`). */
  readonly messages: number
  /** Send requests that passed the schema, repeats included. */
  readonly sends: number
  readonly inbound: number
  readonly calls: number
  readonly payments: number
  readonly templates: number
  readonly capi_requests: number
  /** Send requests held open right now (0002 numbers). */
  readonly held: number
  readonly callbacks: { readonly sent: number; readonly failed_attempts: number; readonly failed: number; readonly pending: number }
}

export interface WaSimulator {
  /** Takes the request when it is a WhatsApp or CAPI route (answering it), else false. */
  readonly handle: (req: IncomingMessage, res: ServerResponse, path: string, query: string) => boolean
  readonly direct: (method: "GET" | "POST" | "DELETE", pathAndQuery: string, body: string) => SendAnswer
  readonly log: (heraldMessageId: string) => WaMessageLog
  readonly totals: () => WaTotals
}

/** The URL WhatsApp webhooks are posted to, or undefined when `raw` is not an http(s) URL. */
export const resolveWaCallbackUrl = (raw: string): string | undefined => resolveCallbackUrl(raw, WA_EVENTS_PATH)

export { WA_EVENTS_PATH }

const DAY_MS = 86_400_000
const GRAPH_VERSION = /^v\d+\.\d+$/

/**
 * One route's answer. `authorized`: the caller presented a token; Meta would check it, the
 * simulator takes any, so only its absence is refused.
 */
type Route = (query: string, body: string, authorized: boolean) => SendAnswer

const badControl = (message: string): Answer => answer(400, { error: message })

const nonEmpty = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined)

const hasToken = (authorization: string | undefined, query: string) =>
  (authorization !== undefined && /^Bearer\s+\S/i.test(authorization)) || nonEmpty(queryParam(query, "access_token")) !== undefined

/** `/{version}/{id}/{edge}` of the Graph API, or undefined. */
const graphPath = (path: string): { readonly id: string; readonly edge: string } | undefined => {
  const parts = path.split("/")
  if (parts.length !== 4 || parts[0] !== "" || !GRAPH_VERSION.test(parts[1]!) || parts[3] === "") return undefined
  const id = safeDecode(parts[2]!)
  return id === undefined || id === "" ? undefined : { id, edge: parts[3]! }
}

export const makeWaSimulator = (options: {
  readonly whatsapp: WhatsAppSimulatorOptions | undefined
  readonly deliveredMs: number
  readonly readMs: number
  /** false: no status webhooks (a benchmark of sends alone); control-route webhooks still go. */
  readonly callbacks: boolean
}): Effect.Effect<WaSimulator, never, Scope.Scope> =>
  Effect.gen(function*() {
    const wa = options.whatsapp
    const ledger = new Ledger<WaStatus>()
    const templates = new TemplateRegistry()
    const capiLog = new CapiLog()
    /** Per dataset: how many more requests fail, and how (a status, or 0 for a cut connection). */
    const capiOutages = new Map<string, { remaining: number; status: number }>()
    // Ids must never repeat across simulator runs, or Herald would drop new webhooks as duplicates.
    const instance = randomBytes(4).toString("hex")
    const sender: WebhookSender | undefined = wa === undefined ? undefined : yield* makeWebhookSender({
      callbackUrl: wa.callbackUrl,
      resolveUrl: resolveWaCallbackUrl,
      signatureHeader: WA_SIGNATURE_HEADER,
      userAgent: "facebookexternalua"
    })
    const reviewMs = wa?.templateReviewMs ?? 1_000
    /** Customer service windows: (phone_number_id, customer digits) → ledger time of the last inbound. */
    const windows = new Map<string, number>()
    /** What control routes told about business numbers; unknown ones get defaults (numberOf). */
    const numbers = new Map<string, WaNumber>()
    const counts = { inbound: 0, calls: 0, payments: 0, held: 0 }
    let closed = false
    yield* Effect.addFinalizer(() => Effect.sync(() => void (closed = true)))

    const idOf = (prefix: string, seq: number) => `${prefix}.${Buffer.from(`${instance}:${seq}`).toString("base64url")}`
    const wamidOf = (seq: number) => idOf("wamid", seq)

    const numberOf = (phoneNumberId: string): WaNumber =>
      numbers.get(phoneNumberId) ?? { phoneNumberId, displayPhoneNumber: phoneNumberId, wabaId: SIM_WABA_ID }

    /** A control route may name the number's WABA and display number; later webhooks reuse them. */
    const learnNumber = (phoneNumberId: string, body: Record<string, unknown>): WaNumber => {
      const known = numberOf(phoneNumberId)
      const wabaId = nonEmpty(body.waba_id) ?? known.wabaId
      const displayPhoneNumber = nonEmpty(body.display_phone_number) ?? known.displayPhoneNumber
      if (wabaId === known.wabaId && displayPhoneNumber === known.displayPhoneNumber) return known
      const number = { phoneNumberId, displayPhoneNumber, wabaId }
      numbers.set(phoneNumberId, number)
      return number
    }

    const post = (webhook: object) => {
      if (sender === undefined || closed) return
      const body = Buffer.from(JSON.stringify(webhook))
      sender.post(body, signWaBody(body, wa!.appSecret))
    }

    const windowKey = (phoneNumberId: string, digits: string) => `${phoneNumberId}\u0000${digits}`
    const windowOpen = (phoneNumberId: string, digits: string) => {
      const opened = windows.get(windowKey(phoneNumberId, digits))
      return opened !== undefined && ledger.now() - opened < DAY_MS
    }

    // ---- statuses -------------------------------------------------------------------------

    // Indexed by WaStatus; None never reaches a webhook (replay refuses rows without a status).
    const STATUS_NAMES: ReadonlyArray<StatusName> = ["sent", "sent", "delivered", "read", "failed"]

    /** The row's last status webhook, rebuilt from the ledger: the same bytes every time. */
    const lastStatusWebhook = (messageId: string | undefined, row: number) => {
      const last = ledger.lastOf(row)
      return statusWebhook({
        number: numberOf(ledger.senderOf(row)),
        wamid: wamidOf(last.seq),
        status: STATUS_NAMES[last.kind]!,
        at: ledger.unixAt(last.at),
        recipient: ledger.recipientOf(row),
        messageId,
        category: PRICING_CATEGORIES[ledger.tagOf(row)]!,
        ...(last.kind === WaStatus.Failed ? { errors: [ECOSYSTEM_ERROR] } : {})
      })
    }

    const emit = (messageId: string | undefined, row: number, wamidSeq: number, status: WaStatus) => {
      if (closed) return
      ledger.setLast(row, status, wamidSeq, ledger.now())
      post(lastStatusWebhook(messageId, row))
    }

    // Plain timers with their arguments, not closures or fibers: see ../GatewaySimulator.ts.
    const afterDelivery = (messageId: string | undefined, row: number, wamidSeq: number, rule: WaRule) => {
      if (rule === "ecosystem-failure") return emit(messageId, row, wamidSeq, WaStatus.Failed)
      emit(messageId, row, wamidSeq, WaStatus.Delivered)
      if (rule !== "never-read") setTimeout(emit, Math.max(0, options.readMs - options.deliveredMs), messageId, row, wamidSeq, WaStatus.Read).unref()
    }
    const followUp = (messageId: string | undefined, row: number, wamidSeq: number, rule: WaRule) => {
      // `sent` right after the answer is written, as Meta's usually follows its answer.
      setTimeout(emit, 0, messageId, row, wamidSeq, WaStatus.Sent).unref()
      setTimeout(afterDelivery, options.deliveredMs, messageId, row, wamidSeq, rule).unref()
    }

    // ---- Cloud API --------------------------------------------------------------------------

    const categoryOf = (message: Record<string, unknown>): PricingCategory => {
      if (message.type !== "template") return "service"
      const template = message.template as { readonly name?: unknown; readonly language?: { readonly code?: unknown } }
      return templates.categoryOf(String(template?.name), String(template?.language?.code))
    }

    /** The refusals Meta makes before it accepts a valid send, in its order; undefined when it accepts. */
    const refusal = (rule: WaRule, phoneNumberId: string, digits: string, message: Record<string, unknown>): SendAnswer | undefined => {
      if (rule === "no-answer") return HELD
      if (rule === "server-error") return somethingWentWrong()
      // Meta's `type` defaults to text: anything but a template needs the window.
      if (message.type !== "template" && !windowOpen(phoneNumberId, digits)) return outsideWindow()
      if (rule === "undeliverable") return undeliverable()
      return undefined
    }

    /** What the Cloud API does with POST /{version}/{phone_number_id}/messages. */
    const answerMessage = (phoneNumberId: string, text: string): SendAnswer => {
      const message = parseJsonObject(text)
      if (message === undefined) return invalidParameter(["the body must be a JSON object"])
      // A read receipt for an inbound message shares the endpoint; nothing to send or count.
      if (message.status === "read" && nonEmpty(message.message_id) !== undefined) return answer(200, { success: true })
      const problems = validateCloudMessage(message)
      if (problems.length > 0) return invalidParameter(problems)
      const to = String(message.to)
      const digits = digitsOf(to)
      if (!isPhoneDigits(digits)) return invalidParameter([`to: ${to} is not a phone number with country code`])
      const messageId = nonEmpty(message.biz_opaque_callback_data)
      // A repeat of an id is a new message to Meta: the row follows its latest send.
      const row = ledger.recordSend(messageId, phoneNumberId, digits, true)
      ledger.setTag(row, PRICING_CATEGORIES.indexOf(categoryOf(message)))
      const rule = waRuleOf(digits)
      const refused = refusal(rule, phoneNumberId, digits, message)
      if (refused !== undefined) return refused
      // Meta has no idempotency key: a repeat is a new message with a new wamid, sent again.
      const wamidSeq = ledger.nextSeq()
      if (options.callbacks) followUp(messageId, row, wamidSeq, rule)
      if (rule === "cut-after-accept") return CUT
      return answer(200, { messaging_product: "whatsapp", contacts: [{ input: to, wa_id: digits }], messages: [{ id: wamidOf(wamidSeq) }] })
    }

    const review = (record: TemplateRecord) => {
      if (closed || !templates.isCurrent(record)) return
      const verdict = reviewOf(record.name)
      post(templateStatusWebhook({
        wabaId: record.wabaId,
        at: ledger.unixAt(ledger.now()),
        event: verdict.event,
        templateId: record.id,
        name: record.name,
        language: record.language,
        reason: verdict.reason
      }))
    }

    /** POST /{version}/{waba_id}/message_templates: PENDING now, reviewed after templateReviewMs. */
    const answerTemplateCreation = (wabaId: string, text: string): Answer => {
      const body = parseJsonObject(text)
      if (body === undefined) return invalidParameter(["the body must be a JSON object"])
      const problems = validateTemplateCreation(body)
      if (problems.length > 0) return invalidParameter(problems)
      const category = String(body.category)
      const record = templates.create(wabaId, String(body.name), String(body.language), category)
      setTimeout(review, reviewMs, record).unref()
      return answer(200, { id: String(record.id), status: "PENDING", category })
    }

    const answerTemplateDeletion = (wabaId: string, query: string): Answer => {
      const name = nonEmpty(queryParam(query, "name"))
      if (name === undefined) return graphError(400, 100, "(#100) The parameter name is required")
      // Deleting what the simulator never saw (it restarted, say) succeeds: the end state is the same.
      templates.delete(wabaId, name, nonEmpty(queryParam(query, "hsm_id")))
      return answer(200, { success: true })
    }

    const answerCapiEvents = (datasetId: string, path: string, query: string, text: string, authorized: boolean): SendAnswer => {
      const body = parseJsonObject(text)
      if (!authorized && nonEmpty(body?.access_token) === undefined) return missingToken()
      const outage = capiOutages.get(datasetId)
      if (outage !== undefined && outage.remaining > 0) {
        outage.remaining--
        capiLog.record(datasetId, { path: query === "" ? path : `${path}?${query}`, body: body ?? text, received_at: new Date().toISOString(), status: outage.status })
        if (outage.status === 0) return CUT
        return graphError(outage.status, outage.status === 429 ? 4 : 2, outage.status === 429 ? "(#4) Application request limit reached" : "Service temporarily unavailable")
      }
      const result = capiAnswer(body, ledger.unixAt(ledger.now()))
      capiLog.record(datasetId, {
        path: query === "" ? path : `${path}?${query}`,
        body: body ?? text,
        received_at: new Date().toISOString(),
        status: result.status
      })
      return result
    }

    const graphRoute = (method: string | undefined, path: string): Route | undefined => {
      const graph = graphPath(path)
      if (graph === undefined) return undefined
      const guarded = (route: (query: string, body: string) => SendAnswer): Route => (query, body, authorized) =>
        authorized ? route(query, body) : missingToken()
      switch (`${method} ${graph.edge}`) {
        case "POST messages":
          return guarded((_, body) => answerMessage(graph.id, body))
        case "POST message_templates":
          return guarded((_, body) => answerTemplateCreation(graph.id, body))
        case "DELETE message_templates":
          return guarded((query) => answerTemplateDeletion(graph.id, query))
        case "POST events":
          return (query, body, authorized) => answerCapiEvents(graph.id, path, query, body, authorized)
        default:
          return undefined
      }
    }

    // ---- control routes: the customer's side -------------------------------------------------

    /** The fields every control route shares: the business number and the customer's digits. */
    const parties = (body: Record<string, unknown> | undefined) => {
      const phoneNumberId = nonEmpty(body?.phone_number_id)
      const from = typeof body?.from === "string" ? digitsOf(body.from) : ""
      if (body === undefined || phoneNumberId === undefined || !isPhoneDigits(from)) return undefined
      return { body, number: learnNumber(phoneNumberId, body), from, name: nonEmpty(body.name) ?? `Sim ${from.slice(-4)}` }
    }
    const PARTIES = "phone_number_id (non-empty) and from (digits with country code, + optional)"

    const onInbound = (text: string): Answer => {
      const p = parties(parseJsonObject(text))
      if (p === undefined || typeof p.body.text !== "string") return badControl(`body must be {${PARTIES}, text, name?}`)
      const wamid = wamidOf(ledger.nextSeq())
      windows.set(windowKey(p.number.phoneNumberId, p.from), ledger.now())
      counts.inbound++
      post(inboundWebhook(p.number, { from: p.from, name: p.name, wamid, at: ledger.unixAt(ledger.now()), text: p.body.text }))
      return answer(202, { id: wamid })
    }

    const CALL_STATUSES = new Set(["completed", "missed", "rejected"])

    const onCall = (text: string): Answer => {
      const p = parties(parseJsonObject(text))
      const status = p?.body.status
      const duration = p?.body.duration_sec ?? 0
      if (p === undefined || typeof status !== "string" || !CALL_STATUSES.has(status) || typeof duration !== "number" || !(duration >= 0)) {
        return badControl(`body must be {${PARTIES}, status: completed|missed|rejected, duration_sec (>= 0), recording: boolean}`)
      }
      const id = idOf("wacid", ledger.nextSeq())
      counts.calls++
      post(callWebhook(p.number, {
        id,
        from: p.from,
        name: p.name,
        at: ledger.unixAt(ledger.now()),
        status: status as "completed" | "missed" | "rejected",
        durationSec: Math.round(duration),
        recordingUrl: p.body.recording === true ? `https://sim.herald.local/recordings/${id}.ogg` : undefined
      }))
      return answer(202, { id })
    }

    const onPayment = (text: string): Answer => {
      const p = parties(parseJsonObject(text))
      const referenceId = nonEmpty(p?.body.reference_id)
      const amount = p?.body.amount
      const currency = nonEmpty(p?.body.currency)
      if (p === undefined || referenceId === undefined || typeof amount !== "number" || !(amount > 0) || !Number.isFinite(amount) || currency === undefined) {
        return badControl(`body must be {${PARTIES}, reference_id, amount (> 0), currency}`)
      }
      const seq = ledger.nextSeq()
      const wamid = wamidOf(seq)
      counts.payments++
      post(paymentWebhook(p.number, {
        wamid,
        from: p.from,
        at: ledger.unixAt(ledger.now()),
        referenceId,
        amount,
        currency,
        transactionId: `sim-${instance}-${seq.toString(36)}`
      }))
      return answer(202, { id: wamid })
    }

    const log = (heraldMessageId: string): WaMessageLog => {
      const row = ledger.rowOf(heraldMessageId)
      return { sends: row === undefined ? 0 : ledger.sendsOf(row) }
    }

    const onLog = (query: string): Answer => {
      const id = queryParam(query, "id")
      return id === undefined ? answer(200, totals()) : answer(200, { id, ...log(id) })
    }

    const onReplay = (text: string): Answer => {
      const id = nonEmpty(parseJsonObject(text)?.id)
      if (id === undefined) return badControl("body must be {id} (Herald's message id, as biz_opaque_callback_data)")
      const row = ledger.rowOf(id)
      if (row === undefined || ledger.lastOf(row).kind === WaStatus.None) return answer(404, { error: "no status webhook has been posted for that id" })
      const last = ledger.lastOf(row)
      post(lastStatusWebhook(id, row))
      return answer(202, { id, wamid: wamidOf(last.seq), status: STATUS_NAMES[last.kind]! })
    }

    const onCapiLog = (query: string): Answer => {
      const datasetId = nonEmpty(queryParam(query, "dataset_id"))
      return datasetId === undefined ? badControl("dataset_id is required") : answer(200, { requests: capiLog.requestsOf(datasetId) })
    }

    const onCapiOutage = (text: string): Answer => {
      const body = parseJsonObject(text)
      const datasetId = nonEmpty(body?.dataset_id)
      const requests = body?.requests
      const status = body?.status ?? 503
      if (datasetId === undefined || typeof requests !== "number" || !Number.isInteger(requests) || requests < 0 || typeof status !== "number" || !(status === 0 || (status >= 400 && status <= 599))) {
        return badControl("body must be {dataset_id, requests (>= 0), status? (400-599, or 0 to cut the connection; 503 by default)}")
      }
      capiOutages.set(datasetId, { remaining: requests, status })
      return answer(200, { dataset_id: datasetId, requests, status })
    }

    const CONTROL: Record<string, Route> = {
      "POST /simulate/wa/inbound": (_, body) => onInbound(body),
      "POST /simulate/wa/call": (_, body) => onCall(body),
      "POST /simulate/wa/payment": (_, body) => onPayment(body),
      "GET /simulate/wa/log": (query) => onLog(query),
      "POST /simulate/wa/replay-status": (_, body) => onReplay(body),
      "GET /simulate/capi/log": (query) => onCapiLog(query),
      "POST /simulate/capi/outage": (_, body) => onCapiOutage(body)
    }

    const routeOf = (method: string | undefined, path: string): Route | undefined => CONTROL[`${method} ${path}`] ?? graphRoute(method, path)

    // ---- the two ways in ----------------------------------------------------------------------

    const write = (req: IncomingMessage, res: ServerResponse, result: SendAnswer) => {
      if (result === HELD) {
        counts.held++
        res.once("close", () => counts.held--)
        return
      }
      if (result === CUT) return void req.socket.destroy()
      sendJson(res, result.status, result.body)
    }

    const handle = (req: IncomingMessage, res: ServerResponse, path: string, query: string): boolean => {
      const route = routeOf(req.method, path)
      if (route === undefined) return false
      const authorized = hasToken(req.headers.authorization, query)
      readBody(req, res, (text) => write(req, res, route(query, text, authorized)))
      return true
    }

    /** In-process calls carry no headers: taken as authorized, as the adapter always sends a token. */
    const direct = (method: "GET" | "POST" | "DELETE", pathAndQuery: string, body: string): SendAnswer => {
      const q = pathAndQuery.indexOf("?")
      const path = q === -1 ? pathAndQuery : pathAndQuery.slice(0, q)
      const query = q === -1 ? "" : pathAndQuery.slice(q + 1)
      const route = routeOf(method, path)
      return route === undefined ? graphError(404, 2500, `Unknown path components: ${path}`) : route(query, body, true)
    }

    const callbackStats = (): CallbackStats => sender?.stats ?? { sent: 0, failedAttempts: 0, failed: 0, pending: 0 }

    function totals(): WaTotals {
      const stats = callbackStats()
      return {
        messages: ledger.size,
        sends: ledger.sends,
        inbound: counts.inbound,
        calls: counts.calls,
        payments: counts.payments,
        templates: templates.size,
        capi_requests: capiLog.total,
        held: counts.held,
        callbacks: { sent: stats.sent, failed_attempts: stats.failedAttempts, failed: stats.failed, pending: stats.pending }
      }
    }

    return { handle, direct, log, totals }
  })
