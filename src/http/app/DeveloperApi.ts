import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../Authentication.ts"
import { InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { describe, documented } from "../openApiAnnotations.ts"
import { ForbiddenResponse } from "../rcs/ApiKeysApi.ts"
import { ROTATION_DESCRIPTION, RotatedSecret } from "../rcs/WebhooksApi.ts"

const DeveloperWebhook = {
  webhook_id: Schema.String.annotations({ description: "The endpoint's id (GET /api/v1/rcs/webhooks lists it too, with channel whatsapp)." }),
  url: Schema.String.annotations({ description: "Where the events are POSTed." }),
  events: Schema.Array(Schema.String).annotations({
    description: "The event types it receives: every WhatsApp event (message.sent, message.delivered, message.read, message.failed, message.received, " +
      "conversation.handoff)."
  }),
  created_at: Schema.String.annotations({ description: "When the endpoint was created (ISO 8601, UTC)." })
}

const OWNER = "The owner, with a user token (an API key is 403 `api_key_endpoint_not_allowed`, another role 403 `forbidden`)."

const WEBHOOK = {
  webhook_id: "0a1b2c3d-4e5f-4607-8899-aabbccddeeff",
  url: "https://backend.example.com/herald",
  events: ["message.sent", "message.delivered", "message.read", "message.failed", "message.received", "conversation.handoff", "customer.opted_out", "customer.opted_in"],
  created_at: "2026-03-01T09:30:00.000Z"
}

/** Settings, Developer: the account's secret key and its developer webhook, managed with a signed-in owner session. */
export class DeveloperApi extends HttpApiGroup.make("developer")
  .add(
    HttpApiEndpoint.post("generateSecretKey", "/secret-key")
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        secret_key: Schema.String.annotations({ description: "The new secret key (sk_live_…): shown this once; only its hash is kept." }),
        warning: Schema.String.annotations({ description: "A reminder that the key is shown only once and that generating another one invalidates it." })
      }))
      .addError(ForbiddenResponse)
      .annotateContext(documented({
        summary: "Generate the secret key",
        description: "Makes the account's secret key (`sk_live_…`), the credential of /api/v1/app, the public API and GraphQL, and replaces the one " +
          "it had: the old key stops working on its next request, on every node. The key is answered this once; store it. Takes an Idempotency-Key: " +
          `a replay shows the same key again. ${OWNER}`,
        response: {
          success: true,
          secret_key: "sk_live_n6F9dbhWOFzC1FJhoLrp9tN45qD1H4tIMSwzii8z7J0",
          warning: "Store this key now: it is shown only once. Generating another one invalidates this one at once."
        },
        returns: "The new key, shown this once."
      }))
  )
  .add(
    HttpApiEndpoint.put("setDeveloperWebhook", "/webhook")
      .setPayload(Schema.Struct({
        url: Schema.String.pipe(
          Schema.maxLength(2048),
          describe("Where to POST the events: an absolute http or https URL of at most 2,048 characters, without credentials, and not a private or " +
            "loopback address (unless the server allows them).")
        )
      }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        created: Schema.Boolean.annotations({
          description: "True when this request created the endpoint (the answer then holds its secret); false when it changed the URL."
        }),
        ...DeveloperWebhook,
        secret: Schema.optional(Schema.String).annotations({
          description: "The signing secret (whsec_…), present only when the endpoint is created: verify each request's webhook-signature with it."
        })
      }))
      .addError(InvalidRequestResponse)
      .addError(ForbiddenResponse)
      .annotateContext(documented({
        summary: "Set the developer webhook's URL",
        description: "Where WhatsApp events (message.sent, message.delivered, message.read, message.failed, message.received, conversation.handoff) " +
          "are delivered, signed per Standard Webhooks, with retries, dead letters and replay as for RCS endpoints. The first PUT creates the " +
          `endpoint and answers its secret, this once; a later PUT changes the URL and keeps the id and the secret. ${OWNER}`,
        request: { url: "https://backend.example.com/herald" },
        responses: {
          created: { summary: "The endpoint was created", value: { success: true, created: true, ...WEBHOOK, secret: "whsec_/DzIFiOq5UawQmHqg1DQ0o1KzGeujP1n" } },
          changed: { summary: "The URL of the existing endpoint changed", value: { success: true, created: false, ...WEBHOOK } }
        },
        returns: "The developer webhook."
      }))
  )
  .add(
    HttpApiEndpoint.get("getDeveloperWebhook", "/webhook")
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), ...DeveloperWebhook }))
      .addError(NotFoundResponse)
      .addError(ForbiddenResponse)
      .annotateContext(documented({
        summary: "Read the developer webhook",
        description: `The developer webhook, without its secret; 404 when none is configured. ${OWNER}`,
        response: { success: true, ...WEBHOOK },
        returns: "The developer webhook."
      }))
  )
  .add(
    HttpApiEndpoint.post("rotateDeveloperWebhookSecret", "/webhook/rotate-secret")
      .addSuccess(RotatedSecret)
      .addError(NotFoundResponse)
      .addError(ForbiddenResponse)
      .annotateContext(documented({
        summary: "Rotate the developer webhook's signing secret",
        description: `${ROTATION_DESCRIPTION} 404 when no developer webhook is configured. ${OWNER}`,
        response: {
          success: true,
          webhook_id: WEBHOOK.webhook_id,
          secret: "whsec_q3Xz7mB1kP9sT4vW2yA6cE8gH0jL5nR7",
          previous_secret_expires_at: "2026-03-03T10:00:00.000Z"
        },
        returns: "The new secret, shown this once."
      }))
  )
  .add(
    HttpApiEndpoint.del("deleteDeveloperWebhook", "/webhook")
      .addSuccess(Schema.Struct({ success: Schema.Literal(true) }))
      .addError(NotFoundResponse)
      .addError(ForbiddenResponse)
      .annotateContext(documented({
        summary: "Delete the developer webhook",
        description: `Removes the endpoint: WhatsApp events that happen afterwards are not delivered. 404 when none is configured. ${OWNER}`,
        response: { success: true },
        returns: "Deleted."
      }))
  )
  .middleware(Authentication)
  .prefix("/api/v1/app/developer")
  .annotate(OpenApi.Description, "Settings, Developer: the account's secret key and the developer webhook that receives its WhatsApp events; " +
    "managed by the owner, signed in.") {}
