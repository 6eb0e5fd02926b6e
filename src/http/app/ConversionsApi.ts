import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { CAPI_BATCH_MAX, CAPI_EVENT_NAMES } from "../../conversions/capiEvent.ts"
import { CapiNotConfigured } from "../../conversions/errors.ts"
import { INTEGRATIONS, LOGS_LIMIT_DEFAULT, LOGS_LIMIT_MAX } from "../../integrations/IntegrationLogs.ts"
import { Authentication } from "../Authentication.ts"
import { errorResponse, InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { describe, documented } from "../openApiAnnotations.ts"
import { ForbiddenResponse } from "../rcs/ApiKeysApi.ts"
import { AppAuthentication } from "./AppAuthentication.ts"
import { CursorParam, limitParam, NextCursor } from "./ContactsApi.ts"

export const CapiNotConfiguredResponse = errorResponse(CapiNotConfigured, 409, "capi_not_configured")

const CapiConfig = Schema.Struct({
  success: Schema.Literal(true),
  dataset_id: Schema.String.annotations({ description: "Meta's dataset (pixel) id the conversions are sent to." }),
  access_token: Schema.String.annotations({ description: "Only the token's last four characters, after '…': the token is never shown again in full." }),
  test_event_code: Schema.NullOr(Schema.String).annotations({ description: "Events Manager's test code the events are sent with; null: live events." }),
  updated_at: Schema.String.annotations({ description: "When the configuration was last saved (ISO 8601, UTC)." })
})

const OWNER = "The owner, with a user token (a secret key or an API key cannot; another role is 403 `forbidden`)."
const CONFIG = { success: true, dataset_id: "123456789012345", access_token: "…9xYz", test_event_code: "TEST4242", updated_at: "2026-03-01T09:30:00.000Z" }

/** The owner's side of conversions: where Herald forwards them (a signed-in owner session). */
export class CapiConfigApi extends HttpApiGroup.make("capiConfig")
  .add(
    HttpApiEndpoint.put("setCapiConfig", "/config")
      .setPayload(Schema.Struct({
        dataset_id: Schema.String.annotations({ description: "Meta's dataset (pixel) id: digits, at most 32." }),
        access_token: Schema.String.annotations({
          description: "The dataset's Conversions API access token, 8 to 1,024 characters without spaces; stored encrypted, never shown again in full."
        }),
        test_event_code: Schema.optional(Schema.String).annotations({
          description: "Events Manager's test code (letters, digits, _ and -; at most 64): the events then show under Test events. Absent: live events " +
            "(a PUT without it clears it)."
        })
      }))
      .addSuccess(CapiConfig)
      .addError(InvalidRequestResponse)
      .addError(ForbiddenResponse)
      .annotateContext(documented({
        summary: "Set the Conversions API dataset and token",
        description: "Creates or replaces where the account's conversions go (docs/conversions.md). Conversions already queued are forwarded with it " +
          `at once. Bad values are 400 naming each field. ${OWNER}`,
        request: { dataset_id: "123456789012345", access_token: "EAABsbCS1iHgBO7ZCnZBq4Xv2ZAeZBLd0mPqrst9xYz", test_event_code: "TEST4242" },
        response: CONFIG,
        returns: "The configuration, the token shown by its last four characters."
      }))
  )
  .add(
    HttpApiEndpoint.get("getCapiConfig", "/config")
      .addSuccess(CapiConfig)
      .addError(NotFoundResponse)
      .addError(ForbiddenResponse)
      .annotateContext(documented({
        summary: "Read the Conversions API configuration",
        description: `The account's dataset and test code, the token shown by its last four characters; 404 when none is set. ${OWNER}`,
        response: CONFIG,
        returns: "The configuration."
      }))
  )
  .middleware(Authentication)
  .prefix("/api/v1/app/meta-ads/capi")
  .annotate(OpenApi.Description, "Where Herald forwards the account's conversions: Meta's Conversions API dataset and token, set by the owner, signed in " +
    "(docs/conversions.md).") {}

const CapiEvent = Schema.Struct({
  event_name: Schema.String.annotations({ description: `The conversion: ${CAPI_EVENT_NAMES.join(", ")}.` }),
  event_id: Schema.optional(Schema.String).annotations({
    description: "Your id of the event, 1 to 100 characters; Herald makes one when absent. A repeat of (event_name, event_id) answers the same id and " +
      "is not forwarded again."
  }),
  event_time: Schema.optional(Schema.Number).annotations({
    description: "When the conversion happened, in Unix seconds: at most 7 days ago (Meta refuses older) and not in the future; now when absent."
  }),
  fullPhoneNumber: Schema.optional(Schema.String).annotations({
    description: "The customer's phone with its country code (the '+' optional). Give it or customer_id, not both."
  }),
  customer_id: Schema.optional(Schema.String).annotations({
    description: "The id of one of the account's contacts, whose phone is used. Give it or fullPhoneNumber, not both."
  }),
  email: Schema.optional(Schema.String).annotations({
    description: "The customer's e-mail. At least one of fullPhoneNumber, customer_id and email is needed; Meta receives them hashed (SHA-256)."
  }),
  value: Schema.optional(Schema.Number).annotations({ description: "What the conversion was worth, at least 0, in currency: required for a Purchase." }),
  currency: Schema.optional(Schema.String).annotations({ description: "The value's currency, an ISO 4217 code (INR): required for a Purchase." }),
  ctwa_clid: Schema.optional(Schema.String).annotations({
    description: "The click id of the click-to-WhatsApp ad the conversation started from (at most 500 characters)."
  })
}).annotations({ description: "A conversion to forward to Meta." })

const Accepted = { result: Schema.Literal(true), success: Schema.Literal(true) }
const EventId = Schema.String.annotations({
  description: "Herald's id of the event, derived from the account, event_name and event_id (a repeat answers the same id): GET " +
    "/api/v1/app/meta-ads/capi/events/{id} shows its progress."
})

const KEY = "A secret key, on Growth and up."
const PURCHASE = {
  event_name: "Purchase",
  event_id: "order-1001",
  event_time: 1772438700,
  fullPhoneNumber: "+919812345678",
  email: "asha@example.com",
  value: 499.5,
  currency: "INR",
  ctwa_clid: "ARAkLkA8rmlFxOrR5fAd2kq4c"
}
const EVENT_UID = "5c0e8a1f-3b2d-5e4f-9a6b-7c8d9e0f1a2b"

/** Conversions sent with the secret key, and the integration log. */
export class ConversionsApi extends HttpApiGroup.make("conversions")
  .add(
    HttpApiEndpoint.post("sendCapiEvent", "/meta-ads/capi/events")
      .setPayload(CapiEvent)
      .addSuccess(Schema.Struct({ ...Accepted, id: EventId }), { status: 202 })
      .addError(InvalidRequestResponse)
      .addError(CapiNotConfiguredResponse)
      .annotateContext(documented({
        summary: "Forward a conversion (Lead, Purchase, Subscribe) to Meta",
        description: "Checks the event against Meta's rules (a 400 names every wrong field), hashes the customer's data, and queues it for the account's " +
          "batches to Meta; the 202 comes once it is stored durably and it is not lost from then on. 409 `capi_not_configured` until the owner sets " +
          `the configuration. Takes an Idempotency-Key. ${KEY}`,
        request: PURCHASE,
        response: { result: true, success: true, id: EVENT_UID },
        returns: "Accepted: the event is queued."
      }))
  )
  .add(
    HttpApiEndpoint.post("sendCapiEvents", "/meta-ads/capi/events/batch")
      .setPayload(Schema.Struct({
        events: Schema.Array(CapiEvent).pipe(
          Schema.minItems(1),
          Schema.maxItems(CAPI_BATCH_MAX),
          describe(`The conversions, 1 to ${CAPI_BATCH_MAX.toLocaleString("en")}; one bad event refuses the whole request (errors name events[i].field).`)
        )
      }))
      .addSuccess(Schema.Struct({ ...Accepted, ids: Schema.Array(EventId).annotations({ description: "Herald's ids of the events, in the order they were sent." }) }), {
        status: 202
      })
      .addError(InvalidRequestResponse)
      .addError(CapiNotConfiguredResponse)
      .annotateContext(documented({
        summary: "Forward up to 1,000 conversions in one request",
        description: "As POST /api/v1/app/meta-ads/capi/events for each event, all or none: every event is checked before any is queued. Takes an " +
          `Idempotency-Key. ${KEY}`,
        request: {
          events: [
            PURCHASE,
            { event_name: "Lead", event_id: "lead-2207", customer_id: "6a7b8c9d-0e1f-4a2b-8c3d-4e5f6a7b8c9d", ctwa_clid: "ARAkLkA8rmlFxOrR5fAd2kq4c" }
          ]
        },
        response: { result: true, success: true, ids: [EVENT_UID, "d4c3b2a1-9f8e-5d7c-8b6a-5f4e3d2c1b0a"] },
        returns: "Accepted: the events are queued."
      }))
  )
  .add(
    HttpApiEndpoint.post("redriveCapiEvents", "/meta-ads/capi/events/redrive")
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), requeued: Schema.Int.annotations({ description: "How many failed events were queued again." }) }))
      .annotateContext(documented({
        summary: "Queue the account's failed conversions again",
        description: "Every failed conversion of the account goes back to the queue, its error cleared, and is forwarded again. Use it once what made " +
          `them fail (a revoked token, a wrong dataset, an outage) is fixed. ${KEY}`,
        response: { success: true, requeued: 12 },
        returns: "How many events were queued again."
      }))
  )
  .add(
    HttpApiEndpoint.get("getCapiEvent", "/meta-ads/capi/events/:id")
      .setPath(Schema.Struct({ id: Schema.String.annotations({ description: "Herald's id of the event, as the send answered it." }) }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        event: Schema.Struct({
          id: Schema.String.annotations({ description: "Herald's id of the event." }),
          event_name: Schema.String.annotations({ description: `The conversion: ${CAPI_EVENT_NAMES.join(", ")}.` }),
          event_id: Schema.String.annotations({ description: "Your id of the event, or the one Herald made when none was given." }),
          status: Schema.Literal("queued", "sent", "failed").annotations({
            description: "queued: waiting to be sent, or retried; sent: Meta took it; failed: Meta refused it, the tries ran out or it became more than 7 " +
              "days old (POST /api/v1/app/meta-ads/capi/events/redrive queues it again)."
          }),
          attempts: Schema.Int.annotations({ description: "How many tries the request that carries it has taken so far." }),
          error: Schema.NullOr(Schema.String).annotations({
            description: "Why the last try failed (`HTTP 400: ` and the start of Meta's answer, or `no answer`), or why the event failed; null when none did."
          }),
          created_at: Schema.String.annotations({ description: "When Herald queued it (ISO 8601, UTC)." }),
          sent_at: Schema.NullOr(Schema.String).annotations({ description: "When Meta took it (ISO 8601, UTC); null until then." })
        }).annotations({ description: "A conversion and how far it got." })
      }))
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Read a conversion's status",
        description: "An event's status, tries and, when a try failed, Meta's answer. An event is stored a few milliseconds after its 202: until then, " +
          `and for another account's id, it is 404. ${KEY}`,
        response: {
          success: true,
          event: {
            id: EVENT_UID,
            event_name: "Purchase",
            event_id: "order-1001",
            status: "sent",
            attempts: 1,
            error: null,
            created_at: "2026-03-02T08:10:00.120Z",
            sent_at: "2026-03-02T08:10:00.410Z"
          }
        },
        returns: "The event."
      }))
  )
  .add(
    HttpApiEndpoint.get("integrationLogs", "/integrations/logs")
      .setUrlParams(Schema.Struct({
        integration: Schema.optional(Schema.Literal(...INTEGRATIONS).annotations({
          description: "Only the calls to this integration (meta_capi: Meta's Conversions API)."
        })),
        limit: limitParam(LOGS_LIMIT_MAX, LOGS_LIMIT_DEFAULT),
        cursor: CursorParam
      }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        logs: Schema.Array(Schema.Struct({
          id: Schema.String.annotations({ description: "The log row's id." }),
          integration: Schema.String.annotations({ description: "The integration called: meta_capi." }),
          status_code: Schema.NullOr(Schema.Int).annotations({
            description: "The HTTP status the integration answered; null when no answer came (refused, timed out, cut)."
          }),
          outcome: Schema.Literal("delivered", "retrying", "failed").annotations({
            description: "delivered: the integration took the request; retrying: another try is scheduled; failed: the request's events failed."
          }),
          attempt: Schema.Int.annotations({ description: "Which try of the request this was, from 1." }),
          took_ms: Schema.Int.annotations({ description: "How long the call took, in milliseconds." }),
          events: Schema.Int.annotations({ description: "How many events the request carried." }),
          response_snippet: Schema.NullOr(Schema.String).annotations({
            description: "The start of the integration's answer (at most 500 characters); null when none was kept."
          }),
          created_at: Schema.String.annotations({ description: "When the answer was recorded (ISO 8601, UTC)." })
        }).annotations({ description: "One call Herald made to an integration." })).annotations({ description: "The calls on this page, newest first." }),
        next_cursor: NextCursor
      }))
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "List the calls Herald made to integrations (Meta CAPI forwards)",
        description: `Every request Herald made to an integration for the account, newest first, by cursor. ${KEY}`,
        response: {
          success: true,
          logs: [{
            id: "8b9c0d1e-2f3a-4b5c-8d6e-7f8091a2b3c4",
            integration: "meta_capi",
            status_code: 200,
            outcome: "delivered",
            attempt: 1,
            took_ms: 42,
            events: 2,
            response_snippet: "{\"events_received\":2,\"messages\":[],\"fbtrace_id\":\"AbCdEfGh123\"}",
            created_at: "2026-03-02T08:10:00.410Z"
          }],
          next_cursor: ""
        },
        returns: "A page of the integration log."
      }))
  )
  .middleware(AppAuthentication)
  .prefix("/api/v1/app")
  .annotate(OpenApi.Description, "Conversions (Lead, Purchase, Subscribe) forwarded to Meta's Conversions API with the secret key, and the log of every " +
    "call Herald made to an integration (docs/conversions.md).") {}
