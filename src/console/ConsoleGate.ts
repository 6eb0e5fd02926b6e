import { Effect, Layer } from "effect"
import type { IncomingMessage } from "node:http"
import { envelope } from "../http/errors.ts"
import { RequestRewrites } from "../http/adapter/RequestRewrites.ts"
import { ConsoleSessions } from "./ConsoleSessions.ts"
import { ConsoleCookies, csrfProblem, isSafeMethod } from "./consoleCookies.ts"

/** The console calls the REST API under this prefix: `/console/api/v1/…` is `/api/v1/…`. */
export const CONSOLE_API_PREFIX = "/console/api/v1/"

/** What a user token reaches: the RCS API and the owner's developer settings. */
const REACHABLE = ["/api/v1/rcs/", "/api/v1/app/developer/"]

// Dot segments (plain or percent-encoded) could walk out of the prefixes above.
const DOT_SEGMENT = /\/(?:\.|%2e){1,2}(?:\/|\?|$)/i

/**
 * The console's calls to the REST API (docs/console.md): `/console/api/v1/<path>` is served as
 * `/api/v1/<path>` by the same route, with the session's user token as its bearer credential, so
 * the console reaches exactly what the signed-in person may, through the same handlers, services,
 * roles and bot scope. The token never leaves the server. A call that changes something must
 * carry the session's CSRF token and come from the console's origin.
 */
export const ConsoleGateLive = Layer.effect(
  RequestRewrites,
  Effect.map(Effect.all([ConsoleSessions, ConsoleCookies]), ([sessions, cookies]) => {
    const rewrite = (req: IncomingMessage) =>
      Effect.gen(function*() {
        const target = `/api/v1/${req.url!.slice(CONSOLE_API_PREFIX.length)}`
        if (!REACHABLE.some((prefix) => target.startsWith(prefix)) || DOT_SEGMENT.test(target)) {
          return envelope(404, "not_found", "the console reaches /api/v1/rcs/… and /api/v1/app/developer/… only")
        }
        const session = yield* sessions.find(cookies.read(req.headers.cookie, "session"))
        if (session === undefined) return envelope(401, "unauthorized", "unauthorized", { detail: "not signed in to the console, or the session ended; sign in again" })
        if (!isSafeMethod(req.method)) {
          const problem = csrfProblem(req.headers, session.csrfToken)
          if (problem !== undefined) return envelope(403, "csrf_failed", `refused: ${problem}`)
        }
        req.url = target
        req.headers.authorization = `Bearer ${session.token}`
        // The REST API takes no cookie; the session's is not passed on.
        delete req.headers.cookie
        return undefined
      })
    return [{ prefix: CONSOLE_API_PREFIX, rewrite }]
  })
)
