import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Authentication.ts"
import { InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { ForbiddenResponse } from "../rcs/ApiKeysApi.ts"
import { ROTATION_DESCRIPTION, RotatedSecret } from "../rcs/WebhooksApi.ts"

const DeveloperWebhook = {
  webhook_id: Schema.String,
  url: Schema.String,
  events: Schema.Array(Schema.String),
  created_at: Schema.String
}

/** Settings, Developer: the account's secret key and its developer webhook, managed with a signed-in owner session. */
export class DeveloperApi extends HttpApiGroup.make("developer")
  .add(
    HttpApiEndpoint.post("generateSecretKey", "/secret-key")
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), secret_key: Schema.String, warning: Schema.String }))
      .addError(ForbiddenResponse)
  )
  .add(
    HttpApiEndpoint.put("setDeveloperWebhook", "/webhook")
      .setPayload(Schema.Struct({ url: Schema.String.pipe(Schema.maxLength(2048)) }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        created: Schema.Boolean,
        ...DeveloperWebhook,
        secret: Schema.optional(Schema.String).annotations({ description: "the signing secret, shown only when the endpoint is created" })
      }))
      .addError(InvalidRequestResponse)
      .addError(ForbiddenResponse)
      .annotate(OpenApi.Description, "Where WhatsApp events (message.sent|delivered|read|failed|received) are delivered. A later PUT changes the URL and keeps the id and secret.")
  )
  .add(
    HttpApiEndpoint.get("getDeveloperWebhook", "/webhook")
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), ...DeveloperWebhook }))
      .addError(NotFoundResponse)
      .addError(ForbiddenResponse)
  )
  .add(
    HttpApiEndpoint.post("rotateDeveloperWebhookSecret", "/webhook/rotate-secret")
      .addSuccess(RotatedSecret)
      .addError(NotFoundResponse)
      .addError(ForbiddenResponse)
      .annotate(OpenApi.Description, ROTATION_DESCRIPTION)
  )
  .add(
    HttpApiEndpoint.del("deleteDeveloperWebhook", "/webhook")
      .addSuccess(Schema.Struct({ success: Schema.Literal(true) }))
      .addError(NotFoundResponse)
      .addError(ForbiddenResponse)
  )
  .middleware(Authentication)
  .prefix("/api/v1/app/developer") {}
