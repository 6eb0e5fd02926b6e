import { Duration, Effect, Schedule } from "effect"
import { decodeJwt } from "jose"
import { createHash, randomBytes } from "node:crypto"
import { AppConfig } from "../config/AppConfig.ts"
import { Unauthorized } from "../domain/errors.ts"
import type { Principal } from "../domain/signIn.ts"
import { SecretBox } from "../crypto/SecretBox.ts"
import { ChangeFeed } from "../storage/ChangeFeed.ts"
import { SignIn } from "../security/SignIn.ts"
import { makeReadCache } from "../storage/ReadCache.ts"
import { ConsoleSessionsRepo, type ConsoleSessionRow } from "./ConsoleSessionsRepo.ts"

/** A console sign-in as a request finds it (docs/console.md). */
export interface ConsoleSession {
  readonly accountId: string
  /** The user token the session acts with: put in the Authorization header of the REST calls it makes. */
  readonly token: string
  readonly csrfToken: string
  readonly expiresAt: Date
}

const hashOf = (id: string) => createHash("sha256").update(id).digest()

/** The cookie's value: 32 random bytes. Anything else is not worth a query. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/

const SWEEP = Schedule.spaced(Duration.minutes(10))

/**
 * The console's sessions: an opaque random id in an HttpOnly cookie, stored as its SHA-256 beside
 * the user token it acts with (sealed under HERALD_SECRETS_KEY) and its CSRF token. Every request
 * verifies the token again (SignIn.authenticate: expiry, password change, membership), so a
 * session is never stronger than the token it holds. Rows are cached per node and dropped from
 * every node's cache by the change feed when deleted.
 */
export class ConsoleSessions extends Effect.Service<ConsoleSessions>()("herald/console/ConsoleSessions", {
  scoped: Effect.gen(function*() {
    const repo = yield* ConsoleSessionsRepo
    const box = yield* SecretBox
    const signIn = yield* SignIn
    const config = yield* AppConfig
    const cache = yield* makeReadCache<ConsoleSessionRow>({ tables: ["console_sessions"], capacity: 10_000 })

    /** Opens a session for a user token the login just gave: the cookie's value, and the session. */
    const open = (token: string) =>
      Effect.gen(function*() {
        const principal = yield* signIn.authenticate(token)
        const id = randomBytes(32).toString("base64url")
        const csrfToken = randomBytes(32).toString("base64url")
        const tokenExpiry = (decodeJwt(token).exp ?? 0) * 1000
        const expiresAt = new Date(Math.min(Date.now() + config.consoleSessionHours * 3_600_000, tokenExpiry))
        yield* repo.insert(hashOf(id), { accountId: principal.accountId, sealedToken: box.seal(token), csrfToken, expiresAt })
        return { id, session: { accountId: principal.accountId, token, csrfToken, expiresAt } satisfies ConsoleSession, principal }
      })

    const row = (id: string) =>
      cache.get(id, () =>
        Effect.map(repo.find(hashOf(id)), (found) => (found === undefined ? undefined : { accountId: found.accountId, value: found })))

    /** The live session of a cookie's value; undefined for none, an expired one, or a token that no longer opens. */
    const find = (id: string | undefined): Effect.Effect<ConsoleSession | undefined> =>
      Effect.gen(function*() {
        if (id === undefined || !SESSION_ID.test(id)) return undefined
        const found = yield* row(id)
        if (found === undefined || new Date(found.expiresAt).getTime() <= Date.now()) return undefined
        const token = box.open(found.sealedToken)
        if (token === undefined) return undefined
        return { accountId: found.accountId, token, csrfToken: found.csrfToken, expiresAt: new Date(found.expiresAt) }
      })

    /**
     * The session and who it acts as, verified as a bearer token is: a password changed or a
     * membership removed since sign-in ends it (the row is deleted).
     */
    const resolve = (id: string | undefined): Effect.Effect<{ readonly session: ConsoleSession; readonly principal: Principal }, Unauthorized> =>
      Effect.gen(function*() {
        const session = yield* find(id)
        if (session === undefined) return yield* Unauthorized.because("not signed in to the console, or the session ended; sign in again")
        const principal = yield* signIn.authenticate(session.token).pipe(
          Effect.tapError(() => close(id))
        )
        return { session, principal }
      })

    /** Signs out: the row goes, and with it every node's cached copy. */
    const close = (id: string | undefined) =>
      id === undefined || !SESSION_ID.test(id)
        ? Effect.void
        : repo.remove(hashOf(id))

    // Expired rows are refused when read; this only keeps the table small.
    yield* repo.sweep.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("console session sweep failed", cause)),
      Effect.repeat(SWEEP),
      Effect.delay(Duration.minutes(1)),
      Effect.forkScoped
    )

    return { open, find, resolve, close } as const
  }),
  dependencies: [ConsoleSessionsRepo.Default, SecretBox.Default, SignIn.Default, ChangeFeed.Default]
}) {}
