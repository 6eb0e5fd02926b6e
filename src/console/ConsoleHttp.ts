import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import type { IncomingHttpHeaders } from "node:http"
import { ClusterView } from "../actors/runtime/ClusterView.ts"
import { PoisonQueue } from "../actors/runtime/poison.ts"
import { Unauthorized } from "../domain/errors.ts"
import type { Principal } from "../domain/signIn.ts"
import { apiGroup } from "../http/adapter/apiRoutes.ts"
import { SignIn } from "../security/SignIn.ts"
import { ConsoleApi, OpsAuthorization } from "./ConsoleApi.ts"
import { ConsoleSessions, type ConsoleSession } from "./ConsoleSessions.ts"
import { CsrfFailed } from "./errors.ts"
import { OPS_SESSION_HOURS, OpsAccess } from "./OpsAccess.ts"
import { ConsoleCookies, csrfProblem } from "./consoleCookies.ts"

/** The account-pick token lives 15 minutes (contract), so does its cookie. */
const PICK_SECONDS = 15 * 60

const headersOf = (request: HttpServerRequest.HttpServerRequest) => request.headers as unknown as IncomingHttpHeaders

const sessionView = (session: ConsoleSession, principal: Principal) => ({
  email: principal.email,
  role: principal.role,
  member_id: principal.memberId,
  account_id: principal.accountId,
  account_label: principal.accountLabel,
  assigned_bots: [...principal.bots],
  expires_at: session.expiresAt.toISOString()
})

export const ConsoleSessionHttpLive = apiGroup(ConsoleApi, "consoleSession", (handlers) =>
  Effect.gen(function*() {
    const sessions = yield* ConsoleSessions
    const signIn = yield* SignIn
    const cookies = yield* ConsoleCookies

    /** Opens a session for a token the login gave and answers signed in, with its cookie set and the pick's cleared. */
    const signedIn = (token: string) =>
      Effect.map(sessions.open(token), ({ id, session, principal }) =>
        cookies.set(
          HttpServerResponse.unsafeJson({ success: true, status: "signed_in", csrf_token: session.csrfToken, session: sessionView(session, principal) }),
          [
            { cookie: "session", value: id, maxAgeSeconds: (session.expiresAt.getTime() - Date.now()) / 1000 },
            { cookie: "pick", value: "", maxAgeSeconds: 0 }
          ]
        ))

    return handlers
      .handle("read", ({ request }) =>
        Effect.gen(function*() {
          const resolved = yield* sessions.resolve(cookies.read(headersOf(request).cookie, "session")).pipe(Effect.option)
          if (Option.isNone(resolved)) return { success: true as const, signed_in: false as const }
          const { session, principal } = resolved.value
          return { success: true as const, signed_in: true as const, csrf_token: session.csrfToken, session: sessionView(session, principal) }
        }))
      .handle("signIn", ({ payload }) =>
        Effect.gen(function*() {
          const answer = yield* signIn.login({ email: payload.email, password: payload.password, totpCode: Option.fromNullable(payload.totp_code) })
          if (answer._tag === "SignedIn") return yield* signedIn(answer.token)
          if (answer._tag === "SecondFactorRequired") return { success: true as const, status: "requires_2fa" as const, message: answer.message }
          // The pick token only opens select-account; it stays server-side, in the pick cookie.
          return cookies.set(
            HttpServerResponse.unsafeJson({
              success: true,
              status: "need_account_pick",
              accounts: answer.accounts.map((a) => ({ account_id: a.accountId, label: a.label, role: a.role }))
            }),
            [{ cookie: "pick", value: answer.sessionToken, maxAgeSeconds: PICK_SECONDS }]
          )
        }))
      .handle("pickAccount", ({ payload, request }) =>
        Effect.gen(function*() {
          const pick = cookies.read(headersOf(request).cookie, "pick")
          if (pick === undefined || pick === "") return yield* Unauthorized.because("no account pick in progress, or it expired (15 minutes): sign in again")
          const answer = yield* signIn.selectAccount({ sessionToken: pick, accountId: payload.account_id })
          return yield* signedIn(answer.token)
        }))
      .handle("signOut", ({ request }) =>
        Effect.gen(function*() {
          const id = cookies.read(headersOf(request).cookie, "session")
          const session = yield* sessions.find(id)
          if (session !== undefined) {
            const problem = csrfProblem(headersOf(request), session.csrfToken)
            if (problem !== undefined) return yield* new CsrfFailed({ message: `refused: ${problem}` })
            yield* sessions.close(id)
          }
          return cookies.set(HttpServerResponse.unsafeJson({ success: true }), [{ cookie: "session", value: "", maxAgeSeconds: 0 }])
        }))
  }))

export const OpsAuthorizationLive = Layer.effect(
  OpsAuthorization,
  Effect.map(OpsAccess, (ops) => Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => ops.authorize(request.method, headersOf(request))))
)

export const ConsoleOpsHttpLive = apiGroup(ConsoleApi, "consoleOps", (handlers) =>
  Effect.gen(function*() {
    const ops = yield* OpsAccess
    const cookies = yield* ConsoleCookies
    const cluster = yield* ClusterView
    const poison = yield* PoisonQueue

    return handlers
      .handle("session", ({ request }) =>
        Effect.map(ops.current(headersOf(request)), (session) =>
          session === undefined
            ? { success: true as const, signed_in: false }
            : { success: true as const, signed_in: true, csrf_token: session.csrfToken }))
      .handle("signIn", ({ payload }) =>
        Effect.map(ops.signIn(payload.token), (session) =>
          cookies.set(HttpServerResponse.unsafeJson({ success: true, signed_in: true, csrf_token: session.csrfToken }), [
            { cookie: "ops", value: session.cookie, maxAgeSeconds: OPS_SESSION_HOURS * 3600 }
          ])))
      .handle("signOut", ({ request }) =>
        Effect.as(
          ops.signOut(headersOf(request)),
          cookies.set(HttpServerResponse.unsafeJson({ success: true }), [{ cookie: "ops", value: "", maxAgeSeconds: 0 }])
        ))
      .handle("cluster", () =>
        Effect.gen(function*() {
          const view = yield* cluster.partitions
          const kinds = yield* Effect.forEach(Object.entries(view.byKind), ([kind, partitions]) =>
            Effect.map(cluster.backlog(kind), (b) => ({
              kind,
              partitions,
              backlog: { pending: b.pending, ack_pending: b.ackPending, redelivered: b.redelivered }
            })), { concurrency: 4 })
          return {
            success: true as const,
            partitions_per_kind: view.partitionsPerKind,
            nodes: view.nodes.map((n) => ({ node_id: n.node_id, role: n.role, host: n.host, pid: n.pid, started_at: n.started_at })),
            kinds
          }
        }).pipe(Effect.orDie))
      .handle("poison", () =>
        Effect.map(poison.list({ limit: 200 }), (items) => ({
          success: true as const,
          items: items.map((p) => ({
            poison_id: p.poisonId,
            kind: p.kind,
            partition: p.partition,
            actor_key: p.actorKey,
            seq: String(p.seq),
            error: p.error,
            attempts: p.attempts,
            parked_at: new Date(p.parkedAt).toISOString(),
            command: p.command
          }))
        })))
      // NATS down is a defect here, which the edge answers 503.
      .handle("redrive", ({ path }) =>
        poison.redrive(path.poison_id).pipe(
          Effect.catchTag("NatsUnavailable", (e) => Effect.die(e)),
          Effect.map((done) => ({ success: true as const, ...done }))
        ))
  }))

export const ConsoleHttpLive = Layer.mergeAll(ConsoleSessionHttpLive, ConsoleOpsHttpLive).pipe(Layer.provide(OpsAuthorizationLive))
