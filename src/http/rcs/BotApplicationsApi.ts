import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Authentication.ts"
import { ConflictResponse, InvalidRequestResponse } from "../errors.ts"
import { ForbiddenResponse } from "./ApiKeysApi.ts"

const Text = (max: number) => Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(max))

/** POST /api/v1/rcs/apply (contract; DESIGN.md, Bots). */
export class BotApplicationsApi extends HttpApiGroup.make("botApplications")
  .add(
    HttpApiEndpoint.post("apply", "/apply")
      .setPayload(Schema.Struct({
        bot_name: Text(100),
        company_name: Text(200),
        // Checked (checksum, state code) by the handler, which names what is wrong.
        company_gstin: Schema.String.pipe(Schema.maxLength(64)),
        brand_website: Schema.String.pipe(Schema.maxLength(2048)),
        use_case: Schema.Literal("promotional", "transactional", "otp")
      }))
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), bot_id: Schema.String, status: Schema.Literal("pending") }))
      .addError(InvalidRequestResponse)
      .addError(ConflictResponse)
      .addError(ForbiddenResponse)
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs") {}
