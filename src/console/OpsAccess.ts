import { Effect, Option, Redacted } from "effect"
import { createHmac } from "node:crypto"
import type { IncomingHttpHeaders } from "node:http"
import { AppConfig } from "../config/AppConfig.ts"
import { NotFound, Unauthorized } from "../domain/errors.ts"
import { readBearer } from "../http/bearer.ts"
import { CsrfFailed } from "./errors.ts"
import { cookieOf, csrfProblem, isSafeMethod, OPS_COOKIE, sameSecret } from "./consoleCookies.ts"

/** How long an operator's sign-in to the view lasts. */
export const OPS_SESSION_HOURS = 12

const OFF = new NotFound({ message: "the operator view is off on this node: HERALD_OPS_TOKEN is not set" })

/**
 * The operator view's access (docs/console.md): HERALD_OPS_TOKEN, sent as a bearer by scripts or
 * exchanged once for a cookie by the browser. The cookie holds its expiry and an HMAC of it under
 * the token (and the CSRF token is another HMAC of it), so any API node checks it without a
 * store, and a new token ends every operator session. With no token set the view does not exist.
 */
export class OpsAccess extends Effect.Service<OpsAccess>()("herald/console/OpsAccess", {
  effect: Effect.map(AppConfig, (config) => {
    const token = Option.map(config.opsToken, Redacted.value)
    const mac = (key: string, what: string) => createHmac("sha256", key).update(what).digest("base64url")

    const enabled = Option.isSome(token)
    const ifEnabled = Option.match(token, { onNone: () => Effect.fail(OFF), onSome: (t) => Effect.succeed(t) })

    /** The cookie's value and the CSRF token of a session that ends at `expiresAt` (ms). */
    const sessionOf = (key: string, expiresAt: number) => ({
      cookie: `${expiresAt}.${mac(key, `herald-ops-session.${expiresAt}`)}`,
      csrfToken: mac(key, `herald-ops-csrf.${expiresAt}`),
      expiresAt
    })

    /** The session a cookie's value stands for, if it is one this token signed and it has not expired. */
    const sessionFrom = (key: string, value: string | undefined) => {
      if (value === undefined) return undefined
      const [at, signature] = value.split(".")
      const expiresAt = Number(at)
      if (!Number.isSafeInteger(expiresAt) || expiresAt <= Date.now() || signature === undefined) return undefined
      const session = sessionOf(key, expiresAt)
      return sameSecret(value, session.cookie) ? session : undefined
    }

    /** Exchanges the token for a session (the browser's sign-in). */
    const signIn = (given: Redacted.Redacted<string>) =>
      Effect.flatMap(ifEnabled, (key) =>
        sameSecret(Redacted.value(given), key)
          ? Effect.succeed(sessionOf(key, Date.now() + OPS_SESSION_HOURS * 3_600_000))
          : Effect.fail(Unauthorized.because("this is not the node's HERALD_OPS_TOKEN")))

    /** The signed-in session of a request, if any (for the page to know where it stands). */
    const current = (headers: IncomingHttpHeaders) =>
      Effect.map(ifEnabled, (key) => sessionFrom(key, cookieOf(headers.cookie, OPS_COOKIE)))

    /**
     * Whether a request may use the view: the token as a bearer, or the session cookie (with the
     * CSRF token and the view's origin on a request that changes something).
     */
    const authorize = (method: string, headers: IncomingHttpHeaders) =>
      Effect.gen(function*() {
        const key = yield* ifEnabled
        const bearer = readBearer(headers.authorization)
        if ("credential" in bearer) {
          if (sameSecret(bearer.credential, key)) return
          return yield* Unauthorized.because("the bearer is not the node's HERALD_OPS_TOKEN")
        }
        const session = sessionFrom(key, cookieOf(headers.cookie, OPS_COOKIE))
        if (session === undefined) return yield* Unauthorized.because("sign in to the operator view with HERALD_OPS_TOKEN")
        if (isSafeMethod(method)) return
        const problem = csrfProblem(headers, session.csrfToken, "/console/api/ops/session")
        if (problem !== undefined) return yield* new CsrfFailed({ message: `refused: ${problem}` })
      })

    return { enabled, signIn, current, authorize } as const
  })
}) {}
