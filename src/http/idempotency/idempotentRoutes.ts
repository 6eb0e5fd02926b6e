import { HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { createHash } from "node:crypto"
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

/** Whose keys a request's are: its account's (any credential of it), or its e-mail partner's. */
const scopeOf = (context: Map<string, unknown>): string | undefined => {
  const principal = context.get(CurrentPrincipal.key) as { readonly accountId: string } | undefined
  if (principal !== undefined) return `account:${principal.accountId}`
  const account = context.get(CurrentAccount.key) as { readonly accountId: string } | undefined
  if (account !== undefined) return `account:${account.accountId}`
  const partner = context.get(CurrentPartner.key) as { readonly partnerId: string } | undefined
  if (partner !== undefined) return `partner:${partner.partnerId}`
  return undefined
}

/** The request a key stands for: method, path and query, and the body byte for byte. */
export const fingerprintOf = (method: string, url: string, body: Uint8Array | undefined) =>
  createHash("sha256").update(`${method} ${url}\n`).update(body ?? new Uint8Array()).digest("base64url")

/** `program` (a route's answer, authentication already done) under the request's Idempotency-Key when it carries one. */
export const withIdempotencyKey = <E, R>(
  program: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R> =>
  Effect.gen(function*() {
    const context = (yield* Effect.context<never>()).unsafeMap as Map<string, unknown>
    const request = context.get(HttpServerRequest.HttpServerRequest.key) as HttpServerRequest.HttpServerRequest
    const key = readKey(request.headers[IDEMPOTENCY_HEADER])
    if (key._tag === "None") return yield* program
    if (key._tag === "Invalid") return key.response
    const scope = scopeOf(context)
    const idempotency = context.get(Idempotency.key) as Idempotency | undefined
    if (scope === undefined || idempotency === undefined) return yield* Effect.dieMessage("Idempotency-Key on a route without an account or the Idempotency service")
    const body = request instanceof LeanRequest ? request.rawBody : undefined
    return yield* idempotency.run(scope, key.key, fingerprintOf(request.method, request.url, body), Effect.provideService(program, RequestKey, { scope, key: key.key }))
  })
