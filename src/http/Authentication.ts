import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context, Effect, Layer, Redacted } from "effect"
import { Unauthorized } from "../domain/errors.ts"
import type { Principal } from "../domain/signIn.ts"
import { SignIn } from "../security/SignIn.ts"
import { errorResponse } from "./errors.ts"

/** Who the request acts as; provided by the Authentication middleware. */
export class CurrentPrincipal extends Context.Tag("herald/http/CurrentPrincipal")<CurrentPrincipal, Principal>() {}

export const UnauthorizedResponse = errorResponse(Unauthorized, 401, "unauthorized")

/** Bearer user token (JWT) on the RCS API. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: UnauthorizedResponse,
  provides: CurrentPrincipal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.map(SignIn, (signIn) => ({
    bearer: (token: Redacted.Redacted<string>) => signIn.authenticate(Redacted.value(token))
  }))
)
