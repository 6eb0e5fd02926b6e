import { Cookies, Headers, HttpIncomingMessage, HttpServerError, HttpServerRequest, UrlParams } from "@effect/platform"
import { NodeStream } from "@effect/platform-node"
import { Effect, Inspectable, Option, Stream } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"

const NO_BODY = Buffer.alloc(0)

/**
 * The request a handler sees on the lean adapter: node's own request, with its body already read
 * at the edge (or, for a route that streams its own body, left unread in `source`). It reads the
 * node request's fields directly; the platform's request builds a Headers object and a cached
 * body Effect on each use.
 */
export class LeanRequest extends Inspectable.Class implements HttpServerRequest.HttpServerRequest {
  readonly [HttpServerRequest.TypeId]: HttpServerRequest.TypeId = HttpServerRequest.TypeId
  readonly [HttpIncomingMessage.TypeId]: HttpIncomingMessage.TypeId = HttpIncomingMessage.TypeId
  readonly method: HttpServerRequest.HttpServerRequest["method"]
  private textCache: string | undefined

  constructor(
    readonly source: IncomingMessage,
    readonly response: ServerResponse,
    readonly url: string,
    /** The whole body, read at the edge; undefined when the route streams its own. */
    private readonly body: Buffer | undefined,
    /** The JSON value of the body, parsed and checked at the edge. */
    private readonly parsed: { readonly value: unknown } | undefined,
    readonly headers: Headers.Headers = source.headers as Headers.Headers
  ) {
    super()
    this.method = source.method as HttpServerRequest.HttpServerRequest["method"]
  }

  get originalUrl() {
    return this.source.url ?? this.url
  }

  get remoteAddress() {
    return Option.fromNullable(this.source.socket.remoteAddress)
  }

  private cookieCache: Record<string, string> | undefined

  get cookies() {
    return (this.cookieCache ??= Cookies.parseHeader(this.headers.cookie ?? ""))
  }

  /** The body as received, when the edge read it (for an Idempotency-Key's fingerprint). */
  get rawBody(): Buffer | undefined {
    return this.body
  }

  private get bytes() {
    return this.body ?? NO_BODY
  }

  private textOf() {
    return (this.textCache ??= this.bytes.toString("utf8"))
  }

  private decodeError(cause: unknown): HttpServerError.RequestError {
    return new HttpServerError.RequestError({ request: this, reason: "Decode", cause })
  }

  get text(): Effect.Effect<string, HttpServerError.RequestError> {
    if (this.body === undefined) return NodeStream.toString(() => this.source, { onFailure: (cause) => this.decodeError(cause) })
    return Effect.sync(() => this.textOf())
  }

  get json(): Effect.Effect<unknown, HttpServerError.RequestError> {
    if (this.parsed !== undefined) return Effect.succeed(this.parsed.value)
    return Effect.flatMap(this.text, (text) =>
      Effect.try({ try: () => (text === "" ? null : JSON.parse(text)), catch: (cause) => this.decodeError(cause) }))
  }

  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpServerError.RequestError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.try({ try: () => UrlParams.fromInput(new URLSearchParams(text)), catch: (cause) => this.decodeError(cause) }))
  }

  get arrayBuffer() {
    const bytes = this.bytes
    return Effect.succeed(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer)
  }

  get stream(): Stream.Stream<Uint8Array, HttpServerError.RequestError> {
    if (this.body === undefined) return NodeStream.fromReadable(() => this.source, (cause) => this.decodeError(cause))
    return Stream.succeed(new Uint8Array(this.body))
  }

  get multipart(): HttpServerRequest.HttpServerRequest["multipart"] {
    return Effect.die("multipart bodies are not taken by any Herald route")
  }

  get multipartStream(): HttpServerRequest.HttpServerRequest["multipartStream"] {
    return Stream.die("multipart bodies are not taken by any Herald route")
  }

  get upgrade(): HttpServerRequest.HttpServerRequest["upgrade"] {
    return Effect.fail(new HttpServerError.RequestError({ request: this, reason: "Decode", description: "WebSocket upgrades are claimed by path (NodeServer)" }))
  }

  modify(options: { readonly url?: string; readonly headers?: Headers.Headers; readonly remoteAddress?: string }): HttpServerRequest.HttpServerRequest {
    return new LeanRequest(this.source, this.response, options.url ?? this.url, this.body, this.parsed, options.headers ?? this.headers)
  }

  toJSON() {
    return { _id: "@effect/platform/HttpServerRequest", method: this.method, url: this.originalUrl }
  }
}
