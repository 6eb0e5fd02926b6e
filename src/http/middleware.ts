import { FileSystem, HttpIncomingMessage, HttpLayerRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { SqlError } from "@effect/sql/SqlError"
import { Cause, Context, Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { NatsUnavailable } from "../bus/Nats.ts"
import { ServiceUnavailable } from "../domain/errors.ts"
import { bufferChunkedBody, isChunkedUpload, MAX_BODY_BYTES, streamsOwnBody } from "./bodyLimit.ts"
import { envelope } from "./errors.ts"
import { recordRequest } from "./HttpMetrics.ts"
import { RequestState, type RequestStateShape } from "./RequestState.ts"

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

export const RequestMiddleware = HttpLayerRouter.middleware(
  (app) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const given = request.headers["x-request-id"]
      const requestId = given !== undefined && REQUEST_ID.test(given) ? given : randomUUID()
      return Effect.annotateLogs(answer(app, request, requestId), "request_id", requestId)
    }),
  { global: true }
)

const answer = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  request: HttpServerRequest.HttpServerRequest,
  requestId: string
) => {
  const state: RequestStateShape = { route: "unmatched", retryAfter: undefined }
  const started = performance.now()
  const finish = (response: HttpServerResponse.HttpServerResponse) => {
    const seconds = (performance.now() - started) / 1000
    recordRequest(request.method, state.route, response.status, seconds)
    let answered = HttpServerResponse.setHeader(response, "x-request-id", requestId)
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
  if (streamsOwnBody(request)) return run(request)
  if (Number(request.headers["content-length"] ?? 0) > MAX_BODY_BYTES) return finish(tooLarge())
  if (!isChunkedUpload(request)) return run(request)
  return Effect.flatMap(bufferChunkedBody(request), (readable) => readable === undefined ? finish(tooLarge()) : run(readable))
}

/** Applied to every route: tells the outer middleware which pattern matched. */
export const RouteLabelMiddleware = HttpLayerRouter.middleware((app) =>
  Effect.contextWithEffect((context: Context.Context<never>) => {
    const state = Context.getOption(context as Context.Context<RequestState>, RequestState)
    if (Option.isSome(state)) state.value.route = Context.unsafeGet(context as Context.Context<HttpLayerRouter.RouteContext>, HttpLayerRouter.RouteContext).route.path
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
