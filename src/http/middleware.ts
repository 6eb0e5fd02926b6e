import { FileSystem, HttpIncomingMessage, HttpLayerRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { SqlError } from "@effect/sql/SqlError"
import { Cause, Context, Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { NatsUnavailable } from "../bus/Nats.ts"
import { ServiceUnavailable } from "../domain/errors.ts"
import { unstorableText } from "../domain/storable.ts"
import { envelope } from "./errors.ts"
import { recordRequest } from "./HttpMetrics.ts"
import { RequestState, type RequestStateShape } from "./RequestState.ts"
import {
  BODY_DEADLINE_MS,
  BODY_IDLE_MS,
  hasBody,
  isJsonContentType,
  MAX_BODY_BYTES,
  readJsonBody,
  readWholeBody,
  streamsOwnBody,
  takesRawBody,
  withBody
} from "./requestBody.ts"

const BODY_LIMIT = Option.some(FileSystem.Size(MAX_BODY_BYTES))

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * The outermost layer of every request: request id (taken from `x-request-id` when sane,
 * generated otherwise) on the response and on every log line of the request, the size limit
 * checked from Content-Length before the body is read, the error envelope for whatever the routes
 * did not answer themselves, the per-route metrics and an access log line (debug; warning for a 5xx). It runs on every
 * request, so it is written as a few plain steps: each Effect operation here costs throughput.
 */
export { MAX_BODY_BYTES }

/** How long a request body may take (requestBody.ts): idle, and in all. */
export interface BodyTimeouts {
  readonly idleMs: number
  readonly deadlineMs: number
}

export const DEFAULT_BODY_TIMEOUTS: BodyTimeouts = { idleMs: BODY_IDLE_MS, deadlineMs: BODY_DEADLINE_MS }

export const requestMiddleware = (timeouts: BodyTimeouts = DEFAULT_BODY_TIMEOUTS) =>
  HttpLayerRouter.middleware(
    (app) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const given = request.headers["x-request-id"]
        const requestId = given !== undefined && REQUEST_ID.test(given) ? given : randomUUID()
        return Effect.annotateLogs(answer(app, request, requestId, timeouts), "request_id", requestId)
      }),
    { global: true }
  )

const PUBLIC_PREFIX = "/api/v1/public/"

/**
 * Answers of the public messaging API carry Interakt's `result` beside Herald's `success`
 * (docs/whatsapp.md): its own handlers say it, and this adds it to the envelopes built before or
 * around them (credentials, plan, decoding, 404, 503), so no error shape is written twice.
 */
const withResultField = (request: HttpServerRequest.HttpServerRequest, response: HttpServerResponse.HttpServerResponse) => {
  if (!request.url.startsWith(PUBLIC_PREFIX) || response.body._tag !== "Uint8Array" || response.status < 400) return response
  try {
    const parsed = JSON.parse(new TextDecoder().decode(response.body.body)) as Record<string, unknown>
    if (typeof parsed !== "object" || parsed === null || "result" in parsed || typeof parsed.success !== "boolean") return response
    return HttpServerResponse.unsafeJson({ result: parsed.success, ...parsed }, { status: response.status, headers: response.headers })
  } catch {
    return response
  }
}

const answer = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  request: HttpServerRequest.HttpServerRequest,
  requestId: string,
  timeouts: BodyTimeouts
) => {
  const state: RequestStateShape = { route: "unmatched", retryAfter: undefined }
  const started = performance.now()
  const finish = (response: HttpServerResponse.HttpServerResponse) => {
    const seconds = (performance.now() - started) / 1000
    recordRequest(request.method, state.route, response.status, seconds)
    let answered = HttpServerResponse.setHeader(withResultField(request, response), "x-request-id", requestId)
    if (state.retryAfter !== undefined) answered = HttpServerResponse.setHeader(answered, "retry-after", String(state.retryAfter))
    const line = { method: request.method, route: state.route, status: response.status, ms: Math.round(seconds * 1000) }
    return Effect.as(response.status >= 500 ? Effect.logWarning("request answered", line) : Effect.logDebug("request answered", line), answered)
  }
  const run = (readable: HttpServerRequest.HttpServerRequest) =>
    app.pipe(
      // One context for everything the request adds: each provide copies the fiber's context.
      Effect.provide(
        Context.make(RequestState, state).pipe(
          Context.add(HttpIncomingMessage.MaxBodySize, BODY_LIMIT),
          Context.add(HttpServerRequest.HttpServerRequest, readable)
        )
      ),
      Effect.catchAllCause((cause) => errorToResponse(cause, request)),
      Effect.flatMap(finish)
    )
  if (streamsOwnBody(request) || !hasBody(request)) return run(request)
  if (Number(request.headers["content-length"] ?? 0) > MAX_BODY_BYTES) return finish(tooLarge())
  return Effect.flatMap(readWholeBody(request, { maxBytes: MAX_BODY_BYTES, ...timeouts }), (read) => {
    switch (read._tag) {
      case "TooLarge":
        return finish(tooLarge())
      case "Stalled":
        return finish(stalled(read.received))
      case "Aborted":
        return finish(envelope(400, "invalid_request", "the request body was cut off before its end", { errors: [] }))
      case "Complete": {
        if (read.body.length === 0 || takesRawBody(request)) return run(withBody(request, read.body))
        const contentType = request.headers["content-type"]
        if (!isJsonContentType(contentType)) return finish(unsupportedType(contentType))
        const json = readJsonBody(read.body.toString("utf8"))
        if (json._tag === "Unreadable") return finish(invalid("", `the request body is not valid JSON (${json.reason})`, "request body is not valid JSON"))
        if (json._tag === "Unstorable") return finish(invalid(json.issue.path, json.issue.message))
        return run(withBody(request, read.body, json))
      }
    }
  })
}

/** A 400 `invalid_request` naming one field (`""` for the body as a whole). */
const invalid = (path: string, message: string, summary = path === "" ? message : `${path}: ${message}`) =>
  envelope(400, "invalid_request", summary, { errors: [{ path, message }] })

const stalled = (received: number) =>
  HttpServerResponse.setHeader(
    envelope(408, "request_timeout", `the request body stopped arriving (${received} bytes in); nothing was done`),
    "connection",
    "close"
  )

const unsupportedType = (contentType: string | undefined) =>
  envelope(415, "unsupported_media_type", `this route takes a JSON body (Content-Type: application/json), not ${contentType}`)

/**
 * Applied to every route: tells the outer middleware which pattern matched, and refuses a path
 * parameter or query value that cannot be stored (a NUL, an unpaired surrogate) with a 400 naming
 * it, before any handler looks it up.
 */
export const RouteLabelMiddleware = HttpLayerRouter.middleware((app) =>
  Effect.contextWithEffect((context: Context.Context<never>) => {
    const route = Context.unsafeGet(context as Context.Context<HttpLayerRouter.RouteContext>, HttpLayerRouter.RouteContext)
    const state = Context.getOption(context as Context.Context<RequestState>, RequestState)
    if (Option.isSome(state)) state.value.route = route.route.path
    for (const [name, value] of Object.entries(route.params)) {
      const why = value === undefined ? undefined : unstorableText(value)
      if (why !== undefined) return Effect.succeed(invalid(name, why))
    }
    const search = Context.unsafeGet(context as Context.Context<HttpServerRequest.ParsedSearchParams>, HttpServerRequest.ParsedSearchParams)
    for (const [name, value] of Object.entries(search)) {
      for (const one of typeof value === "string" ? [value] : value) {
        const why = unstorableText(one) ?? unstorableText(name)
        if (why !== undefined) return Effect.succeed(invalid(name, why))
      }
    }
    return app
  })
)

const tooLarge = () => envelope(413, "payload_too_large", `request body exceeds ${MAX_BODY_BYTES} bytes`)

const errorToResponse = (cause: Cause.Cause<unknown>, request: HttpServerRequest.HttpServerRequest) => {
  if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
  const failure = Option.getOrUndefined(Cause.failureOption(cause))
  if (failure instanceof HttpServerError.RouteNotFound) {
    return Effect.succeed(envelope(404, "not_found", `no route for ${request.method} ${request.url.split("?")[0]}`))
  }
  // HttpApi reads bodies with `orDie`, so an unreadable or oversized body arrives as a defect.
  const unreadable = [failure, ...Cause.defects(cause)].find((e) => e instanceof HttpServerError.RequestError)
  if (unreadable instanceof HttpServerError.RequestError) {
    const why = String((unreadable.cause as Error | undefined)?.message ?? "")
    if (why.includes("maxBytes exceeded")) return Effect.succeed(tooLarge())
    return Effect.succeed(
      envelope(400, "invalid_request", "request body is not valid JSON", { errors: [{ path: "", message: why || "unreadable body" }] })
    )
  }
  if (failure instanceof HttpApiDecodeError) {
    // A decode failure of a route outside HttpApi's error encoding.
    return Effect.succeed(envelope(400, "invalid_request", failure.message, { errors: [] }))
  }
  const unavailable = dependencyDown(cause)
  if (unavailable !== undefined) {
    return Effect.as(
      Effect.logWarning("dependency unavailable", { reason: unavailable }),
      envelope(503, "service_unavailable", unavailable)
    )
  }
  return Effect.as(
    Effect.logError("request failed", cause),
    envelope(500, "internal_error", "internal error")
  )
}

// pg error classes 08 (connection exception) and 57P (operator intervention: shutdown, crash),
// 53300 too_many_connections, and the socket errors of an unreachable server.
const PG_UNAVAILABLE = /^(08|57P|53300)/
const SOCKET_ERRORS = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENOTFOUND", "EAI_AGAIN"])

/** Whether a failure means a dependency is unreachable (→ 503), with a reason for the client. */
export const dependencyDown = (cause: Cause.Cause<unknown>): string | undefined => {
  for (const error of [...Cause.failures(cause), ...Cause.defects(cause)]) {
    if (error instanceof ServiceUnavailable) return error.message
    if (error instanceof NatsUnavailable) return "message bus unavailable"
    if (error instanceof SqlError && isConnectionProblem(error.cause)) return "database unavailable"
  }
  return undefined
}

const isConnectionProblem = (cause: unknown): boolean => {
  const e = cause as { code?: string; message?: string } | undefined
  if (e === undefined || e === null) return false
  if (typeof e.code === "string" && (PG_UNAVAILABLE.test(e.code) || SOCKET_ERRORS.has(e.code))) return true
  const message = String(e.message ?? "")
  return /Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(message)
}
