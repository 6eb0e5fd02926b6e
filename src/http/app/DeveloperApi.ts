import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Authentication.ts"
import { ForbiddenResponse } from "../rcs/ApiKeysApi.ts"

/** Settings, Developer: the account's secret key, generated with a signed-in owner session. */
export class DeveloperApi extends HttpApiGroup.make("developer")
  .add(
    HttpApiEndpoint.post("generateSecretKey", "/secret-key")
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), secret_key: Schema.String, warning: Schema.String }))
      .addError(ForbiddenResponse)
  )
  .middleware(Authentication)
  .prefix("/api/v1/app/developer") {}
