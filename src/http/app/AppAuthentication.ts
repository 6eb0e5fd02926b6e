import { HttpApiMiddleware, HttpApiSecurity, HttpServerRequest } from "@effect/platform"
import { Context, Effect, Layer, Schema } from "effect"
import { FeatureLocked, InvalidApiKey } from "../../domain/errors.ts"
import { ApiRateLimits } from "../../ratelimit/ApiRateLimits.ts"
import { type SecretKeyAccount, SecretKeys } from "../../security/SecretKeys.ts"
import { InvalidApiKeyResponse, RateLimitedResponse } from "../Authentication.ts"
import { readSecretKey, type SecretKeyScheme, secretKeySchemeText } from "../bearer.ts"
import { errorResponse } from "../errors.ts"

/**
 * The account of a request's secret key, sent with the surface's scheme (`Bearer sk_live_…` here
 * and in GraphQL, `Basic` on /api/v1/public) or with the other one (readSecretKey), or 401 with
 * code invalid_api_key: "Invalid or revoked API key" when the key itself is unknown, a message
 * naming the scheme the surface takes when the header is missing or holds no secret key.
 */
export const secretKeyOfHeader = (keys: SecretKeys, header: string | undefined, scheme: SecretKeyScheme = "Bearer") => {
  const read = readSecretKey(header, scheme)
  return "problem" in read
    ? Effect.fail(new InvalidApiKey({ message: `This API takes ${secretKeySchemeText(scheme)}`, detail: read.problem }))
    : keys.authenticate(read.credential)
}

const fromRequest = (keys: SecretKeys) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => secretKeyOfHeader(keys, request.headers.authorization))

/** The account a secret-key request acts for. */
export class CurrentAccount extends Context.Tag("herald/http/CurrentAccount")<CurrentAccount, SecretKeyAccount>() {}

export const FeatureLockedResponse = errorResponse(FeatureLocked, 403, "feature_locked")

/**
 * The /api/v1/app surface: Bearer `sk_live_…` (the same key as Basic is taken too), then the
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
