import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Scope } from "../../domain/access.ts"
import { Forbidden } from "../../domain/errors.ts"
import { Timestamp } from "../../domain/timestamps.ts"
import { Authentication } from "../Authentication.ts"
import { errorResponse, InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { describe, documented } from "../openApiAnnotations.ts"

export const ForbiddenResponse = errorResponse(Forbidden, 403, "forbidden")

const ApiKeyRecord = Schema.Struct({
  key_id: Schema.String.annotations({ description: "The key's id (not the key)." }),
  name: Schema.String.annotations({ description: "The key's name, for people." }),
  prefix: Schema.String.annotations({ description: "What every key starts with: rcs_pk_live_." }),
  last_four: Schema.String.annotations({ description: "The key's last four characters, to tell keys apart." }),
  scopes: Schema.Array(Schema.String).annotations({ description: "What the key may read or do (a write scope grants its read half)." }),
  created_at: Schema.String.annotations({ description: "When it was made (ISO 8601, UTC)." }),
  created_by: Schema.String.annotations({ description: "The e-mail of the person who made it." }),
  last_used_at: Schema.NullOr(Schema.String).annotations({ description: "When it was last used (ISO 8601, UTC); null if never." }),
  expires_at: Schema.NullOr(Schema.String).annotations({ description: "When it stops working (ISO 8601, UTC); null: never." }),
  revoked: Schema.Boolean.annotations({ description: "Whether it was revoked (revoked keys stay listed)." })
}).annotations({ description: "An API key, without the key itself." })

const Name = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(100))
const Expiry = Timestamp

const KEY = {
  key_id: "5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a",
  name: "Reporting dashboard",
  prefix: "rcs_pk_live_",
  last_four: "x9Qa",
  scopes: ["broadcasts:read", "contacts:read"],
  created_at: "2026-03-01T09:00:00.000Z",
  created_by: "asha@example.com",
  last_used_at: "2026-03-02T08:12:45.000Z",
  expires_at: null,
  revoked: false
}

/** API keys of the account (owner, signed in). */
export class ApiKeysApi extends HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.post("create", "/")
      .setPayload(Schema.Struct({
        name: Name.pipe(describe("A name for people, 1 to 100 characters.")),
        scopes: Schema.Array(Scope).pipe(Schema.minItems(1), describe("What the key may read or do: at least one. A write scope grants its read half.")),
        expires_at: Schema.optional(Schema.NullOr(Expiry).pipe(describe("When the key stops working (ISO 8601, in the future); absent or null: never.")))
      }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        key_id: Schema.String.annotations({ description: "The key's id." }),
        raw_key: Schema.String.annotations({ description: "The key (rcs_pk_live_…): shown this once; only its hash is kept." }),
        warning: Schema.String.annotations({ description: "A reminder that the key cannot be shown again." }),
        // The key's record as PATCH and the list show it, beside the contract's fields.
        key: ApiKeyRecord.annotations({ description: "The key's record, as the list and PATCH show it (without the key)." })
      }))
      .addError(ForbiddenResponse)
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "Create an API key",
        description: "The owner, with a user token (a key cannot make keys). The key is answered this once; store it. It reaches only " +
          "the reads of its scopes listed under the `bearer` security scheme. Takes an Idempotency-Key: a replay shows the same key again.",
        request: { name: "Reporting dashboard", scopes: ["broadcasts:read", "contacts:read"], expires_at: "2027-01-01T00:00:00Z" },
        response: {
          success: true,
          key_id: KEY.key_id,
          raw_key: "rcs_pk_live_Vb3kP0s9YwQ2mX7nL4rT8uZ1cE6hJ5aGdF2iK9oRx9Qa",
          warning: "Store this key now: it is shown only once and cannot be recovered.",
          key: { ...KEY, name: "Reporting dashboard", scopes: ["broadcasts:read", "contacts:read"], expires_at: "2027-01-01T00:00:00.000Z", last_used_at: null }
        },
        returns: "The new key, shown this once."
      }))
  )
  .add(
    HttpApiEndpoint.get("list", "/")
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        keys: Schema.Array(ApiKeyRecord).annotations({ description: "Every key of the account, revoked ones included." }),
        available_scopes: Schema.Array(Schema.String).annotations({ description: "The scopes a key may be given." }),
        grants_today: Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) }).annotations({
          description: "What each of available_scopes reaches in this release, as the read scopes it satisfies: keys only read (GET) " +
            "today, so a :write scope grants its :read half; writes with a key are announced, not available (403 api_key_endpoint_not_allowed)."
        })
      }))
      .addError(ForbiddenResponse)
      .annotateContext(documented({
        summary: "List the API keys",
        description: "Every key of the account (never the keys themselves). The owner, with a user token.",
        response: {
          success: true,
          keys: [KEY],
          available_scopes: ["broadcasts:read", "broadcasts:write", "contacts:read", "contacts:write", "auto_replies:read", "webhooks:read", "webhooks:write"],
          grants_today: {
            "broadcasts:read": ["broadcasts:read"],
            "broadcasts:write": ["broadcasts:read"],
            "contacts:read": ["contacts:read"],
            "contacts:write": ["contacts:read"],
            "auto_replies:read": ["auto_replies:read"],
            "webhooks:read": ["webhooks:read"],
            "webhooks:write": ["webhooks:read"]
          }
        },
        returns: "The keys."
      }))
  )
  .add(
    HttpApiEndpoint.patch("update", "/:key_id")
      .setPath(Schema.Struct({ key_id: Schema.UUID.annotations({ description: "The key's id." }) }))
      .setPayload(Schema.Struct({
        name: Schema.optional(Name.pipe(describe("A new name, 1 to 100 characters."))),
        expires_at: Schema.optional(Schema.NullOr(Expiry).pipe(describe("A new expiry (ISO 8601, in the future); null: never."))),
        // Present only to refuse it clearly: a key's scopes never change.
        scopes: Schema.optional(Schema.Unknown.annotations({ description: "Refused (400): a key's scopes never change; make a new key instead." }))
      }))
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), key: ApiKeyRecord }))
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "Rename an API key or change its expiry",
        description: "Only the fields given change; a key's scopes never do. A revoked key is 404. The owner, with a user token.",
        request: { name: "Reporting dashboard (2026)", expires_at: null },
        response: { success: true, key: { ...KEY, name: "Reporting dashboard (2026)" } },
        returns: "The key as it is now."
      }))
  )
  .add(
    HttpApiEndpoint.del("revoke", "/:key_id")
      .setPath(Schema.Struct({ key_id: Schema.UUID.annotations({ description: "The key's id." }) }))
      .addSuccess(Schema.Struct({ success: Schema.Literal(true) }))
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Revoke an API key",
        description: "The key stops working at once, on every node. It stays listed, revoked. The owner, with a user token.",
        response: { success: true },
        returns: "Revoked."
      }))
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs/api-keys")
  .annotate(OpenApi.Description, "API keys (`rcs_pk_live_…`) for programs that read the account's RCS data: made and revoked by the owner, signed in.") {}
