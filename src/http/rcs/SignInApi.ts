import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { InvalidCode, InvalidCredentials, TooManyAttempts } from "../../domain/errors.ts"
import { Email, Role } from "../../domain/identity.ts"
import { Authentication, UnauthorizedResponse } from "../Authentication.ts"
import { errorResponse, InvalidRequestResponse } from "../errors.ts"
import { describe, documented } from "../openApiAnnotations.ts"

export const InvalidCredentialsResponse = errorResponse(InvalidCredentials, 401, "invalid_credentials")
export const InvalidCodeResponse = errorResponse(InvalidCode, 401, "invalid_code")
export const TooManyAttemptsResponse = errorResponse(TooManyAttempts, 429, "too_many_attempts")

export const Secret = Schema.Redacted(Schema.String.pipe(Schema.maxLength(1024)))
export const TotpCode = Schema.String.pipe(Schema.maxLength(64))

const RoleField = Role.annotations({ description: "The person's role in the account: owner, operator (also writes) or viewer (reads)." })

export const LoginUser = Schema.Struct({
  user_id: Schema.String.annotations({ description: "The person's id." }),
  email: Schema.String.annotations({ description: "The person's e-mail, lower-case." }),
  account_label: Schema.String.annotations({ description: "The account's name." }),
  member_id: Schema.String.annotations({ description: "The person's membership of the account (the team member id)." }),
  assigned_bots: Schema.Array(Schema.String).annotations({ description: "The bots the person may act on: [\"*\"] for every bot, or bot ids." })
}).annotations({ description: "Who signed in, in which account." })

export const TokenAnswer = Schema.Struct({
  success: Schema.Literal(true),
  token: Schema.String.annotations({ description: "The user token: an EdDSA JWT to send as Authorization: Bearer on /api/v1/rcs (its keys at /.well-known/jwks.json)." }),
  role: RoleField,
  user: LoginUser
})

export const LoginAnswer = Schema.Union(
  TokenAnswer,
  Schema.Struct({
    success: Schema.Literal(true),
    requires_2fa: Schema.Literal(true).annotations({ description: "The person has two-factor on: send the login again with totp_code." }),
    message: Schema.String.annotations({ description: "What to do next, for a person." })
  }),
  Schema.Struct({
    success: Schema.Literal(true),
    need_account_pick: Schema.Literal(true).annotations({ description: "The person belongs to several accounts: choose one with POST /api/v1/rcs/auth/select-account." }),
    session_token: Schema.String.annotations({ description: "Valid 15 minutes, for POST /api/v1/rcs/auth/select-account only." }),
    accounts: Schema.Array(
      Schema.Struct({
        account_id: Schema.String.annotations({ description: "The account's id, for select-account." }),
        role: RoleField,
        label: Schema.String.annotations({ description: "The account's name." }),
        member_id: Schema.optional(Schema.String.annotations({ description: "The person's membership of the account." }))
      })
    ).annotations({ description: "The accounts the person belongs to." })
  })
)

const Ok = Schema.Struct({ success: Schema.Literal(true) })

const USER = {
  user_id: "4b3a2c1d-0e9f-4a8b-9c7d-6e5f4a3b2c1d",
  email: "asha@example.com",
  account_label: "Acme Retail",
  member_id: "9f8e7d6c-5b4a-4392-8a1b-0c9d8e7f6a5b",
  assigned_bots: ["*"]
}
const TOKEN = "eyJhbGciOiJFZERTQSIsImtpZCI6Ims0In0.eyJzdWIiOiI0YjNhMmMxZCJ9.c2lnbmF0dXJl"
const TOKEN_ANSWER = { success: true, token: TOKEN, role: "owner", user: USER }

/** Sign-in: no credential needed (the login answers are the contract's three). */
export class SignInApi extends HttpApiGroup.make("signIn")
  .add(
    HttpApiEndpoint.post("login", "/login")
      .setPayload(Schema.Struct({
        email: Email.pipe(describe("The person's e-mail (any case).")),
        password: Secret.pipe(describe("The person's password.")),
        totp_code: Schema.optional(TotpCode.pipe(describe("The current code of the person's authenticator app, or one of their recovery codes: needed when two-factor is on.")))
      }))
      .addSuccess(LoginAnswer)
      .addError(InvalidCredentialsResponse)
      .addError(InvalidCodeResponse)
      .addError(TooManyAttemptsResponse)
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "Sign in with e-mail and password",
        description: "Answers one of three: a user token (with the role and the person); `requires_2fa` when two-factor is on and no " +
          "`totp_code` was sent; or `need_account_pick` with a 15-minute `session_token` when the person belongs to several accounts. " +
          "Ten wrong passwords or five wrong codes for one e-mail lock it for 15 minutes (429 `too_many_attempts`). No credential.",
        request: { email: "asha@example.com", password: "correct horse battery staple" },
        responses: {
          token: { summary: "Signed in: a user token", value: TOKEN_ANSWER },
          twoFactor: { summary: "Two-factor is on: send totp_code too", value: { success: true, requires_2fa: true, message: "two-factor code required" } },
          accountPick: {
            summary: "Several accounts: choose one",
            value: {
              success: true,
              need_account_pick: true,
              session_token: "eyJhbGciOiJFZERTQSJ9.eyJwdXJwb3NlIjoiYWNjb3VudF9waWNrIn0.c2ln",
              accounts: [
                { account_id: "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b", role: "owner", label: "Acme Retail", member_id: USER.member_id },
                { account_id: "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", role: "viewer", label: "Acme Wholesale", member_id: "1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f" }
              ]
            }
          }
        },
        returns: "A user token, or what the sign-in needs next."
      }))
  )
  .add(
    HttpApiEndpoint.post("selectAccount", "/select-account")
      .setPayload(Schema.Struct({
        session_token: Schema.String.pipe(Schema.maxLength(4096), describe("The session_token the login answered (valid 15 minutes).")),
        account_id: Schema.String.annotations({ description: "One of the accounts the login listed." })
      }))
      .addSuccess(TokenAnswer)
      .addError(UnauthorizedResponse)
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "Choose the account to sign in to",
        description: "Second step of a login that answered `need_account_pick`: exchanges its session token for a user token of the " +
          "chosen account. An expired or altered session token, or an account the person does not belong to, is 401 `unauthorized`.",
        request: { session_token: "eyJhbGciOiJFZERTQSJ9.eyJwdXJwb3NlIjoiYWNjb3VudF9waWNrIn0.c2ln", account_id: "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b" },
        response: TOKEN_ANSWER,
        returns: "A user token for the chosen account."
      }))
  )
  .prefix("/api/v1/rcs/auth")
  .annotate(OpenApi.Description, "Signing in to /api/v1/rcs: e-mail and password (and a two-factor code) for a user token (JWT).") {}

/** The signed-in person's own security: password and second factor. */
export class AccountSecurityApi extends HttpApiGroup.make("accountSecurity")
  .add(
    HttpApiEndpoint.post("changePassword", "/password")
      .setPayload(Schema.Struct({
        current_password: Secret.pipe(describe("The password now.")),
        new_password: Secret.pipe(describe("The new password."))
      }))
      .addSuccess(Ok)
      .addError(InvalidCredentialsResponse)
      .addError(InvalidCodeResponse)
      .addError(TooManyAttemptsResponse)
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "Change your password",
        description: "The signed-in person's own password. Every token issued to the person before the change stops working at once, " +
          "this one included: sign in again. A user token only (an API key is 403 `api_key_endpoint_not_allowed`).",
        request: { current_password: "correct horse battery staple", new_password: "a longer passphrase of mine" },
        response: { success: true },
        returns: "Changed; sign in again."
      }))
  )
  .add(
    HttpApiEndpoint.post("setupTwoFactor", "/2fa/setup")
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        secret: Schema.String.annotations({ description: "The TOTP secret, base32, for authenticator apps that take it typed." }),
        otpauth_uri: Schema.String.annotations({ description: "The otpauth:// URI to show as a QR code." })
      }))
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "Start two-factor set-up",
        description: "Makes a new TOTP secret for the signed-in person. Two-factor is not on until POST /api/v1/rcs/auth/2fa/enable " +
          "confirms a code of it. A user token only.",
        response: { success: true, secret: "JBSWY3DPEHPK3PXP", otpauth_uri: "otpauth://totp/Herald:asha%40example.com?issuer=Herald&secret=JBSWY3DPEHPK3PXP&algorithm=SHA1&digits=6&period=30" },
        returns: "The secret, to put in an authenticator app."
      }))
  )
  .add(
    HttpApiEndpoint.post("enableTwoFactor", "/2fa/enable")
      .setPayload(Schema.Struct({ totp_code: TotpCode.pipe(describe("The current code of the authenticator app set up with the new secret.")) }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        recovery_codes: Schema.Array(Schema.String).annotations({ description: "Ten single-use codes that stand in for the app's code: shown this once." })
      }))
      .addError(InvalidCodeResponse)
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "Turn two-factor on",
        description: "Confirms the secret of /2fa/setup with a current code; from then on, login needs `totp_code`. A user token only.",
        request: { totp_code: "492039" },
        response: { success: true, recovery_codes: ["k7m2q-9x4pw", "p3w8z-6n1hc", "h5t2r-8c7bd", "b9v4y-2m6sk", "d6s1f-3j8qa", "g2k7l-5q9mx", "n8x3w-4p2tz", "t1c6v-9b5rj", "r4z8m-7h3ne", "y5q2j-6d1gu"] },
        returns: "On; the recovery codes, shown this once."
      }))
  )
  .add(
    HttpApiEndpoint.post("disableTwoFactor", "/2fa/disable")
      .setPayload(Schema.Struct({
        password: Secret.pipe(describe("The person's password.")),
        totp_code: TotpCode.pipe(describe("A current code of the authenticator app, or a recovery code."))
      }))
      .addSuccess(Ok)
      .addError(InvalidCredentialsResponse)
      .addError(InvalidCodeResponse)
      .addError(TooManyAttemptsResponse)
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "Turn two-factor off",
        description: "Needs the password and a current code (or a recovery code). Wrong ones count towards the sign-in lock. A user token only.",
        request: { password: "correct horse battery staple", totp_code: "492039" },
        response: { success: true },
        returns: "Off."
      }))
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs/auth")
  .annotate(OpenApi.Description, "The signed-in person's own password and two-factor authentication (a user token, never an API key).") {}
