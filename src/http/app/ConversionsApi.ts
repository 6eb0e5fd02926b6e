import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { CAPI_BATCH_MAX, CAPI_EVENT_NAMES } from "../../conversions/capiEvent.ts"
import { CapiNotConfigured } from "../../conversions/errors.ts"
import { INTEGRATIONS, LOGS_LIMIT_MAX } from "../../integrations/IntegrationLogs.ts"
import { Authentication } from "../Authentication.ts"
import { errorResponse, InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { ForbiddenResponse } from "../rcs/ApiKeysApi.ts"
import { AppAuthentication } from "./AppAuthentication.ts"

export const CapiNotConfiguredResponse = errorResponse(CapiNotConfigured, 409, "capi_not_configured")

const CapiConfig = Schema.Struct({
  success: Schema.Literal(true),
  dataset_id: Schema.String,
  access_token: Schema.String.annotations({ description: "only its last four characters: the token is never shown again" }),
  test_event_code: Schema.NullOr(Schema.String),
  updated_at: Schema.String
})

/** The owner's side of conversions: where Herald forwards them (a signed-in owner session). */
export class CapiConfigApi extends HttpApiGroup.make("capiConfig")
  .add(
    HttpApiEndpoint.put("setCapiConfig", "/config")
      .setPayload(Schema.Struct({
        dataset_id: Schema.String.annotations({ description: "Meta's dataset (pixel) id" }),
        access_token: Schema.String.annotations({ description: "the dataset's Conversions API access token; stored sealed" }),
        test_event_code: Schema.optional(Schema.String).annotations({ description: "Events Manager's test code: events then show under Test events" })
      }))
      .addSuccess(CapiConfig)
      .addError(InvalidRequestResponse)
      .addError(ForbiddenResponse)
      .annotate(OpenApi.Summary, "Set the Conversions API dataset and token")
  )
  .add(
    HttpApiEndpoint.get("getCapiConfig", "/config")
      .addSuccess(CapiConfig)
      .addError(NotFoundResponse)
      .addError(ForbiddenResponse)
  )
  .middleware(Authentication)
  .prefix("/api/v1/app/meta-ads/capi") {}

const CapiEvent = Schema.Struct({
  event_name: Schema.String.annotations({ description: CAPI_EVENT_NAMES.join(" | ") }),
  event_id: Schema.optional(Schema.String).annotations({ description: "your id of the event: a repeat of (event_name, event_id) is accepted and not forwarded again" }),
  event_time: Schema.optional(Schema.Number).annotations({ description: "unix seconds, at most 7 days ago; now when absent" }),
  fullPhoneNumber: Schema.optional(Schema.String),
  customer_id: Schema.optional(Schema.String),
  email: Schema.optional(Schema.String),
  value: Schema.optional(Schema.Number),
  currency: Schema.optional(Schema.String),
  ctwa_clid: Schema.optional(Schema.String).annotations({ description: "the click id of a click-to-WhatsApp ad" })
})

const Accepted = { result: Schema.Literal(true), success: Schema.Literal(true) }

/** Conversions sent with the secret key, and the integration log. */
export class ConversionsApi extends HttpApiGroup.make("conversions")
  .add(
    HttpApiEndpoint.post("sendCapiEvent", "/meta-ads/capi/events")
      .setPayload(CapiEvent)
      .addSuccess(Schema.Struct({ ...Accepted, id: Schema.String }), { status: 202 })
      .addError(InvalidRequestResponse)
      .addError(CapiNotConfiguredResponse)
      .annotate(OpenApi.Summary, "Forward a conversion (Lead, Purchase, Subscribe) to Meta")
  )
  .add(
    HttpApiEndpoint.post("sendCapiEvents", "/meta-ads/capi/events/batch")
      .setPayload(Schema.Struct({ events: Schema.Array(CapiEvent).pipe(Schema.minItems(1), Schema.maxItems(CAPI_BATCH_MAX)) }))
      .addSuccess(Schema.Struct({ ...Accepted, ids: Schema.Array(Schema.String) }), { status: 202 })
      .addError(InvalidRequestResponse)
      .addError(CapiNotConfiguredResponse)
      .annotate(OpenApi.Summary, "Forward up to 1,000 conversions in one request")
  )
  .add(
    HttpApiEndpoint.post("redriveCapiEvents", "/meta-ads/capi/events/redrive")
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), requeued: Schema.Int }))
      .annotate(OpenApi.Summary, "Queue the account's failed conversions again")
  )
  .add(
    HttpApiEndpoint.get("getCapiEvent", "/meta-ads/capi/events/:id")
      .setPath(Schema.Struct({ id: Schema.String }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        event: Schema.Struct({
          id: Schema.String,
          event_name: Schema.String,
          event_id: Schema.String,
          status: Schema.Literal("queued", "sent", "failed"),
          attempts: Schema.Int,
          error: Schema.NullOr(Schema.String),
          created_at: Schema.String,
          sent_at: Schema.NullOr(Schema.String)
        })
      }))
      .addError(NotFoundResponse)
  )
  .add(
    HttpApiEndpoint.get("integrationLogs", "/integrations/logs")
      .setUrlParams(Schema.Struct({
        integration: Schema.optional(Schema.Literal(...INTEGRATIONS)),
        limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, LOGS_LIMIT_MAX))),
        cursor: Schema.optional(Schema.String)
      }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        logs: Schema.Array(Schema.Struct({
          id: Schema.String,
          integration: Schema.String,
          status_code: Schema.NullOr(Schema.Int).annotations({ description: "null when no answer came" }),
          outcome: Schema.Literal("delivered", "retrying", "failed"),
          attempt: Schema.Int,
          took_ms: Schema.Int,
          events: Schema.Int,
          response_snippet: Schema.NullOr(Schema.String),
          created_at: Schema.String
        })),
        next_cursor: Schema.String
      }))
      .addError(InvalidRequestResponse)
      .annotate(OpenApi.Summary, "Every call Herald made to an integration (Meta CAPI forwards)")
  )
  .middleware(AppAuthentication)
  .prefix("/api/v1/app") {}
