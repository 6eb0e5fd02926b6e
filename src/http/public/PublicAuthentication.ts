import { HttpApiMiddleware, HttpApiSecurity, HttpServerRequest } from "@effect/platform"
import { Effect, Layer, Schema } from "effect"
import { ApiRateLimits } from "../../ratelimit/ApiRateLimits.ts"
import { SecretKeys } from "../../security/SecretKeys.ts"
import { FeatureLockedResponse, CurrentAccount, secretKeyOfHeader } from "../app/AppAuthentication.ts"
import { InvalidApiKeyResponse, RateLimitedResponse } from "../Authentication.ts"

/**
 * The public messaging API's credential: `Authorization: Basic <secret key>` (contract, Auth 15),
 * the key raw or base64 of `key:` (or of the key alone) as Interakt's clients send it; then the
 * account's plan bucket, shared with /api/v1/app and GraphQL (Starter has no API access). The same
 * key sent as Bearer (how /api/v1/app and GraphQL take it) is taken too; any other header is
 * refused with a message naming Basic. The header is read whole: the platform's Basic decoding
 * would refuse the raw form.
 */
export class PublicAuthentication extends HttpApiMiddleware.Tag<PublicAuthentication>()("PublicAuthentication", {
  failure: Schema.Union(InvalidApiKeyResponse, FeatureLockedResponse, RateLimitedResponse),
  provides: CurrentAccount,
  // Its own scheme name: the OpenAPI document must not merge it with /api/v1/app's Bearer one.
  security: { secretKeyBasic: HttpApiSecurity.basic }
}) {}

export const PublicAuthenticationLive = Layer.effect(
  PublicAuthentication,
  Effect.gen(function*() {
    const keys = yield* SecretKeys
    const limits = yield* ApiRateLimits
    return {
      secretKeyBasic: () =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
          Effect.tap(secretKeyOfHeader(keys, request.headers.authorization, "Basic"), limits.plan))
    }
  })
)
