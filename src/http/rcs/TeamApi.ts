import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Email } from "../../domain/identity.ts"
import { Authentication } from "../Authentication.ts"
import { ConflictResponse, InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { ForbiddenResponse } from "./ApiKeysApi.ts"

const Member = Schema.Struct({
  member_id: Schema.String,
  user_id: Schema.String,
  email: Schema.String,
  role: Schema.Literal("owner", "operator", "viewer"),
  assigned_bots: Schema.Array(Schema.String),
  created_at: Schema.String
})

const MemberRole = Schema.Literal("operator", "viewer")
const Bots = Schema.Array(Schema.String.pipe(Schema.maxLength(64))).pipe(Schema.maxItems(1000))

export class TeamApi extends HttpApiGroup.make("team")
  .add(HttpApiEndpoint.get("list", "/").addSuccess(Schema.Struct({ success: Schema.Literal(true), members: Schema.Array(Member) })))
  .add(
    HttpApiEndpoint.post("add", "/")
      .setPayload(Schema.Struct({
        email: Email,
        role: MemberRole,
        assigned_bots: Bots,
        password: Schema.optional(Schema.Redacted(Schema.String.pipe(Schema.maxLength(1024))))
      }))
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), member: Member, user_created: Schema.Boolean }))
      .addError(ForbiddenResponse)
      .addError(ConflictResponse)
      .addError(InvalidRequestResponse)
  )
  .add(
    HttpApiEndpoint.patch("update", "/:member_id")
      .setPath(Schema.Struct({ member_id: Schema.String }))
      .setPayload(Schema.Struct({ role: Schema.optional(MemberRole), assigned_bots: Schema.optional(Bots) }))
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), member: Member }))
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .addError(InvalidRequestResponse)
  )
  .add(
    HttpApiEndpoint.del("remove", "/:member_id")
      .setPath(Schema.Struct({ member_id: Schema.String }))
      .addSuccess(Schema.Struct({ success: Schema.Literal(true) }))
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs/team") {}
