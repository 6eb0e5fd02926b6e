import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { EVENT_TYPES } from "../../webhooks/Webhooks.ts"
import { Authentication } from "../Authentication.ts"
import { InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { ForbiddenResponse } from "./ApiKeysApi.ts"
import { BotNotInScopeResponse } from "./BotsApi.ts"

const Webhook = Schema.Struct({
  webhook_id: Schema.String,
  url: Schema.String,
  active: Schema.Boolean,
  events: Schema.Array(Schema.String),
  bot_id: Schema.NullOr(Schema.String),
  channel: Schema.Literal("rcs", "whatsapp").annotations({ description: "whatsapp: the developer webhook of Settings, Developer (WhatsApp events only)" }),
  created_at: Schema.String
})

const Attempt = Schema.Struct({
  attempt_id: Schema.String,
  delivery_id: Schema.String,
  event_type: Schema.String,
  url: Schema.String,
  attempt: Schema.Int,
  status_code: Schema.Int,
  took_ms: Schema.Int,
  response_snippet: Schema.String,
  sent_at: Schema.String
})

const DeadLetter = Schema.Struct({
  delivery_id: Schema.String,
  webhook_id: Schema.String,
  event_type: Schema.String,
  url: Schema.String,
  reason: Schema.String,
  first_attempt_at: Schema.String,
  permanent_failure_at: Schema.String,
  envelope: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

/** A rotation's answer: the new secret, shown this once, and when the replaced one stops signing. */
export const RotatedSecret = Schema.Struct({
  success: Schema.Literal(true),
  webhook_id: Schema.String,
  secret: Schema.String,
  previous_secret_expires_at: Schema.String.annotations({ description: "until then requests carry a second signature, under the replaced secret" })
})

export const ROTATION_DESCRIPTION = "A new signing secret (whsec_…), shown this once. Until previous_secret_expires_at (24 hours later) every request's " +
  "webhook-signature carries two space-separated v1 signatures, under the new secret and the replaced one, so a consumer verifies with " +
  "either while it deploys the new one; afterwards only the new secret signs."

const Url = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2048))
const Events = Schema.Array(Schema.Literal(...EVENT_TYPES)).pipe(Schema.minItems(1), Schema.maxItems(EVENT_TYPES.length))
const BotId = Schema.NullOr(Schema.UUID)
const WebhookPath = Schema.Struct({ webhook_id: Schema.String })

/** Webhook subscriptions and the delivery log (contract, "Webhooks and event log"; DESIGN.md). */
export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(HttpApiEndpoint.get("list", "/").addSuccess(Schema.Struct({ success: Schema.Literal(true), webhooks: Schema.Array(Webhook) })))
  .add(
    HttpApiEndpoint.post("create", "/")
      .setPayload(Schema.Struct({ url: Url, events: Events, bot_id: Schema.optionalWith(BotId, { default: () => null }) }))
      // `webhook` as PATCH answers it; its fields also at the top, as before.
      .addSuccess(Schema.extend(Webhook, Schema.Struct({ success: Schema.Literal(true), secret: Schema.String, webhook: Webhook })))
      .addError(ForbiddenResponse)
      .addError(BotNotInScopeResponse)
      .addError(InvalidRequestResponse)
  )
  .add(
    HttpApiEndpoint.get("deadLetters", "/dead-letter")
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), items: Schema.Array(DeadLetter) }))
      .addError(ForbiddenResponse)
  )
  .add(
    HttpApiEndpoint.post("replay", "/dead-letter/:delivery_id/replay")
      .setPath(Schema.Struct({ delivery_id: Schema.String }))
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), new_delivery_id: Schema.String }))
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
  )
  .add(
    HttpApiEndpoint.patch("update", "/:webhook_id")
      .setPath(WebhookPath)
      .setPayload(Schema.Struct({ url: Schema.optional(Url), events: Schema.optional(Events), bot_id: Schema.optional(BotId), active: Schema.optional(Schema.Boolean) }))
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), webhook: Webhook }))
      .addError(ForbiddenResponse)
      .addError(BotNotInScopeResponse)
      .addError(NotFoundResponse)
      .addError(InvalidRequestResponse)
  )
  .add(
    HttpApiEndpoint.del("remove", "/:webhook_id")
      .setPath(WebhookPath)
      .addSuccess(Schema.Struct({ success: Schema.Literal(true) }))
      .addError(ForbiddenResponse)
      .addError(BotNotInScopeResponse)
      .addError(NotFoundResponse)
  )
  .add(
    HttpApiEndpoint.post("rotateSecret", "/:webhook_id/rotate-secret")
      .setPath(WebhookPath)
      .addSuccess(RotatedSecret)
      .addError(ForbiddenResponse)
      .addError(BotNotInScopeResponse)
      .addError(NotFoundResponse)
      .annotate(OpenApi.Description, ROTATION_DESCRIPTION)
  )
  .add(
    HttpApiEndpoint.post("test", "/:webhook_id/test")
      .setPath(WebhookPath)
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), delivery_id: Schema.String }))
      .addError(ForbiddenResponse)
      .addError(BotNotInScopeResponse)
      .addError(NotFoundResponse)
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/:webhook_id/deliveries")
      .setPath(WebhookPath)
      .setUrlParams(Schema.Struct({ limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.positive())) }))
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), deliveries: Schema.Array(Attempt) }))
      .addError(BotNotInScopeResponse)
      .addError(NotFoundResponse)
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs/webhooks") {}
