import { Effect, type Scope } from "effect"
import { type Exchange, exchange, gatewayPool } from "../rbm/exchange.ts"
import type { GatewayErrorRecord } from "../../domain/gatewayError.ts"
import { fromMetaError } from "./errors.ts"
import type { WaGatewayApi, WaSendOutcome } from "../wa.ts"

/** The Graph API version Herald speaks (Meta's OpenAPI document in vendor/meta is v23.0). */
export const GRAPH_VERSION = "v23.0"

export type CloudTransport = (method: "GET" | "POST" | "DELETE", path: string, body: Buffer | undefined) => Effect.Effect<Exchange>

export interface CloudApiOptions {
  /** Graph API base (https://graph.facebook.com) or the simulator's URL. */
  readonly baseUrl: string
  readonly accessToken: () => string
  readonly timeoutMs: number
  readonly connections?: number
  /** Carries the exchanges instead of HTTP: the simulator in the same process. */
  readonly transport?: CloudTransport
}

const DEFAULT_CONNECTIONS = 256

/** Meta's ids are digits; anything else is escaped rather than allowed to change the path. */
const idSegment = (id: string) => (/^[0-9A-Za-z_-]{1,64}$/.test(id) ? id : encodeURIComponent(id))

/** Sends and template submissions against the WhatsApp Cloud API (or the simulator speaking it). */
export const makeCloudApiGateway = (options: CloudApiOptions): Effect.Effect<WaGatewayApi, never, Scope.Scope> =>
  Effect.gen(function*() {
    const base = new URL(options.baseUrl)
    const prefix = `${base.pathname.replace(/\/+$/, "")}/${GRAPH_VERSION}`
    const timeoutMs = options.timeoutMs
    const pool = options.transport !== undefined ? undefined : yield* gatewayPool(base.origin, options.connections ?? DEFAULT_CONNECTIONS, timeoutMs)

    const call = (method: "GET" | "POST" | "DELETE", path: string, body?: Buffer): Effect.Effect<Exchange> =>
      pool === undefined ? options.transport!(method, prefix + path, body) : Effect.async<Exchange>((resume) => {
        const headers: Record<string, string> = {
          authorization: `Bearer ${options.accessToken()}`,
          "user-agent": "Herald-WhatsApp/1",
          ...(body !== undefined ? { "content-type": "application/json" } : {})
        }
        const cancel = exchange(pool, { method, path: prefix + path, headers, ...(body ? { body } : {}) }, timeoutMs, (result) => resume(Effect.succeed(result)))
        return Effect.sync(cancel)
      })

    const send = (phoneNumberId: string, body: Record<string, unknown>, messageId: string) =>
      Effect.map(call("POST", `/${idSegment(phoneNumberId)}/messages`, Buffer.from(JSON.stringify(body))), (result) => sendOutcome(result, messageId, timeoutMs))

    const submitTemplate = (wabaId: string, definition: Record<string, unknown>) =>
      Effect.map(call("POST", `/${idSegment(wabaId)}/message_templates`, Buffer.from(JSON.stringify(definition))), (result) => {
        if (result._tag !== "Answered") {
          return { _tag: "Refused", reason: `the gateway did not answer: ${result._tag === "Lost" ? result.detail : result.cause}`, unavailable: true } as const
        }
        const answer = parseJson(result.body) as { id?: unknown; status?: unknown } | undefined
        if (result.status >= 200 && result.status < 300 && typeof answer?.id === "string") {
          return { _tag: "Submitted", upstreamId: answer.id, status: typeof answer.status === "string" ? answer.status : "PENDING" } as const
        }
        return { _tag: "Refused", reason: fromMetaError(result.status, answer).detail, unavailable: result.status >= 500 } as const
      })

    // By name alone Meta deletes every language of the name; with hsm_id only that one template.
    const deleteTemplate = (wabaId: string, name: string, upstreamId: string | null) =>
      Effect.map(call("DELETE", `/${idSegment(wabaId)}/message_templates?name=${encodeURIComponent(name)}${upstreamId === null ? "" : `&hsm_id=${encodeURIComponent(upstreamId)}`}`), (result) =>
        result._tag === "Answered" && result.status >= 200 && result.status < 300)

    return { send, submitTemplate, deleteTemplate }
  })

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** What an exchange with Meta came to, as the sender actor records it. */
export const sendOutcome = (result: Exchange, messageId: string, timeoutMs: number): WaSendOutcome => {
  switch (result._tag) {
    case "Answered": {
      const body = parseJson(result.body) as { messages?: ReadonlyArray<{ id?: unknown }> } | undefined
      const wamid = body?.messages?.[0]?.id
      if (result.status >= 200 && result.status < 300 && typeof wamid === "string") return { _tag: "Accepted", wamid, at: Date.now() }
      if (result.status >= 200 && result.status < 300) return { _tag: "Unconfirmed", error: waUnconfirmed(messageId, `Meta answered without a message id. ${MAY_ARRIVE}`) }
      return { _tag: "Rejected", error: fromMetaError(result.status, body) }
    }
    case "NotSent":
      return {
        _tag: "Rejected",
        error: {
          success: false,
          message: "gateway unreachable",
          detail: `the request did not leave Herald (${result.cause}); it is sent again`,
          category: "gateway",
          retryable: true
        }
      }
    case "Lost":
      return {
        _tag: "Unconfirmed",
        error: waUnconfirmed(
          messageId,
          `${result.cause === "timeout" ? `no answer within ${timeoutMs} ms` : `the connection closed after the request was sent (${result.detail})`}. ${MAY_ARRIVE}`
        )
      }
  }
}

const MAY_ARRIVE = "The message may still reach the customer; Herald does not send it again (the Cloud API has no idempotency key) and waits for its status."

/** A WhatsApp send that may have reached Meta: never sent again, so never retryable. */
export const waUnconfirmed = (messageId: string, detail: string): GatewayErrorRecord => ({
  success: false,
  message: "send not confirmed",
  detail,
  category: "unknown",
  retryable: false,
  message_id: messageId
})
