import type { IncomingMessage, ServerResponse } from "node:http"

/** RBM's payload ceiling is 250 KB; anything far past it is not a request worth reading. */
const MAX_BODY_BYTES = 1_048_576

/** The whole body, or undefined when it is too large (the request is then answered 413 here). */
export const readBody = (req: IncomingMessage, res: ServerResponse, then: (body: string) => void): void => {
  const chunks: Array<Buffer> = []
  let size = 0
  let tooLarge = false
  req.on("data", (chunk: Buffer) => {
    size += chunk.length
    if (size > MAX_BODY_BYTES) tooLarge = true
    else chunks.push(chunk)
  })
  req.on("end", () => {
    if (tooLarge) return googleError(res, 413, "INVALID_ARGUMENT", "Request payload size exceeds the limit.")
    then(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8"))
  })
  req.on("error", () => res.destroy())
}

export const sendJson = (res: ServerResponse, status: number, body: unknown): void => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) })
  res.end(text)
}

/** Google's error envelope, as RBM answers. */
export const googleError = (res: ServerResponse, code: number, status: string, message: string): void =>
  sendJson(res, code, { error: { code, message, status } })

export const notFound = (res: ServerResponse): void => {
  res.writeHead(404, { "content-type": "text/plain; charset=utf-8", "content-length": 10 })
  res.end("Not Found\n")
}

export const parseJsonObject = (text: string): Record<string, unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(text)
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

/** An answer the simulator writes back as JSON. */
export interface Answer {
  readonly status: number
  readonly body: unknown
}

/** A send's fate: an answer, no answer at all (0002), or the connection cut after accepting (0004). */
export type SendAnswer = Answer | typeof HELD | typeof CUT
export const HELD = "held" as const
export const CUT = "cut" as const

export const answer = (status: number, body: unknown): Answer => ({ status, body })

/**
 * One query parameter, decoded. Not URLSearchParams: its values are slices that keep the whole
 * request URL alive, and the ledger keeps a million of these ids as map keys; decoding copies.
 */
export const queryParam = (query: string, name: string): string | undefined => {
  const key = `${name}=`
  let at = query.startsWith(key) ? 0 : query.indexOf(`&${key}`)
  if (at === -1) return undefined
  if (at > 0 || query[0] === "&") at++
  const from = at + key.length
  const to = query.indexOf("&", from)
  return safeDecode((to === -1 ? query.slice(from) : query.slice(from, to)).replace(/\+/g, " "))
}

export const safeDecode = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}
