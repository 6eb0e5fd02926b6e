import { HttpApiMiddleware, HttpApiSecurity, HttpRouter, HttpServerRequest } from "@effect/platform"
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import { ApiKeyEndpointNotAllowed, InvalidApiKey, MissingScope, Unauthorized } from "../domain/errors.ts"
import type { Principal } from "../domain/signIn.ts"
import { ApiKeys, isApiKey } from "../security/ApiKeys.ts"
import { SignIn } from "../security/SignIn.ts"
import { errorResponse } from "./errors.ts"

/** Who the request acts as; provided by the Authentication middleware. */
export class CurrentPrincipal extends Context.Tag("herald/http/CurrentPrincipal")<CurrentPrincipal, Principal>() {}

export const UnauthorizedResponse = errorResponse(Unauthorized, 401, "unauthorized")
export const InvalidApiKeyResponse = errorResponse(InvalidApiKey, 401, "invalid_api_key")
export const ApiKeyEndpointNotAllowedResponse = errorResponse(ApiKeyEndpointNotAllowed, 403, "api_key_endpoint_not_allowed")
export const MissingScopeResponse = errorResponse(MissingScope, 403, "missing_scope")

/**
 * The RCS API's bearer credential: a user token (JWT) or an API key (`rcs_pk_live_…`), told apart
 * by the key's prefix. Both resolve to the same kind of principal; which one it was is kept on it.
 */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: Schema.Union(UnauthorizedResponse, InvalidApiKeyResponse, ApiKeyEndpointNotAllowedResponse, MissingScopeResponse),
  provides: CurrentPrincipal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const signIn = yield* SignIn
    const apiKeys = yield* ApiKeys
    return {
      bearer: (token: Redacted.Redacted<string>) =>
        Effect.suspend((): Effect.Effect<Principal, Unauthorized | InvalidApiKey | ApiKeyEndpointNotAllowed | MissingScope, HttpRouter.RouteContext | HttpServerRequest.HttpServerRequest> => {
          const raw = Redacted.value(token)
          if (!isApiKey(raw)) return signIn.authenticate(raw)
          return Effect.flatMap(
            Effect.all([HttpRouter.RouteContext, HttpServerRequest.HttpServerRequest]),
            ([route, request]) => apiKeys.authenticate(raw, request.method, route.route.path)
          )
        })
    }
  })
)
