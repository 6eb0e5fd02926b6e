import { HttpServerError, type HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Stream } from "effect"
import type { IncomingMessage } from "node:http"

/** Largest request body accepted (DESIGN.md): 10 MB. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024

/**
 * Reads a chunked (no Content-Length) body up to the limit. The platform's own limit destroys the
 * socket when it trips, so the client sees a reset instead of 413; reading it here lets the server
 * stop at the limit and still answer. Within the limit, the request is handed on with its body
 * already in memory; past it, `undefined`.
 */
export const bufferChunkedBody = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.async<HttpServerRequest.HttpServerRequest | undefined>((resume) => {
    const source = NodeHttpServerRequest.toIncomingMessage(request)
    const chunks: Array<Buffer> = []
    let size = 0
    const cleanup = () => {
      source.off("data", onData).off("end", onEnd).off("error", onError)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) {
        cleanup()
        discardRest(source)
        resume(Effect.succeed(undefined))
      } else chunks.push(chunk)
    }
    const onEnd = () => {
      cleanup()
      resume(Effect.succeed(withBody(request, Buffer.concat(chunks))))
    }
    const onError = () => {
      cleanup()
      resume(Effect.succeed(withBody(request, Buffer.alloc(0))))
    }
    source.on("data", onData).on("end", onEnd).on("error", onError)
    return Effect.sync(cleanup)
  })

/**
 * Reads and drops the rest of an oversized upload, so the client, still writing, can read the 413
 * instead of a connection reset (closing a socket with unread data sends RST). A client that keeps
 * streaming is cut off after a grace period.
 */
export const discardRest = (source: IncomingMessage) => {
  const cutOff = setTimeout(() => source.destroy(), 10_000).unref()
  source.once("end", () => clearTimeout(cutOff)).once("close", () => clearTimeout(cutOff)).resume()
}

/** The request with its body served from memory; everything else is the original's. */
const withBody = (request: HttpServerRequest.HttpServerRequest, body: Buffer): HttpServerRequest.HttpServerRequest => {
  const text = body.toString("utf8")
  return Object.create(request, {
    text: { get: () => Effect.succeed(text) },
    json: {
      get: () =>
        Effect.try({
          try: () => (text === "" ? null : JSON.parse(text)),
          catch: (cause) => new HttpServerError.RequestError({ request, reason: "Decode", cause })
        })
    },
    arrayBuffer: { get: () => Effect.succeed(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength)) },
    stream: { get: () => Stream.succeed(new Uint8Array(body)) }
  })
}

/**
 * Routes that read their own body as a stream, under a limit of their own: the contact import
 * (IMPORT_MAX_BYTES, src/contacts/importLimits.ts). The middleware neither holds their
 * Content-Length to MAX_BODY_BYTES nor buffers their chunked bodies.
 */
const STREAMED_BODY_ROUTES: ReadonlyArray<{ readonly method: string; readonly path: RegExp }> = [
  { method: "POST", path: /^\/api\/v1\/rcs\/contact-lists\/[^/?]+\/contacts(?:\?|$)/ }
]

export const streamsOwnBody = (request: HttpServerRequest.HttpServerRequest) =>
  STREAMED_BODY_ROUTES.some((route) => route.method === request.method && route.path.test(request.url))

export const isChunkedUpload = (request: HttpServerRequest.HttpServerRequest) =>
  request.headers["content-length"] === undefined && request.headers["transfer-encoding"] !== undefined
