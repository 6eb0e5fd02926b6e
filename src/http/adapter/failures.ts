import { HttpServerError, HttpServerResponse } from "@effect/platform"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { SqlError } from "@effect/sql/SqlError"
import { Cause, Effect, Option } from "effect"
import { NatsUnavailable } from "../../bus/Nats.ts"
import { ServiceUnavailable } from "../../domain/errors.ts"
import { envelope } from "../errors.ts"
import { MAX_BODY_BYTES } from "../requestBody.ts"

/** The envelopes the edge answers itself, and the mapping of failures no route answered. */

/** A 400 `invalid_request` naming one field (`""` for the body as a whole). */
export const invalid = (path: string, message: string, summary = path === "" ? message : `${path}: ${message}`) =>
  envelope(400, "invalid_request", summary, { errors: [{ path, message }] })

export const stalled = (received: number) =>
  HttpServerResponse.setHeader(
    envelope(408, "request_timeout", `the request body stopped arriving (${received} bytes in); nothing was done`),
    "connection",
    "close"
  )

export const unsupportedType = (contentType: string | undefined) =>
  envelope(415, "unsupported_media_type", `this route takes a JSON body (Content-Type: application/json), not ${contentType}`)

export const tooLarge = () => envelope(413, "payload_too_large", `request body exceeds ${MAX_BODY_BYTES} bytes`)

/** No route for the request's method and path: 405 with `Allow` when the path has routes for other methods. */
export const noRoute = (method: string, url: string, allowed: ReadonlyArray<string>) => {
  const path = url.split("?")[0]
  if (allowed.length === 0) return envelope(404, "not_found", `no route for ${method} ${path}`)
  return HttpServerResponse.setHeader(
    envelope(405, "method_not_allowed", `${path} does not take ${method}; it takes ${allowed.join(", ")}`, { allowed_methods: allowed }),
    "allow",
    allowed.join(", ")
  )
}

/**
 * The answer to whatever a route did not answer itself: HttpApi encodes the errors its endpoints
 * declare; this maps the rest (unreadable bodies, a dependency down, a response used as an error,
 * defects) to the envelope, logging what is Herald's fault.
 */
export const errorToResponse = (cause: Cause.Cause<unknown>): Effect.Effect<HttpServerResponse.HttpServerResponse, unknown> => {
  if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
  const failure = Option.getOrUndefined(Cause.failureOption(cause))
  if (HttpServerResponse.isServerResponse(failure)) return Effect.succeed(failure)
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
    if (error instanceof NatsUnavailable) {
      return error.mayHaveStored === true
        ? "message bus unavailable: the request may still complete (its command went unanswered); retry with the same Idempotency-Key"
        : "message bus unavailable"
    }
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
