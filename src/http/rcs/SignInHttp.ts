import { Effect, Option } from "effect"
import { SignIn } from "../../security/SignIn.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"

export const SignInHttpLive = apiGroup(HeraldApi, "signIn", (handlers) =>
  Effect.map(SignIn, (signIn) =>
    handlers
      .handle("login", ({ payload }) =>
        signIn.login({ email: payload.email, password: payload.password, totpCode: Option.fromNullable(payload.totp_code) }))
      .handle("selectAccount", ({ payload }) => signIn.selectAccount({ sessionToken: payload.session_token, accountId: payload.account_id }))))

export const AccountSecurityHttpLive = apiGroup(HeraldApi, "accountSecurity", (handlers) =>
  Effect.map(SignIn, (signIn) =>
    handlers
      .handle("changePassword", ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) => signIn.changePassword(p, payload.current_password, payload.new_password)))
      .handle("setupTwoFactor", () => Effect.flatMap(CurrentPrincipal, signIn.setupTwoFactor))
      .handle("enableTwoFactor", ({ payload }) => Effect.flatMap(CurrentPrincipal, (p) => signIn.enableTwoFactor(p, payload.totp_code)))
      .handle("disableTwoFactor", ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) => signIn.disableTwoFactor(p, payload.password, payload.totp_code)))))
