import { type HttpApi, HttpLayerRouter, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Context, Effect, Exit, type Fiber, FiberRef, FiberRefs, Layer, LogLevel, Option, Runtime } from "effect"
import { randomUUID } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import { unstorableText } from "../../domain/storable.ts"
import { ContextLogAnnotations } from "../../observability/Logging.ts"
import { parentFrom } from "../../observability/Tracing.ts"
import { envelope } from "../errors.ts"
import { recordRequest } from "../HttpMetrics.ts"
import { answersResult } from "../resultFlag.ts"
import { NodeServer } from "../NodeServer.ts"
import { RetryAfterHint } from "../../ratelimit/RetryAfterHint.ts"
import { RequestState, type RequestStateShape } from "../RequestState.ts"
import {
  BODY_DEADLINE_MS,
  BODY_IDLE_MS,
  type BodyRead,
  hasBody,
  isJsonContentType,
  MAX_BODY_BYTES,
  readBody,
  readJsonBody,
  streamsOwnBody,
  takesRawBody
} from "../requestBody.ts"
import { errorToResponse, invalid, noRoute, stalled, tooLarge, unsupportedType } from "./failures.ts"
import { LeanRequest } from "./LeanRequest.ts"
import { routeContextOf } from "./apiRoutes.ts"
import { LayeredMap } from "./LayeredMap.ts"
import { type RequestRewrite, RequestRewrites } from "./RequestRewrites.ts"
import { type AcceptedQueries, acceptedQueries, unknownQueryParameters } from "./strictQuery.ts"
import { type Route, type RouteMatch, RouteTable, routeTableLayer } from "./RouteTable.ts"
import { writeResponse } from "./writeResponse.ts"

/** Seconds a 503 asks its client to wait: about one NATS leader election, or a database reconnect. */
export const SERVICE_UNAVAILABLE_RETRY_AFTER = 2

/** How long a request body may take (requestBody.ts): idle, and in all. */
export interface BodyTimeouts {
  readonly idleMs: number
  readonly deadlineMs: number
}

export const DEFAULT_BODY_TIMEOUTS: BodyTimeouts = { idleMs: BODY_IDLE_MS, deadlineMs: BODY_DEADLINE_MS }

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** A route's handler as the adapter runs it: every failure it did not answer becomes an envelope. */
const programs = new WeakMap<Route, Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>>()
const programOf = (route: Route) => {
  let program = programs.get(route)
  if (program === undefined) {
    const handler = route.uninterruptible ? route.handler : Effect.interruptible(route.handler)
    program = Effect.catchAllCause(handler as Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>, errorToResponse)
    programs.set(route, program)
  }
  return program
}

/**
 * The request's span, as OpenTelemetry's HTTP semantic conventions name it (`POST /api/v1/…`, the
 * route's pattern, never the raw path), continuing the caller's trace when it sent `traceparent`.
 */
const serverSpan = (req: IncomingMessage, route: string, program: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>) =>
  program.pipe(
    Effect.tap((response) => Effect.annotateCurrentSpan("http.response.status_code", response.status)),
    Effect.withSpan(`${req.method} ${route}`, {
      kind: "server",
      parent: Option.getOrUndefined(parentFrom(typeof req.headers.traceparent === "string" ? req.headers.traceparent : undefined)),
      attributes: {
        "http.request.method": req.method,
        "http.route": route,
        "url.path": req.url!.split("?")[0],
        "url.scheme": "http",
        "server.port": req.socket.localPort,
        "user_agent.original": req.headers["user-agent"],
        "network.peer.address": req.socket.remoteAddress
      }
    })
  )

/** The first path parameter or query value that cannot be stored (a NUL, an unpaired surrogate). */
const unstorableInput = (match: RouteMatch): HttpServerResponse.HttpServerResponse | undefined => {
  for (const name in match.params) {
    const value = match.params[name]
    const why = value === undefined ? undefined : unstorableText(value)
    if (why !== undefined) return invalid(name, why)
  }
  for (const name in match.searchParams) {
    const value = match.searchParams[name]!
    for (const one of typeof value === "string" ? [value] : value) {
      const why = unstorableText(one) ?? unstorableText(name)
      if (why !== undefined) return invalid(name, why)
    }
  }
  return undefined
}

/**
 * The node:http request listener of an API node (docs/http.md). Per request, in plain code: the
 * request id, the route match, the body read whole under the limit and checked (JSON, nesting,
 * storable strings), then one fiber on the node's runtime running the route's handler with the
 * request's services in its context, and the answer written with one `writeHead` + `end`,
 * counted in the metrics. No platform middleware, no per-request layer, Scope or `provide`: the
 * platform's stack cost about ten times a bare node:http route's CPU (docs/benchmarks.md).
 */
export const makeRequestListener = (
  table: RouteTable["Type"],
  runtime: Runtime.Runtime<never>,
  timeouts: BodyTimeouts,
  rewrites: ReadonlyArray<RequestRewrite> = [],
  queries: AcceptedQueries = new Map()
) => {
  const base = runtime.context.unsafeMap
  // A route's handler runs in the context it was built in (an HttpApi group's services) with the
  // node's on top, as the platform merged them per request; merged here once per route.
  const bases = new WeakMap<Route, ReadonlyMap<string, unknown>>()
  const baseOf = (route: Route) => {
    let merged = bases.get(route)
    if (merged === undefined) {
      const own = routeContextOf(route)
      merged = own === undefined ? base : new Map([...own.unsafeMap, ...base])
      bases.set(route, merged)
    }
    return merged
  }
  const debug = LogLevel.greaterThanEqual(LogLevel.Debug, FiberRefs.getOrDefault(runtime.fiberRefs, FiberRef.currentMinimumLogLevel))
  // Decided once: with tracing off a request costs no span at all.
  const tracing = FiberRefs.getOrDefault(runtime.fiberRefs, FiberRef.currentTracerEnabled)
  const runLog = Runtime.runFork(runtime)

  const respond = (
    req: IncomingMessage,
    res: ServerResponse,
    requestId: string,
    state: RequestStateShape,
    started: number,
    response: HttpServerResponse.HttpServerResponse
  ) => {
    const extra: Record<string, string> = { "x-request-id": requestId }
    if (state.retryAfter !== undefined) extra["retry-after"] = String(state.retryAfter)
    // A 503 is a dependency away (Postgres restarting, a NATS leader election) or a node not ready:
    // every one says when to come back, as RFC 9110 suggests, so clients retry instead of failing.
    else if (response.status === 503 && response.headers["retry-after"] === undefined) extra["retry-after"] = String(SERVICE_UNAVAILABLE_RETRY_AFTER)
    const answered = response.status >= 400 && answersResult(req.method!, req.url!) ? withResultField(response) : response
    writeResponse(req, res, answered, extra, runLog)
    const seconds = (performance.now() - started) / 1000
    recordRequest(req.method!, state.route, response.status, seconds)
    if (response.status >= 500 || debug) {
      const line = { method: req.method, route: state.route, status: response.status, ms: Math.round(seconds * 1000), request_id: requestId }
      runLog(response.status >= 500 ? Effect.logWarning("request answered", line) : Effect.logDebug("request answered", line))
    }
  }

  const run = (
    req: IncomingMessage,
    res: ServerResponse,
    requestId: string,
    state: RequestStateShape,
    started: number,
    match: RouteMatch,
    request: LeanRequest
  ) => {
    const context = new LayeredMap(baseOf(match.route))
    context.set(ContextLogAnnotations.key, [["request_id", requestId]])
    context.set(HttpServerRequest.HttpServerRequest.key, request)
    context.set(HttpServerRequest.ParsedSearchParams.key, match.searchParams)
    context.set(HttpLayerRouter.RouteContext.key, { [HttpRouter.RouteContextTypeId]: HttpRouter.RouteContextTypeId, route: match.route, params: match.params })
    context.set(RequestState.key, state)
    context.set(RetryAfterHint.key, state)
    const program = tracing ? serverSpan(req, match.route.path, programOf(match.route)) : programOf(match.route)
    const fiber = Runtime.runFork(Runtime.make({ context: Context.unsafeMake<never>(context as Map<string, unknown>), fiberRefs: runtime.fiberRefs, runtimeFlags: runtime.runtimeFlags }))(program)
    const settle = (exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>) => {
      if (Exit.isSuccess(exit)) return respond(req, res, requestId, state, started, exit.value)
      // Interrupted: the client went away, or the node is stopping; nothing is left to answer.
      if (Cause.isInterruptedOnly(exit.cause)) return
      respond(req, res, requestId, state, started, envelope(500, "internal_error", "internal error"))
    }
    const done = fiber.unsafePoll()
    if (done !== null) return settle(done)
    // Only a handler that suspends needs to hear of a client that goes away.
    fiber.addObserver(settle)
    res.once("close", () => {
      if (!res.writableEnded) (fiber as Fiber.RuntimeFiber<unknown, unknown>).unsafeInterruptAsFork(fiber.id())
    })
  }

  const runRewrite = Runtime.runCallback(runtime)

  const proceed = (req: IncomingMessage, res: ServerResponse, requestId: string, state: RequestStateShape, started: number) => {
    const method = req.method!
    const url = req.url!
    const match = table.find(method, url)
    const answer = (response: HttpServerResponse.HttpServerResponse) => respond(req, res, requestId, state, started, response)
    if (match !== undefined) state.route = match.route.path

    const dispatch = (body: Buffer | undefined, json: { readonly value: unknown } | undefined) => {
      if (match === undefined) return answer(noRoute(method, url, table.allowed(url)))
      const refused = unknownQueryParameters(queries, method, match.route, match.searchParams) ?? unstorableInput(match)
      if (refused !== undefined) return answer(refused)
      run(req, res, requestId, state, started, match, new LeanRequest(req, res, url, body, json))
    }

    if (!hasBody(req.headers) || (match !== undefined && streamsOwnBody(method, url))) return dispatch(undefined, undefined)
    if (Number(req.headers["content-length"] ?? 0) > MAX_BODY_BYTES) return answer(tooLarge())
    readBody(req, { maxBytes: MAX_BODY_BYTES, ...timeouts }, (read: BodyRead) => {
      switch (read._tag) {
        case "TooLarge":
          return answer(tooLarge())
        case "Stalled":
          return answer(stalled(read.received))
        case "Aborted":
          return answer(envelope(400, "invalid_request", "the request body was cut off before its end", { errors: [] }))
        case "Complete": {
          if (match === undefined || read.body.length === 0 || takesRawBody(method, url)) return dispatch(read.body, undefined)
          const contentType = req.headers["content-type"]
          if (!isJsonContentType(contentType)) return answer(unsupportedType(contentType))
          const json = readJsonBody(read.body.toString("utf8"))
          if (json._tag === "Unreadable") return answer(invalid("", `the request body is not valid JSON (${json.reason})`, "request body is not valid JSON"))
          if (json._tag === "Unstorable") return answer(invalid(json.issue.path, json.issue.message))
          return dispatch(read.body, json)
        }
      }
    })
  }

  return (req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now()
    const given = req.headers["x-request-id"]
    const requestId = typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID()
    const state: RequestStateShape = { route: "unmatched", retryAfter: undefined }
    const rewrite = rewrites.length === 0 ? undefined : rewrites.find((r) => req.url!.startsWith(r.prefix))
    if (rewrite === undefined) return proceed(req, res, requestId, state, started)
    runRewrite(rewrite.rewrite(req), {
      onExit: (exit) => {
        if (Exit.isFailure(exit)) return respond(req, res, requestId, state, started, envelope(500, "internal_error", "internal error"))
        if (exit.value !== undefined) return respond(req, res, requestId, state, started, exit.value)
        proceed(req, res, requestId, state, started)
      }
    })
  }
}

/**
 * Answers of the public messaging API carry Interakt's `result` beside Herald's `success`
 * (docs/whatsapp.md): its own handlers say it, and this adds it to the envelopes built before or
 * around them (credentials, plan, decoding, 404, 503), so no error shape is written twice.
 */
const withResultField = (response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse => {
  if (response.body._tag !== "Uint8Array") return response
  try {
    const parsed = JSON.parse(Buffer.from(response.body.body).toString("utf8")) as Record<string, unknown>
    if (typeof parsed !== "object" || parsed === null || "result" in parsed || typeof parsed.success !== "boolean") return response
    return HttpServerResponse.unsafeJson({ result: parsed.success, ...parsed }, { status: response.status, headers: response.headers })
  } catch {
    return response
  }
}

/**
 * Serves `routes` (layers that add routes to the platform's router service, as HttpApi groups and
 * `HttpLayerRouter.add` do) on the node's server. The listener is never removed: on shutdown Node's
 * `server.close` stops accepting and waits for requests in flight, which must still be answered.
 * The operations `declared` declares refuse query parameters they do not take (strictQuery.ts).
 */
export const serveRoutes = <A, E, R>(
  routes: Layer.Layer<A, E, R>,
  timeouts: BodyTimeouts = DEFAULT_BODY_TIMEOUTS,
  declared?: HttpApi.HttpApi.Any
): Layer.Layer<never, HttpLayerRouter.Request.Without<E>, NodeServer | Exclude<HttpLayerRouter.Request.Without<R> | HttpLayerRouter.Request.Only<"Requires", R> | HttpLayerRouter.Request.Only<"GlobalRequires", R>, HttpLayerRouter.HttpRouter>> =>
  Layer.scopedDiscard(Effect.gen(function*() {
    const table = yield* RouteTable
    const { server } = yield* NodeServer
    const runtime = yield* Effect.runtime<never>()
    const rewrites = yield* Effect.serviceOption(RequestRewrites)
    const queries = declared === undefined ? new Map() : acceptedQueries(declared)
    server.on("request", makeRequestListener(table, runtime, timeouts, Option.getOrElse(rewrites, () => []), queries))
  })).pipe(Layer.provide(routes.pipe(Layer.provideMerge(routeTableLayer())))) as any
