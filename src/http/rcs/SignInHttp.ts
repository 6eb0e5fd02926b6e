import { Effect, Option } from "effect"
import { SignIn } from "../../security/SignIn.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"
import { presentDone, presentLogin, presentRecoveryCodes, presentToken, presentTwoFactorSetup } from "./presentSignIn.ts"

export const SignInHttpLive = apiGroup(HeraldApi, "signIn", (handlers) =>
  Effect.map(SignIn, (signIn) =>
    handlers
      .handle("login", ({ payload }) =>
        signIn.login({ email: payload.email, password: payload.password, totpCode: Option.fromNullable(payload.totp_code) }).pipe(Effect.map(presentLogin)))
      .handle("selectAccount", ({ payload }) =>
        signIn.selectAccount({ sessionToken: payload.session_token, accountId: payload.account_id }).pipe(Effect.map(presentToken)))))

export const AccountSecurityHttpLive = apiGroup(HeraldApi, "accountSecurity", (handlers) =>
  Effect.map(SignIn, (signIn) =>
    handlers
      .handle("changePassword", ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) => signIn.changePassword(p, payload.current_password, payload.new_password)).pipe(Effect.map(presentDone)))
      .handle("setupTwoFactor", () => Effect.flatMap(CurrentPrincipal, signIn.setupTwoFactor).pipe(Effect.map(presentTwoFactorSetup)))
      .handle("enableTwoFactor", ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) => signIn.enableTwoFactor(p, payload.totp_code)).pipe(Effect.map(presentRecoveryCodes)))
      .handle("disableTwoFactor", ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) => signIn.disableTwoFactor(p, payload.password, payload.totp_code)).pipe(Effect.map(presentDone)))))
