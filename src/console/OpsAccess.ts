import { Duration, Effect, Option, Redacted, Schedule } from "effect"
import { createHash, createHmac, randomBytes } from "node:crypto"
import type { IncomingHttpHeaders } from "node:http"
import { AppConfig } from "../config/AppConfig.ts"
import { NotFound, Unauthorized } from "../domain/errors.ts"
import { readBearer } from "../http/bearer.ts"
import { CsrfFailed } from "./errors.ts"
import { ConsoleCookies, csrfProblem, isSafeMethod, sameSecret } from "./consoleCookies.ts"
import { OpsSessionsRepo } from "./OpsSessionsRepo.ts"

/** How long an operator's sign-in to the view lasts. */
export const OPS_SESSION_HOURS = 12

const OFF = new NotFound({ message: "the operator view is off on this node: HERALD_OPS_TOKEN is not set" })

const SWEEP = Schedule.spaced(Duration.minutes(10))

const hashOf = (cookie: string) => createHash("sha256").update(cookie).digest()

interface OpsSession {
  readonly cookie: string
  readonly csrfToken: string
  readonly expiresAt: number
}

/**
 * The operator view's access (docs/console.md): HERALD_OPS_TOKEN, sent as a bearer by scripts or
 * exchanged once for a cookie by the browser. The cookie holds its expiry, a random id and an HMAC
 * of both under the token (the CSRF token is another HMAC of them), so a forged cookie is refused
 * without a query and a new token ends every operator session. Each session is also a row of
 * `ops_sessions` (its cookie's SHA-256), which sign-out deletes: the cookie, even copied before,
 * opens nothing afterwards on any node. With no token set the view does not exist.
 */
export class OpsAccess extends Effect.Service<OpsAccess>()("herald/console/OpsAccess", {
  scoped: Effect.gen(function*() {
    const config = yield* AppConfig
    const repo = yield* OpsSessionsRepo
    const cookies = yield* ConsoleCookies
    const token = Option.map(config.opsToken, Redacted.value)
    const mac = (key: string, what: string) => createHmac("sha256", key).update(what).digest("base64url")

    const enabled = Option.isSome(token)
    const ifEnabled = Option.match(token, { onNone: () => Effect.fail(OFF), onSome: (t) => Effect.succeed(t) })

    /** The cookie's value and the CSRF token of session `id`, ending at `expiresAt` (ms). */
    const sessionOf = (key: string, expiresAt: number, id: string): OpsSession => ({
      cookie: `${expiresAt}.${id}.${mac(key, `herald-ops-session.${expiresAt}.${id}`)}`,
      csrfToken: mac(key, `herald-ops-csrf.${expiresAt}.${id}`),
      expiresAt
    })

    /**
     * The session a cookie's value stands for: one this token signed, not expired, and not signed
     * out (its row is still there).
     */
    const sessionFrom = (key: string, value: string | undefined): Effect.Effect<OpsSession | undefined> =>
      Effect.suspend(() => {
        if (value === undefined) return Effect.succeed(undefined)
        const [at, id, signature] = value.split(".")
        const expiresAt = Number(at)
        if (!Number.isSafeInteger(expiresAt) || expiresAt <= Date.now() || id === undefined || signature === undefined) return Effect.succeed(undefined)
        const session = sessionOf(key, expiresAt, id)
        if (!sameSecret(value, session.cookie)) return Effect.succeed(undefined)
        return Effect.map(repo.isLive(hashOf(value)), (live) => (live ? session : undefined))
      })

    const cookieSession = (headers: IncomingHttpHeaders) => (key: string) => sessionFrom(key, cookies.read(headers.cookie, "ops"))

    /** Exchanges the token for a session (the browser's sign-in). */
    const signIn = (given: Redacted.Redacted<string>) =>
      Effect.flatMap(ifEnabled, (key) => {
        if (!sameSecret(Redacted.value(given), key)) return Effect.fail(Unauthorized.because("this is not the node's HERALD_OPS_TOKEN"))
        const session = sessionOf(key, Date.now() + OPS_SESSION_HOURS * 3_600_000, randomBytes(16).toString("base64url"))
        return Effect.as(
          repo.insert(hashOf(session.cookie), new Date(session.expiresAt)),
          session
        )
      })

    /** The signed-in session of a request, if any (for the page to know where it stands). */
    const current = (headers: IncomingHttpHeaders) => Effect.flatMap(ifEnabled, cookieSession(headers))

    /**
     * Signs out: the session's row goes, so its cookie is refused from now on wherever it is sent.
     * Needs the CSRF token and the view's origin, as every change does.
     */
    const signOut = (headers: IncomingHttpHeaders) =>
      Effect.gen(function*() {
        const session = yield* current(headers)
        if (session === undefined) return
        const problem = csrfProblem(headers, session.csrfToken, "/console/api/ops/session")
        if (problem !== undefined) return yield* new CsrfFailed({ message: `refused: ${problem}` })
        yield* repo.remove(hashOf(session.cookie))
      })

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
        const session = yield* cookieSession(headers)(key)
        if (session === undefined) return yield* Unauthorized.because("sign in to the operator view with HERALD_OPS_TOKEN")
        if (isSafeMethod(method)) return
        const problem = csrfProblem(headers, session.csrfToken, "/console/api/ops/session")
        if (problem !== undefined) return yield* new CsrfFailed({ message: `refused: ${problem}` })
      })

    // Expired rows are refused when read; this only keeps the table small.
    if (enabled) {
      yield* repo.sweep.pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("ops session sweep failed", cause)),
        Effect.repeat(SWEEP),
        Effect.delay(Duration.minutes(1)),
        Effect.forkScoped
      )
    }

    return { enabled, signIn, current, signOut, authorize } as const
  }),
  dependencies: [OpsSessionsRepo.Default, ConsoleCookies.Default]
}) {}
