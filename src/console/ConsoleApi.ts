import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware } from "@effect/platform"
import { Schema } from "effect"
import { Email, Role } from "../domain/identity.ts"
import { withEnvelopeErrors, withStrictPayloads } from "../http/Api.ts"
import { UnauthorizedResponse } from "../http/Authentication.ts"
import { errorResponse, InvalidRequestResponse, NotFoundResponse } from "../http/errors.ts"
import { InvalidCodeResponse, InvalidCredentialsResponse, Secret, TooManyAttemptsResponse, TotpCode } from "../http/rcs/SignInApi.ts"
import { CsrfFailed } from "./errors.ts"

/**
 * The console's own routes (docs/console.md): its session and the operator view. Everything else
 * the console shows it reads through the REST API (src/console/ConsoleGate.ts). Not part of the
 * integrator's API, so not in the OpenAPI document; declared with HttpApi all the same, so they are
 * decoded, answered and served as every route is.
 */

export const CsrfFailedResponse = errorResponse(CsrfFailed, 403, "csrf_failed")

const Session = Schema.Struct({
  email: Schema.String,
  role: Role,
  member_id: Schema.String,
  account_id: Schema.String,
  account_label: Schema.String,
  assigned_bots: Schema.Array(Schema.String),
  expires_at: Schema.String
})

export const SessionState = Schema.Union(
  Schema.Struct({ success: Schema.Literal(true), signed_in: Schema.Literal(false) }),
  Schema.Struct({ success: Schema.Literal(true), signed_in: Schema.Literal(true), csrf_token: Schema.String, session: Session })
)

export const SignInAnswer = Schema.Union(
  Schema.Struct({ success: Schema.Literal(true), status: Schema.Literal("signed_in"), csrf_token: Schema.String, session: Session }),
  Schema.Struct({ success: Schema.Literal(true), status: Schema.Literal("requires_2fa"), message: Schema.String }),
  Schema.Struct({
    success: Schema.Literal(true),
    status: Schema.Literal("need_account_pick"),
    accounts: Schema.Array(Schema.Struct({ account_id: Schema.String, label: Schema.String, role: Role }))
  })
)

const Ok = Schema.Struct({ success: Schema.Literal(true) })

export class ConsoleSessionApi extends HttpApiGroup.make("consoleSession")
  .add(HttpApiEndpoint.get("read", "/").addSuccess(SessionState))
  .add(
    HttpApiEndpoint.post("signIn", "/")
      .setPayload(Schema.Struct({ email: Email, password: Secret, totp_code: Schema.optional(TotpCode) }))
      .addSuccess(SignInAnswer)
      .addError(InvalidCredentialsResponse)
      .addError(InvalidCodeResponse)
      .addError(TooManyAttemptsResponse)
      .addError(InvalidRequestResponse)
      .addError(UnauthorizedResponse)
  )
  .add(
    HttpApiEndpoint.post("pickAccount", "/account")
      .setPayload(Schema.Struct({ account_id: Schema.String.pipe(Schema.maxLength(64)) }))
      .addSuccess(SignInAnswer)
      .addError(UnauthorizedResponse)
      .addError(InvalidRequestResponse)
  )
  .add(HttpApiEndpoint.del("signOut", "/").addSuccess(Ok).addError(CsrfFailedResponse))
  .prefix("/console/api/session") {}

/** The operator view's access: its own token (OpsAccess), as a bearer or a signed cookie. */
export class OpsAuthorization extends HttpApiMiddleware.Tag<OpsAuthorization>()("OpsAuthorization", {
  failure: Schema.Union(NotFoundResponse, UnauthorizedResponse, CsrfFailedResponse)
}) {}

const Count = Schema.Int

export const ClusterAnswer = Schema.Struct({
  success: Schema.Literal(true),
  partitions_per_kind: Count,
  nodes: Schema.Array(Schema.Struct({ node_id: Schema.String, role: Schema.String, host: Schema.String, pid: Count, started_at: Schema.String })),
  kinds: Schema.Array(Schema.Struct({
    kind: Schema.String,
    partitions: Schema.Array(Schema.Struct({ partition: Count, owner: Schema.NullOr(Schema.String), epoch: Count, since: Schema.String })),
    backlog: Schema.Struct({ pending: Count, ack_pending: Count, redelivered: Count })
  }))
})

export const PoisonAnswer = Schema.Struct({
  success: Schema.Literal(true),
  items: Schema.Array(Schema.Struct({
    poison_id: Schema.String,
    kind: Schema.String,
    partition: Count,
    actor_key: Schema.String,
    seq: Schema.String,
    error: Schema.String,
    attempts: Count,
    parked_at: Schema.String,
    command: Schema.Unknown
  }))
})

export class ConsoleOpsApi extends HttpApiGroup.make("consoleOps")
  .add(
    HttpApiEndpoint.get("session", "/session")
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), signed_in: Schema.Boolean, csrf_token: Schema.optional(Schema.String) }))
      .addError(NotFoundResponse)
  )
  .add(
    HttpApiEndpoint.post("signIn", "/session")
      .setPayload(Schema.Struct({ token: Schema.Redacted(Schema.String.pipe(Schema.maxLength(1024))) }))
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), signed_in: Schema.Literal(true), csrf_token: Schema.String }))
      .addError(NotFoundResponse)
      .addError(UnauthorizedResponse)
  )
  .add(HttpApiEndpoint.del("signOut", "/session").addSuccess(Ok).addError(NotFoundResponse).addError(CsrfFailedResponse))
  .add(HttpApiEndpoint.get("cluster", "/cluster").addSuccess(ClusterAnswer).middleware(OpsAuthorization))
  .add(HttpApiEndpoint.get("poison", "/poison").addSuccess(PoisonAnswer).middleware(OpsAuthorization))
  .add(
    HttpApiEndpoint.post("redrive", "/poison/:poison_id/redrive")
      .setPath(Schema.Struct({ poison_id: Schema.String }))
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), poison_id: Schema.String, kind: Schema.String, key: Schema.String }))
      .addError(NotFoundResponse)
      .middleware(OpsAuthorization)
  )
  .prefix("/console/api/ops") {}

export const ConsoleApi = withStrictPayloads(withEnvelopeErrors(HttpApi.make("console").add(ConsoleSessionApi).add(ConsoleOpsApi)))
