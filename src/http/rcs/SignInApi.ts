import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { InvalidCode, InvalidCredentials, TooManyAttempts } from "../../domain/errors.ts"
import { Email, Role } from "../../domain/identity.ts"
import { Authentication, UnauthorizedResponse } from "../Authentication.ts"
import { errorResponse, InvalidRequestResponse } from "../errors.ts"

const InvalidCredentialsResponse = errorResponse(InvalidCredentials, 401, "invalid_credentials")
const InvalidCodeResponse = errorResponse(InvalidCode, 401, "invalid_code")
const TooManyAttemptsResponse = errorResponse(TooManyAttempts, 429, "too_many_attempts")

const Secret = Schema.Redacted(Schema.String.pipe(Schema.maxLength(1024)))

export const LoginUser = Schema.Struct({
  user_id: Schema.String,
  email: Schema.String,
  account_label: Schema.String,
  member_id: Schema.String,
  assigned_bots: Schema.Array(Schema.String)
})

export const TokenAnswer = Schema.Struct({
  success: Schema.Literal(true),
  token: Schema.String,
  role: Role,
  user: LoginUser
})

export const LoginAnswer = Schema.Union(
  TokenAnswer,
  Schema.Struct({ success: Schema.Literal(true), requires_2fa: Schema.Literal(true), message: Schema.String }),
  Schema.Struct({
    success: Schema.Literal(true),
    need_account_pick: Schema.Literal(true),
    session_token: Schema.String,
    accounts: Schema.Array(
      Schema.Struct({ account_id: Schema.String, role: Role, label: Schema.String, member_id: Schema.optional(Schema.String) })
    )
  })
)

const Ok = Schema.Struct({ success: Schema.Literal(true) })

/** Sign-in: no credential needed (the login answers are the contract's three). */
export class SignInApi extends HttpApiGroup.make("signIn")
  .add(
    HttpApiEndpoint.post("login", "/login")
      .setPayload(Schema.Struct({ email: Email, password: Secret, totp_code: Schema.optional(Schema.String.pipe(Schema.maxLength(64))) }))
      .addSuccess(LoginAnswer)
      .addError(InvalidCredentialsResponse)
      .addError(InvalidCodeResponse)
      .addError(TooManyAttemptsResponse)
      .addError(InvalidRequestResponse)
  )
  .add(
    HttpApiEndpoint.post("selectAccount", "/select-account")
      .setPayload(Schema.Struct({ session_token: Schema.String.pipe(Schema.maxLength(4096)), account_id: Schema.String }))
      .addSuccess(TokenAnswer)
      .addError(UnauthorizedResponse)
      .addError(InvalidRequestResponse)
  )
  .prefix("/api/v1/rcs/auth") {}

/** The signed-in person's own security: password and second factor. */
export class AccountSecurityApi extends HttpApiGroup.make("accountSecurity")
  .add(
    HttpApiEndpoint.post("changePassword", "/password")
      .setPayload(Schema.Struct({ current_password: Secret, new_password: Secret }))
      .addSuccess(Ok)
      .addError(InvalidCredentialsResponse)
      .addError(InvalidCodeResponse)
      .addError(TooManyAttemptsResponse)
      .addError(InvalidRequestResponse)
  )
  .add(
    HttpApiEndpoint.post("setupTwoFactor", "/2fa/setup")
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), secret: Schema.String, otpauth_uri: Schema.String }))
      .addError(InvalidRequestResponse)
  )
  .add(
    HttpApiEndpoint.post("enableTwoFactor", "/2fa/enable")
      .setPayload(Schema.Struct({ totp_code: Schema.String.pipe(Schema.maxLength(64)) }))
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), recovery_codes: Schema.Array(Schema.String) }))
      .addError(InvalidCodeResponse)
      .addError(InvalidRequestResponse)
  )
  .add(
    HttpApiEndpoint.post("disableTwoFactor", "/2fa/disable")
      .setPayload(Schema.Struct({ password: Secret, totp_code: Schema.String.pipe(Schema.maxLength(64)) }))
      .addSuccess(Ok)
      .addError(InvalidCredentialsResponse)
      .addError(InvalidCodeResponse)
      .addError(TooManyAttemptsResponse)
      .addError(InvalidRequestResponse)
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs/auth") {}
