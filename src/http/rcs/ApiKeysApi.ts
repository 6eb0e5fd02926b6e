import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Scope } from "../../domain/access.ts"
import { Forbidden } from "../../domain/errors.ts"
import { Timestamp } from "../../domain/timestamps.ts"
import { Authentication } from "../Authentication.ts"
import { errorResponse, InvalidRequestResponse, NotFoundResponse } from "../errors.ts"

export const ForbiddenResponse = errorResponse(Forbidden, 403, "forbidden")

const ApiKeyRecord = Schema.Struct({
  key_id: Schema.String,
  name: Schema.String,
  prefix: Schema.String,
  last_four: Schema.String,
  scopes: Schema.Array(Schema.String),
  created_at: Schema.String,
  created_by: Schema.String,
  last_used_at: Schema.NullOr(Schema.String),
  expires_at: Schema.NullOr(Schema.String),
  revoked: Schema.Boolean
})

const Name = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(100))
const Expiry = Timestamp

export class ApiKeysApi extends HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.post("create", "/")
      .setPayload(Schema.Struct({
        name: Name,
        scopes: Schema.Array(Scope).pipe(Schema.minItems(1)),
        expires_at: Schema.optional(Schema.NullOr(Expiry))
      }))
      // The contract's fields, and the key's record as PATCH and the list show it.
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), key_id: Schema.String, raw_key: Schema.String, warning: Schema.String, key: ApiKeyRecord }))
      .addError(ForbiddenResponse)
      .addError(InvalidRequestResponse)
  )
  .add(
    HttpApiEndpoint.get("list", "/")
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), keys: Schema.Array(ApiKeyRecord), available_scopes: Schema.Array(Schema.String) }))
      .addError(ForbiddenResponse)
  )
  .add(
    HttpApiEndpoint.patch("update", "/:key_id")
      .setPath(Schema.Struct({ key_id: Schema.UUID }))
      .setPayload(Schema.Struct({
        name: Schema.optional(Name),
        expires_at: Schema.optional(Schema.NullOr(Expiry)),
        // Present only to refuse it clearly: a key's scopes never change.
        scopes: Schema.optional(Schema.Unknown)
      }))
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), key: ApiKeyRecord }))
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .addError(InvalidRequestResponse)
  )
  .add(
    HttpApiEndpoint.del("revoke", "/:key_id")
      .setPath(Schema.Struct({ key_id: Schema.UUID }))
      .addSuccess(Schema.Struct({ success: Schema.Literal(true) }))
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs/api-keys") {}
