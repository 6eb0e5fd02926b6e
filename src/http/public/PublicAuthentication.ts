import { HttpApiMiddleware, HttpApiSecurity, HttpServerRequest } from "@effect/platform"
import { Effect, Layer, Schema } from "effect"
import { InvalidApiKey } from "../../domain/errors.ts"
import { ApiRateLimits } from "../../ratelimit/ApiRateLimits.ts"
import { SecretKeys } from "../../security/SecretKeys.ts"
import { FeatureLockedResponse, CurrentAccount } from "../app/AppAuthentication.ts"
import { InvalidApiKeyResponse, RateLimitedResponse } from "../Authentication.ts"

const BASIC = /^basic\s+(\S+)\s*$/i

/**
 * The public messaging API's credential: `Authorization: Basic <secret key>` (contract, Auth 15),
 * the key raw or base64 of `key:` (or of the key alone) as Interakt's clients send it; then the
 * account's plan bucket, shared with /api/v1/app and GraphQL (Starter has no API access). The
 * header is read whole: the platform's Basic decoding would refuse the raw form.
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
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const credential = BASIC.exec(request.headers.authorization ?? "")?.[1]
          if (credential === undefined) {
            return yield* new InvalidApiKey({ message: "Invalid or revoked API key: send Authorization: Basic <secret key>" })
          }
          return yield* Effect.tap(keys.authenticate(credential), limits.plan)
        })
    }
  })
)
