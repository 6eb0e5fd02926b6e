import type { IncomingMessage } from "node:http"
import { mediaTypeOf } from "../domain/mediaType.ts"
import { firstUnstorable, NESTING_MAX, type Unstorable } from "../domain/storable.ts"

/**
 * A request's body, read whole before any handler runs (the contact import, which streams its own,
 * aside): a handler never acts on a request whose body has not fully arrived (a client declaring a
 * longer Content-Length than it sends used to rotate a secret key with half a request), a body
 * that stops arriving is abandoned instead of held for Node's five minutes, and a JSON body is
 * checked once, here, for what no route takes: another content type, nesting past NESTING_MAX,
 * and strings Postgres cannot store.
 */

/** Largest request body accepted (DESIGN.md): 10 MB. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024

/** A body that sends nothing for this long is abandoned: 408. */
export const BODY_IDLE_MS = 10_000

/** A body (at most 10 MB) must have arrived whole this long after the request began: 408. */
export const BODY_DEADLINE_MS = 60_000

export type BodyRead =
  | { readonly _tag: "Complete"; readonly body: Buffer }
  | { readonly _tag: "TooLarge" }
  | { readonly _tag: "Stalled"; readonly received: number }
  | { readonly _tag: "Aborted" }

/**
 * Reads `source` to its end, up to `maxBytes`, and calls `done` once. Past the limit the rest is
 * read and dropped (so a client still writing can read the 413 instead of a reset); a body idle
 * for `idleMs`, or not whole by `deadlineMs`, is given up on. Plain callbacks: it runs on every
 * request with a body, before any fiber starts.
 */
export const readBody = (
  source: IncomingMessage,
  options: { readonly maxBytes: number; readonly idleMs: number; readonly deadlineMs: number },
  done: (read: BodyRead) => void
): void => {
  if (source.readableEnded) return done({ _tag: "Complete", body: Buffer.alloc(0) })
  const chunks: Array<Buffer> = []
  let size = 0
  let idle: NodeJS.Timeout | undefined
  const finish = (read: BodyRead) => {
    clearTimeout(idle)
    clearTimeout(deadline)
    source.off("data", onData).off("end", onEnd).off("error", onAbort).off("aborted", onAbort)
    done(read)
  }
  const stalled = () => finish({ _tag: "Stalled", received: size })
  const deadline = setTimeout(stalled, options.deadlineMs)
  const arm = () => {
    clearTimeout(idle)
    idle = setTimeout(stalled, options.idleMs)
  }
  const onData = (chunk: Buffer) => {
    size += chunk.length
    if (size > options.maxBytes) {
      finish({ _tag: "TooLarge" })
      discardRest(source)
      return
    }
    chunks.push(chunk)
    arm()
  }
  const onEnd = () => finish({ _tag: "Complete", body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) })
  const onAbort = () => finish({ _tag: "Aborted" })
  arm()
  source.on("data", onData).on("end", onEnd).on("error", onAbort).on("aborted", onAbort)
}

/**
 * Reads and drops the rest of a body that will not be used, so that a client still writing
 * reads the answer instead of a connection reset (closing a socket with unread data sends RST).
 * A client that keeps streaming is cut off after a grace period.
 */
export const discardRest = (source: IncomingMessage) => {
  const cutOff = setTimeout(() => source.destroy(), 10_000).unref()
  source.once("end", () => clearTimeout(cutOff)).once("close", () => clearTimeout(cutOff)).resume()
}

/** Whether the request announces a body (a length above zero, or a chunked one). */
export const hasBody = (headers: IncomingMessage["headers"]) => {
  const length = headers["content-length"]
  if (length !== undefined) return length !== "0"
  return headers["transfer-encoding"] !== undefined
}

/**
 * Whether a Content-Type is JSON in UTF-8: `application/json`, with no charset or a UTF-8 one.
 * An absent type counts as JSON, as HttpApi reads it.
 */
export const isJsonContentType = (contentType: string | undefined) => {
  if (contentType === undefined || contentType.trim() === "") return true
  const { type, utf8 } = mediaTypeOf(contentType)
  return type === "application/json" && utf8
}

/**
 * Whether JSON text nests arrays and objects deeper than `max`, by a scan that never builds the
 * value: JSON.parse of a 10 MB body of brackets holds the event loop for over a second.
 */
export const nestsDeeperThan = (text: string, max: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // a backslash escapes the next character
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123) {
      if (++depth > max) return true
    } else if (c === 93 || c === 125) depth--
  }
  return false
}

export type JsonBody =
  | { readonly _tag: "Json"; readonly value: unknown }
  | { readonly _tag: "Unreadable"; readonly reason: string }
  | { readonly _tag: "Unstorable"; readonly issue: Unstorable }

/** A JSON body as the routes may take it: parsed, not too deep, every string storable. */
export const readJsonBody = (text: string): JsonBody => {
  if (nestsDeeperThan(text, NESTING_MAX)) return { _tag: "Unstorable", issue: { path: "", message: `nests deeper than ${NESTING_MAX} levels` } }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return { _tag: "Unreadable", reason: (error as Error).message }
  }
  const issue = firstUnstorable(value)
  return issue === undefined ? { _tag: "Json", value } : { _tag: "Unstorable", issue }
}

/**
 * Routes that read their own body as a stream, under a limit of their own: the contact and
 * customer imports (IMPORT_MAX_BYTES, src/contacts/importLimits.ts). The middleware neither holds their
 * Content-Length to MAX_BODY_BYTES nor reads their bodies.
 */
const STREAMED_BODY_ROUTES: ReadonlyArray<{ readonly method: string; readonly path: RegExp }> = [
  { method: "POST", path: /^\/api\/v1\/rcs\/contact-lists\/[^/?]+\/contacts(?:\?|$)/ },
  { method: "POST", path: /^\/api\/v1\/app\/contacts\/import(?:\?|$)/ }
]

/**
 * Routes whose body is read whole but taken as bytes, not as a client's JSON: the gateway's
 * signed callbacks (the signature covers the raw body; nothing in it is stored unverified), and
 * GraphQL, which answers an unreadable body in GraphQL's shape (`{errors}`) and checks it with
 * readJsonBody itself.
 */
const RAW_BODY_ROUTES: ReadonlyArray<{ readonly method: string; readonly path: RegExp }> = [
  { method: "POST", path: /^\/api\/v1\/rcs\/gateway\/rbm\/events(?:\?|$)/ },
  { method: "POST", path: /^\/api\/v1\/public\/gateway\/whatsapp(?:\?|$)/ },
  { method: "POST", path: /^\/api\/v1\/graphql(?:\?|$)/ }
]

const matches = (routes: typeof STREAMED_BODY_ROUTES, method: string, url: string) =>
  routes.some((route) => route.method === method && route.path.test(url))

export const streamsOwnBody = (method: string, url: string) => matches(STREAMED_BODY_ROUTES, method, url)

export const takesRawBody = (method: string, url: string) => matches(RAW_BODY_ROUTES, method, url)
