import { HttpServerResponse } from "@effect/platform"
import { Duration } from "effect"
import type { IncomingHttpHeaders } from "node:http"
import { timingSafeEqual } from "node:crypto"

/** The console's session cookie (docs/console.md). */
export const SESSION_COOKIE = "herald_session"
/** The 15-minute account-pick token of a login that asked for a pick, kept out of the page. */
export const PICK_COOKIE = "herald_pick"
/** The operator view's sign-in. */
export const OPS_COOKIE = "herald_ops"

export const CONSOLE_PATH = "/console"
export const PICK_PATH = "/console/api/session"

/** One cookie's value from a Cookie header. */
export const cookieOf = (header: string | undefined, name: string): string | undefined => {
  if (header === undefined) return undefined
  for (const part of header.split(";")) {
    const at = part.indexOf("=")
    if (at === -1) continue
    if (part.slice(0, at).trim() === name) return part.slice(at + 1).trim()
  }
  return undefined
}

const LOCAL_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?$/i

/**
 * A console cookie's attributes: HttpOnly, SameSite=Strict, and Secure unless the console was
 * reached on this machine (browsers keep Secure cookies from http://localhost, not from every
 * plain-http name, and a developer's `npm start` is plain http).
 */
export const cookieOptions = (host: string | undefined, path: string, maxAgeSeconds: number) => ({
  path,
  maxAge: Duration.seconds(Math.max(0, Math.floor(maxAgeSeconds))),
  httpOnly: true,
  sameSite: "strict" as const,
  secure: host === undefined || !LOCAL_HOST.test(host)
})

/** Sets (or, with a zero age and an empty value, removes) console cookies on an answer. */
export const withCookies = (
  response: HttpServerResponse.HttpServerResponse,
  host: string | undefined,
  cookies: ReadonlyArray<{ readonly name: string; readonly value: string; readonly path: string; readonly maxAgeSeconds: number }>
) =>
  cookies.reduce((answer, c) => HttpServerResponse.unsafeSetCookie(answer, c.name, c.value, cookieOptions(host, c.path, c.maxAgeSeconds)), response)

export const sameSecret = (given: string, expected: string): boolean => {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** Methods that change nothing: no CSRF token needed. */
export const isSafeMethod = (method: string | undefined) => method === "GET" || method === "HEAD"

/**
 * Why a state-changing request is not the console's own, or undefined when it is: the session's
 * CSRF token in `x-csrf-token`, and, where the browser says so, the console's origin.
 */
export const csrfProblem = (headers: IncomingHttpHeaders, csrfToken: string, from = "/console/api/session"): string | undefined => {
  const given = headers["x-csrf-token"]
  if (typeof given !== "string" || given === "") return `the x-csrf-token header is missing: send the csrf_token GET ${from} answered`
  if (!sameSecret(given, csrfToken)) return "the x-csrf-token header is not this session's token"
  const site = headers["sec-fetch-site"]
  if (typeof site === "string" && site !== "same-origin") return `the request came from another site (Sec-Fetch-Site: ${site})`
  const origin = headers.origin
  if (typeof origin === "string" && origin !== "null") {
    let host: string
    try {
      host = new URL(origin).host
    } catch {
      return "the Origin header is not a URL"
    }
    if (host !== headers.host) return `the request came from ${origin}, not from the console's origin`
  } else if (origin === "null") {
    return "the request came from an opaque origin"
  }
  return undefined
}
