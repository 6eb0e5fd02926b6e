import { HttpServerResponse } from "@effect/platform"
import { Duration, Effect, Option } from "effect"
import type { IncomingHttpHeaders } from "node:http"
import { timingSafeEqual } from "node:crypto"
import { AppConfig } from "../config/AppConfig.ts"

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

/**
 * The console's cookies: the session, the 15-minute account-pick token of a login that asked for
 * a pick (kept out of the page), and the operator view's sign-in.
 */
export type ConsoleCookie = "session" | "pick" | "ops"
const COOKIES: Record<ConsoleCookie, { readonly name: string; readonly path: string }> = {
  session: { name: "herald_session", path: CONSOLE_PATH },
  pick: { name: "herald_pick", path: PICK_PATH },
  ops: { name: "herald_ops", path: CONSOLE_PATH }
}

/**
 * The console's cookies as this deployment names and marks them (docs/console.md). The configured
 * public URL (HERALD_PUBLIC_URL), not the Host header a request claims, decides: served over
 * https, every cookie is `Secure` and named with the `__Host-` prefix, so a browser takes it only
 * from this origin over TLS, with `Path=/` and no Domain, and no subdomain or plain-http page can
 * set or shadow it. On a plain-http public URL (the default, http://127.0.0.1:PORT, for a
 * developer's `npm start`) a browser would drop a Secure or `__Host-` cookie, so they are plain
 * `herald_…` cookies without Secure, each on the narrowest path that needs it. Either way
 * HttpOnly and SameSite=Strict.
 */
export class ConsoleCookies extends Effect.Service<ConsoleCookies>()("herald/console/ConsoleCookies", {
  effect: Effect.map(AppConfig, (config) => {
    const secure = Option.exists(config.publicUrl, (url) => url.startsWith("https:"))
    const nameOf = (cookie: ConsoleCookie) => `${secure ? "__Host-" : ""}${COOKIES[cookie].name}`
    const names: Record<ConsoleCookie, string> = { session: nameOf("session"), pick: nameOf("pick"), ops: nameOf("ops") }

    /** One console cookie's value from a request's Cookie header. */
    const read = (header: string | undefined, cookie: ConsoleCookie) => cookieOf(header, names[cookie])

    /** Sets (or, with a zero age and an empty value, removes) console cookies on an answer. */
    const set = (
      response: HttpServerResponse.HttpServerResponse,
      cookies: ReadonlyArray<{ readonly cookie: ConsoleCookie; readonly value: string; readonly maxAgeSeconds: number }>
    ) =>
      cookies.reduce((answer, c) =>
        HttpServerResponse.unsafeSetCookie(answer, names[c.cookie], c.value, {
          path: secure ? "/" : COOKIES[c.cookie].path,
          maxAge: Duration.seconds(Math.max(0, Math.floor(c.maxAgeSeconds))),
          httpOnly: true,
          sameSite: "strict",
          secure
        }), response)

    return { secure, names, read, set } as const
  })
}) {}

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
