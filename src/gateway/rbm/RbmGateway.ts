import { randomUUID } from "node:crypto"
import { Effect, type Scope } from "effect"
import { type Capability, GatewayUnavailable, type RcsGatewayApi, type RcsSendRequest, type SendOutcome } from "../rcs.ts"
import { currentTraceparent, TRACEPARENT } from "../../observability/Tracing.ts"
import { toContentMessage } from "./content.ts"
import { notSent, rejectionRecord, unconfirmedCut, unconfirmedTimeout } from "./errors.ts"
import { type Exchange, exchange, gatewayPool } from "./exchange.ts"

export interface RbmGatewayOptions {
  /** Google's `https://rcsbusinessmessaging.googleapis.com`, a regional host, or the simulator. */
  readonly baseUrl: string
  /** How long a call waits for the answer before it counts as unconfirmed (GATEWAY_TIMEOUT_MS). */
  readonly timeoutMs: number
  /** Keep-alive connections to the gateway; requests beyond them queue. */
  readonly connections?: number
  /**
   * The Authorization header for each call. Google's OAuth (a service-account token) is out of
   * scope; the simulator needs none. A token provider plugs in here.
   */
  readonly authorization?: () => string | undefined
  /**
   * Carries the exchanges instead of HTTP: the simulator in the same process
   * (GATEWAY_SIM_TRANSPORT=direct). Everything above the wire is the same.
   */
  readonly transport?: Transport
}

export type Transport = (method: "GET" | "POST", path: string, body: Buffer | undefined) => Effect.Effect<Exchange>

const DEFAULT_CONNECTIONS = 256

/** E.164 goes into the path as is (Google's own examples keep the '+'); anything else is escaped. */
const phoneSegment = (phone: string) => (/^\+?[0-9]{1,20}$/.test(phone) ? phone : encodeURIComponent(phone))

/** Sending and capability checks against RBM's REST API (or the simulator speaking it). */
export const makeRbmGateway = (options: RbmGatewayOptions): Effect.Effect<RcsGatewayApi, never, Scope.Scope> =>
  Effect.gen(function*() {
    const base = new URL(options.baseUrl)
    const prefix = base.pathname.replace(/\/+$/, "")
    const timeoutMs = options.timeoutMs
    const pool = options.transport !== undefined ? undefined : yield* gatewayPool(base.origin, options.connections ?? DEFAULT_CONNECTIONS, timeoutMs)

    const headersFor = (json: boolean): Record<string, string> => {
      const authorization = options.authorization?.()
      return {
        ...(json ? { "content-type": "application/json" } : {}),
        "user-agent": "Herald-RBM/1",
        ...(authorization !== undefined ? { authorization } : {})
      }
    }

    const call = (method: "GET" | "POST", path: string, body?: Buffer, traceparent?: string, proceed?: () => boolean): Effect.Effect<Exchange> =>
      pool === undefined ? options.transport!(method, prefix + path, body) : Effect.async<Exchange>((resume) => {
        const headers = headersFor(body !== undefined)
        // The upstream may continue the trace (W3C Trace Context); the simulator ignores it.
        if (traceparent !== undefined) headers[TRACEPARENT] = traceparent
        const cancel = exchange(pool, { method, path: prefix + path, headers, ...(body ? { body } : {}), ...(proceed ? { proceed } : {}) }, timeoutMs, (result) =>
          resume(Effect.succeed(result)))
        return Effect.sync(cancel)
      })

    const send = (request: RcsSendRequest) =>
      Effect.gen(function*() {
        const path = `/v1/phones/${phoneSegment(request.to)}/agentMessages?messageId=${encodeURIComponent(request.messageId)}&agentId=${
          encodeURIComponent(request.agentId)
        }`
        const body = Buffer.from(JSON.stringify({ contentMessage: toContentMessage(request.content) }))
        const exchanged = yield* call("POST", path, body, yield* currentTraceparent, request.proceed)
        if (exchanged._tag === "Answered") yield* Effect.annotateCurrentSpan("http.response.status_code", exchanged.status)
        else yield* Effect.annotateCurrentSpan("error.type", exchanged._tag === "NotSent" ? "not_sent" : exchanged.cause)
        return sendOutcome(exchanged, request.messageId, timeoutMs)
      }).pipe(
        // OpenTelemetry's HTTP client span: named by the method, the route in an attribute.
        Effect.withSpan("POST", {
          kind: "client",
          attributes: {
            "http.request.method": "POST",
            "server.address": base.hostname,
            "server.port": Number(base.port || (base.protocol === "https:" ? 443 : 80)),
            "url.template": `${prefix}/v1/phones/{phone}/agentMessages`,
            "herald.message.id": request.messageId,
            "herald.gateway": "rbm"
          }
        })
      )

    const capability = Effect.fn("RcsGateway.capability")(function*(agentId: string, phone: string) {
      const path = `/v1/phones/${phoneSegment(phone)}/capabilities?requestId=${randomUUID()}&agentId=${encodeURIComponent(agentId)}`
      return yield* capabilityOf(yield* call("GET", path), phone)
    })

    return { send, capability }
  })

export const sendOutcome = (result: Exchange, messageId: string, timeoutMs: number): SendOutcome => {
  switch (result._tag) {
    case "Answered":
      return result.status >= 200 && result.status < 300
        ? { _tag: "Accepted", at: Date.now() }
        : { _tag: "Rejected", error: rejectionRecord(result.status, result.body) }
    case "NotSent":
      return { _tag: "Rejected", error: notSent(result.cause) }
    case "Lost":
      return {
        _tag: "Unconfirmed",
        error: result.cause === "timeout" ? unconfirmedTimeout(messageId, timeoutMs) : unconfirmedCut(messageId, result.detail)
      }
  }
}

const capabilityOf = (result: Exchange, phone: string): Effect.Effect<Capability, GatewayUnavailable> => {
  if (result._tag !== "Answered") {
    return Effect.fail(new GatewayUnavailable({ message: `capability check got no answer: ${result._tag === "Lost" ? result.detail : result.cause}` }))
  }
  if (result.status === 404) return Effect.succeed({ phone, reachable: false, features: [] })
  if (result.status !== 200) return Effect.fail(new GatewayUnavailable({ message: `capability check answered HTTP ${result.status}` }))
  try {
    const parsed = JSON.parse(result.body) as { features?: unknown }
    const features = Array.isArray(parsed?.features) ? parsed.features.filter((f): f is string => typeof f === "string") : []
    return Effect.succeed({ phone, reachable: true, features })
  } catch {
    return Effect.fail(new GatewayUnavailable({ message: "capability check answered with a body that is not JSON" }))
  }
}
