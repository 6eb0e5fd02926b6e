import { Effect, Redacted } from "effect"
import type { Readable } from "node:stream"
import { request } from "undici"
import { ServerUnreachable, UsageError } from "./exitCodes.ts"
import { USER_AGENT } from "./version.ts"

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

export interface ClientRequest {
  readonly method: Method
  readonly url: URL
  readonly key: Redacted.Redacted<string>
  readonly body?: string | Buffer | Readable
  readonly contentType?: string
  readonly contentLength?: number
  /** Milliseconds to wait for the answer's headers (0: as long as it takes, for imports). */
  readonly headersTimeoutMs?: number
}

/** A server's answer, read whole (answers are small: uploads go up, reports come back). */
export interface Answer {
  readonly status: number
  readonly contentType: string
  readonly body: Buffer
}

/** A server base URL as `connect --url` takes it: http or https, without a trailing slash. */
export const parseBaseUrl = (value: string) =>
  Effect.gen(function*() {
    const url = URL.canParse(value) ? new URL(value) : undefined
    if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:") || url.username !== "" || url.password !== "") {
      return yield* new UsageError({ message: `--url must be an http or https URL (got ${JSON.stringify(value)})` })
    }
    return `${url.origin}${url.pathname.replace(/\/+$/, "")}`
  })

/**
 * The URL of an API path: `app/me`, `/app/me` and `/api/v1/app/me` (each with or without a query
 * string) all name `<base>/api/v1/app/me`.
 */
export const apiUrl = (base: string, path: string) => {
  let rest = path.replace(/^\/+/, "")
  if (/^api\/v1(?=[/?#]|$)/.test(rest)) rest = rest.slice("api/v1".length).replace(/^\/+/, "")
  return new URL(`${base.replace(/\/+$/, "")}/api/v1/${rest}`)
}

/**
 * One request with the connected key as a Bearer token. Redirects are not followed (the key stays
 * with the server it was given for). A connection that fails (refused, unknown host, reset,
 * time-out) is ServerUnreachable; its message names the server, never the key.
 */
export const send = Effect.fn("ClientHttp.send")(function*(req: ClientRequest) {
  const headers: Record<string, string> = {
    authorization: `Bearer ${Redacted.value(req.key)}`,
    "user-agent": USER_AGENT,
    accept: "application/json"
  }
  if (req.contentType !== undefined) headers["content-type"] = req.contentType
  if (req.contentLength !== undefined) headers["content-length"] = String(req.contentLength)
  return yield* Effect.tryPromise({
    try: async (signal) => {
      const response = await request(req.url, {
        method: req.method,
        headers,
        body: req.body ?? null,
        signal,
        ...(req.headersTimeoutMs !== undefined ? { headersTimeout: req.headersTimeoutMs } : {})
      })
      const body = Buffer.from(await response.body.arrayBuffer())
      const type = response.headers["content-type"]
      return { status: response.statusCode, contentType: Array.isArray(type) ? type.join(", ") : (type ?? ""), body } satisfies Answer
    },
    catch: (error) => new ServerUnreachable({ message: `cannot reach ${req.url.origin}: ${failureCause(error)}` })
  })
})

/** Why a request got no answer, in the connection's words (`connect ECONNREFUSED 127.0.0.1:8080`). */
const failureCause = (error: unknown) =>
  error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error)

/** How long `probe` waits for a server's answer once connected. */
const PROBE_TIMEOUT_MS = 10_000

/**
 * Whether a server answers at `base` at all, before a key is asked for: GET /api/v1/app/me without
 * one (any HTTP answer will do: the key is checked next). Fails with why nothing answered.
 */
export const probe = (base: string) =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await request(apiUrl(base, "app/me"), {
        method: "GET",
        headers: { "user-agent": USER_AGENT, accept: "application/json" },
        signal,
        headersTimeout: PROBE_TIMEOUT_MS,
        bodyTimeout: PROBE_TIMEOUT_MS
      })
      await response.body.dump()
      return response.statusCode
    },
    catch: failureCause
  })

/** The answer's JSON, when it says it is JSON and parses; undefined otherwise. */
export const answerJson = (answer: Answer): unknown => {
  if (!/\bjson\b/i.test(answer.contentType)) return undefined
  try {
    return JSON.parse(answer.body.toString("utf8"))
  } catch {
    return undefined
  }
}

export const isSuccess = (status: number) => status >= 200 && status < 300

/** What GET /api/v1/app/me answers, as far as the client reads it. */
export interface Me {
  readonly account?: { readonly account_id?: unknown; readonly label?: unknown; readonly plan?: unknown }
  readonly code?: unknown
  readonly message?: unknown
}

/** GET /api/v1/app/me with a key (connect checks the key with it; the upgrade prompt names the plan). */
export const fetchMe = (base: string, key: Redacted.Redacted<string>) =>
  Effect.map(send({ method: "GET", url: apiUrl(base, "app/me"), key }), (answer) => ({ answer, me: answerJson(answer) as Me | undefined }))
