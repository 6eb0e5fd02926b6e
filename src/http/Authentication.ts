import { HttpApiMiddleware, HttpApiSecurity, HttpRouter, HttpServerRequest } from "@effect/platform"
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import { ApiKeyEndpointNotAllowed, InvalidApiKey, MissingScope, RateLimited, Unauthorized } from "../domain/errors.ts"
import { ApiRateLimits } from "../ratelimit/ApiRateLimits.ts"
import type { Principal } from "../domain/signIn.ts"
import { ApiKeys, isApiKey } from "../security/ApiKeys.ts"
import { SignIn } from "../security/SignIn.ts"
import { isSecretKeyCredential, readBearer } from "./bearer.ts"
import { errorResponse } from "./errors.ts"

/** Who the request acts as; provided by the Authentication middleware. */
export class CurrentPrincipal extends Context.Tag("herald/http/CurrentPrincipal")<CurrentPrincipal, Principal>() {}

export const UnauthorizedResponse = errorResponse(Unauthorized, 401, "unauthorized")
export const InvalidApiKeyResponse = errorResponse(InvalidApiKey, 401, "invalid_api_key")
export const ApiKeyEndpointNotAllowedResponse = errorResponse(ApiKeyEndpointNotAllowed, 403, "api_key_endpoint_not_allowed")
export const MissingScopeResponse = errorResponse(MissingScope, 403, "missing_scope")
export const RateLimitedResponse = errorResponse(RateLimited, 429, "rate_limited")

/**
 * The RCS API's bearer credential: a user token (JWT) or an API key (`rcs_pk_live_…`), told apart
 * by the key's prefix. Both resolve to the same kind of principal; which one it was is kept on it.
 */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: Schema.Union(UnauthorizedResponse, InvalidApiKeyResponse, ApiKeyEndpointNotAllowedResponse, MissingScopeResponse, RateLimitedResponse),
  provides: CurrentPrincipal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

/** The account's secret key sent to the RCS API: a good key on the wrong surface, told so. */
const SECRET_KEY_HERE = Unauthorized.because(
  "this is the account's secret key (sk_live_…), which /api/v1/public, /api/v1/app and GraphQL take; the RCS API takes " +
    "Authorization: Bearer with a user token (POST /api/v1/rcs/auth/login) or an API key (rcs_pk_live_…)"
)

/**
 * Resolves an RCS bearer credential to its principal for `method route` (the route pattern): a
 * user token, or an API key checked against the route's allow-list and scope and charged to the
 * key's rate-limit bucket. Shared by the HttpApi middleware and the routes served outside HttpApi.
 */
export class RcsCredentials extends Effect.Service<RcsCredentials>()("herald/RcsCredentials", {
  effect: Effect.gen(function*() {
    const signIn = yield* SignIn
    const apiKeys = yield* ApiKeys
    const limits = yield* ApiRateLimits
    const principal = (
      raw: string,
      method: string,
      route: string
    ): Effect.Effect<Principal, Unauthorized | InvalidApiKey | ApiKeyEndpointNotAllowed | MissingScope | RateLimited> =>
      isApiKey(raw)
        ? Effect.tap(apiKeys.authenticate(raw, method, route), (principal) =>
          principal.credential.kind === "api_key" ? limits.apiKey(principal.credential.keyId) : Effect.void)
        : isSecretKeyCredential(raw)
        ? Effect.fail(SECRET_KEY_HERE)
        : signIn.authenticate(raw)
    /** The same, from the request's Authorization header as sent. */
    const fromHeader = (header: string | undefined, method: string, route: string) => {
      const read = readBearer(header)
      return "problem" in read ? Effect.fail(Unauthorized.because(read.problem)) : principal(read.credential, method, route)
    }
    return { principal, fromHeader } as const
  }),
  dependencies: [SignIn.Default, ApiKeys.Default, ApiRateLimits.Default]
}) {}

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.map(RcsCredentials, (credentials) => ({
    bearer: (_token: Redacted.Redacted<string>) =>
      Effect.flatMap(
        Effect.all([HttpRouter.RouteContext, HttpServerRequest.HttpServerRequest]),
        ([route, request]) => credentials.fromHeader(request.headers.authorization, request.method, route.route.path)
      )
  }))
)
