import { HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import type { ApiKeyEndpointNotAllowed, Forbidden } from "../../domain/errors.ts"
import { mayWrite } from "../../domain/access.ts"
import type { Principal } from "../../domain/signIn.ts"
import type { SecretKeyAccount } from "../../security/SecretKeys.ts"
import { CurrentAccount } from "../app/AppAuthentication.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { LeanRequest } from "../adapter/LeanRequest.ts"
import { CurrentPartner } from "../partner/PartnerEmailApi.ts"
import { RequestKey } from "../../domain/requestKey.ts"
import { IDEMPOTENCY_HEADER, Idempotency, readKey } from "./Idempotency.ts"

/**
 * The writes that take an Idempotency-Key (docs/idempotency.md): every send, broadcast creation
 * and key creation. Other POSTs are idempotent by nature or by their own key (a contact by phone,
 * a template by name) and ignore the header. The two imports stream their bodies and take the key
 * on their own routes (ContactImportRoute.ts `keyedImport`).
 */
export const IDEMPOTENT_ROUTES: ReadonlySet<string> = new Set([
  "POST /api/v1/rcs/messages/send",
  "POST /api/v1/rcs/broadcasts",
  "POST /api/v1/rcs/api-keys",
  "POST /api/v1/public/message",
  "POST /api/v1/app/messages/send-text",
  "POST /api/v1/app/developer/secret-key",
  "POST /api/v1/app/meta-ads/capi/events",
  "POST /api/v1/app/meta-ads/capi/events/batch",
  "POST /api/v1/partner/email/emails"
])

/**
 * Whose keys a request's are: the principal's within its account (docs/idempotency.md), so one
 * person's or credential's key never replays to another. A person signed in (whatever the
 * account's other members do with the same key), an API key, the account's current secret key
 * (a regenerated one is another credential), or an e-mail partner (one key each).
 */
export const principalScope = (principal: Principal): string =>
  principal.credential.kind === "api_key"
    ? `account:${principal.accountId}:api_key:${principal.credential.keyId}`
    : `account:${principal.accountId}:user:${principal.personUserId}`
export const secretKeyScope = (account: SecretKeyAccount): string => `account:${account.accountId}:secret_key:${account.keyId}`

const scopeOf = (context: Map<string, unknown>): string | undefined => {
  const principal = context.get(CurrentPrincipal.key) as Principal | undefined
  if (principal !== undefined) return principalScope(principal)
  const account = context.get(CurrentAccount.key) as SecretKeyAccount | undefined
  if (account !== undefined) return secretKeyScope(account)
  const partner = context.get(CurrentPartner.key) as { readonly partnerId: string } | undefined
  if (partner !== undefined) return `partner:${partner.partnerId}`
  return undefined
}

/**
 * The role check of each keyed route whose handler makes one, run before the key is looked at: a
 * stored answer is replayed only to whom the route would answer now (a member demoted since gets
 * the route's 403, as without the key). The secret-key and partner routes have no role: their
 * credential is the whole right, checked by authentication.
 */
const AUTHORIZE_FIRST: ReadonlyMap<string, (principal: Principal) => Effect.Effect<void, Forbidden | ApiKeyEndpointNotAllowed>> = new Map([
  ["POST /api/v1/rcs/messages/send", mayWrite.sendMessages],
  ["POST /api/v1/rcs/broadcasts", mayWrite.createBroadcasts],
  ["POST /api/v1/rcs/api-keys", mayWrite.manageApiKeys],
  ["POST /api/v1/app/developer/secret-key", mayWrite.generateSecretKey]
])

/** The request a key stands for: method, path and query, and the body byte for byte. */
export const fingerprintOf = (method: string, url: string, body: Uint8Array | undefined) =>
  createHash("sha256").update(`${method} ${url}\n`).update(body ?? new Uint8Array()).digest("base64url")

/**
 * `program` (the answer of `route`, authentication already done) under the request's
 * Idempotency-Key when it carries one, after the route's role check.
 */
export const withIdempotencyKey = <E, R>(
  route: string,
  program: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E | Forbidden | ApiKeyEndpointNotAllowed, R> =>
  Effect.gen(function*() {
    const context = (yield* Effect.context<never>()).unsafeMap as Map<string, unknown>
    const request = context.get(HttpServerRequest.HttpServerRequest.key) as HttpServerRequest.HttpServerRequest
    const key = readKey(request.headers[IDEMPOTENCY_HEADER])
    if (key._tag === "None") return yield* program
    if (key._tag === "Invalid") return key.response
    const scope = scopeOf(context)
    const idempotency = context.get(Idempotency.key) as Idempotency | undefined
    if (scope === undefined || idempotency === undefined) return yield* Effect.dieMessage("Idempotency-Key on a route without an account or the Idempotency service")
    const authorize = AUTHORIZE_FIRST.get(route)
    if (authorize !== undefined) yield* authorize(context.get(CurrentPrincipal.key) as Principal)
    const body = request instanceof LeanRequest ? request.rawBody : undefined
    return yield* idempotency.run(scope, key.key, fingerprintOf(request.method, request.url, body), Effect.provideService(program, RequestKey, { scope, key: key.key }))
  })
