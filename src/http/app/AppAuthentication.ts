import { HttpApiMiddleware, HttpApiSecurity, HttpServerRequest } from "@effect/platform"
import { Context, Effect, Layer, Schema } from "effect"
import { FeatureLocked, InvalidApiKey } from "../../domain/errors.ts"
import { ApiRateLimits } from "../../ratelimit/ApiRateLimits.ts"
import { type SecretKeyAccount, SecretKeys } from "../../security/SecretKeys.ts"
import { InvalidApiKeyResponse, RateLimitedResponse } from "../Authentication.ts"
import { readBearer } from "../bearer.ts"
import { errorResponse } from "../errors.ts"

/** The account of a request's `Authorization: Bearer sk_live_…` header, or 401 saying what is wrong with it. */
export const secretKeyOfHeader = (keys: SecretKeys, header: string | undefined) => {
  const read = readBearer(header)
  return "problem" in read ? Effect.fail(InvalidApiKey.because(read.problem)) : keys.authenticate(read.credential)
}

const fromRequest = (keys: SecretKeys) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => secretKeyOfHeader(keys, request.headers.authorization))

/** The account a secret-key request acts for. */
export class CurrentAccount extends Context.Tag("herald/http/CurrentAccount")<CurrentAccount, SecretKeyAccount>() {}

export const FeatureLockedResponse = errorResponse(FeatureLocked, 403, "feature_locked")

/**
 * The /api/v1/app surface (and later GraphQL and the public API): Bearer `sk_live_…`, then the
 * account's plan bucket (Starter has no API access).
 */
export class AppAuthentication extends HttpApiMiddleware.Tag<AppAuthentication>()("AppAuthentication", {
  failure: Schema.Union(InvalidApiKeyResponse, FeatureLockedResponse, RateLimitedResponse),
  provides: CurrentAccount,
  security: { secretKey: HttpApiSecurity.bearer }
}) {}

export const AppAuthenticationLive = Layer.effect(
  AppAuthentication,
  Effect.gen(function*() {
    const keys = yield* SecretKeys
    const limits = yield* ApiRateLimits
    return {
      secretKey: () => Effect.tap(fromRequest(keys), limits.plan)
    }
  })
)

/**
 * GET /api/v1/app/me's credential: the secret key as for every /app path, but answered on every
 * plan, Starter included (its own bucket of STARTER_IDENTITY_PER_MINUTE), so that a client can
 * always tell which account and plan a key belongs to.
 */
export class AppIdentity extends HttpApiMiddleware.Tag<AppIdentity>()("AppIdentity", {
  failure: Schema.Union(InvalidApiKeyResponse, RateLimitedResponse),
  provides: CurrentAccount,
  security: { secretKey: HttpApiSecurity.bearer }
}) {}

export const AppIdentityLive = Layer.effect(
  AppIdentity,
  Effect.gen(function*() {
    const keys = yield* SecretKeys
    const limits = yield* ApiRateLimits
    return {
      secretKey: () => Effect.tap(fromRequest(keys), limits.identity)
    }
  })
)
