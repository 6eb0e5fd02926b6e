import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { EVENT_TYPES, HEALTHS } from "../../webhooks/Webhooks.ts"
import { Authentication } from "../Authentication.ts"
import { InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { describe, documented } from "../openApiAnnotations.ts"
import { ForbiddenResponse } from "./ApiKeysApi.ts"
import { BotNotInScopeResponse } from "./BotsApi.ts"

const Webhook = Schema.Struct({
  webhook_id: Schema.String.annotations({ description: "The endpoint's id." }),
  url: Schema.String.annotations({ description: "Where Herald POSTs the events." }),
  active: Schema.Boolean.annotations({ description: "Whether it receives events: an inactive endpoint gets no deliveries, and its deliveries in progress stop." }),
  events: Schema.Array(Schema.String).annotations({ description: "The event types it receives." }),
  bot_id: Schema.NullOr(Schema.String).annotations({ description: "The one bot whose events it receives; null: every bot of the account, bots added later included." }),
  channel: Schema.Literal("rcs", "whatsapp").annotations({
    description: "rcs: an endpoint made here, for RCS events; whatsapp: the account's developer webhook (PUT /api/v1/app/developer/webhook), " +
      "which receives the WhatsApp events."
  }),
  include_broadcast_messages: Schema.Boolean.annotations({
    description: "Whether broadcasts' per-recipient message.* events of the types in events come too, batched in message.batch events."
  }),
  created_at: Schema.String.annotations({ description: "When it was made (ISO 8601, UTC)." })
}).annotations({ description: "A webhook endpoint: where Herald POSTs the account's events, signed with the endpoint's secret." })

export const BROADCAST_MESSAGES_DESCRIPTION = "Also deliver the per-recipient message.sent, message.delivered, message.read and message.failed events of " +
  "broadcasts (those of the types in events), batched: a message.batch event per endpoint and broadcast carries up to 500 of them " +
  "(or 256 KB), sent once full or one second after its oldest event. Default false: broadcasts' messages emit no message.* events."
const IncludeBroadcastMessages = Schema.Boolean.annotations({ description: BROADCAST_MESSAGES_DESCRIPTION })

const Attempt = Schema.Struct({
  attempt_id: Schema.String.annotations({ description: "The attempt's id." }),
  delivery_id: Schema.String.annotations({ description: "The delivery it is an attempt of (wd_<uuid>, the webhook-id header): the same on every attempt of a delivery." }),
  event_type: Schema.String.annotations({ description: "The type of the event delivered (message.batch for a batch of broadcast messages' events, webhook.test for a test)." }),
  url: Schema.String.annotations({ description: "The URL it was sent to: the endpoint's URL at the time." }),
  attempt: Schema.Int.annotations({ description: "Which attempt of the delivery it was, 1 to 4." }),
  status_code: Schema.Int.annotations({
    description: "The HTTP status the endpoint answered (200 to 299 is a success); 0 when there was no answer (a timeout, a refused connection…)."
  }),
  took_ms: Schema.Int.annotations({ description: "How long the attempt took, in milliseconds." }),
  response_snippet: Schema.String.annotations({ description: "The first 512 bytes of the endpoint's answer; when there was none, why." }),
  sent_at: Schema.String.annotations({ description: "When it was sent (ISO 8601, UTC)." })
}).annotations({ description: "One HTTP attempt of a delivery." })

const DeadLetter = Schema.Struct({
  delivery_id: Schema.String.annotations({ description: "The delivery that failed for good (wd_<uuid>): the one to replay." }),
  webhook_id: Schema.String.annotations({ description: "The endpoint it was for." }),
  event_type: Schema.String.annotations({ description: "The type of the event it carried." }),
  url: Schema.String.annotations({ description: "The URL its last attempt went to." }),
  reason: Schema.String.annotations({ description: "Why it was given up: \"HTTP <status> after 4 attempts\" (HTTP 0: no answer)." }),
  first_attempt_at: Schema.String.annotations({ description: "When its first attempt was sent (ISO 8601, UTC)." }),
  permanent_failure_at: Schema.String.annotations({ description: "When its fourth attempt failed (ISO 8601, UTC)." }),
  envelope: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
    description: "The body that was POSTed: {event_id, type, occurred_at, delivery_id, account_id, data}. A replay sends it again under a new delivery_id."
  })
}).annotations({ description: "A delivery whose four attempts all failed." })

/** A rotation's answer: the new secret, shown this once, and when the replaced one stops signing. */
export const RotatedSecret = Schema.Struct({
  success: Schema.Literal(true),
  webhook_id: Schema.String.annotations({ description: "The endpoint's id." }),
  secret: Schema.String.annotations({ description: "The new signing secret (whsec_…), shown this once." }),
  previous_secret_expires_at: Schema.String.annotations({
    description: "When the replaced secret stops signing (ISO 8601, UTC): until then every request also carries a signature under it."
  })
})

export const ROTATION_DESCRIPTION = "A new signing secret (whsec_…), shown this once. Until previous_secret_expires_at (24 hours later) every request's " +
  "webhook-signature carries two space-separated v1 signatures, under the new secret and the replaced one, so a consumer verifies with " +
  "either while it deploys the new one; afterwards only the new secret signs."

const Url = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2048))
const Events = Schema.Array(Schema.Literal(...EVENT_TYPES)).pipe(Schema.minItems(1), Schema.maxItems(EVENT_TYPES.length))
const BotId = Schema.NullOr(Schema.UUID)
const WebhookPath = Schema.Struct({ webhook_id: Schema.String.annotations({ description: "The endpoint's id (webhook_id)." }) })

const URL_RULES = "an absolute http or https URL without a user name or password, at most 2,048 characters. Private, loopback and link-local " +
  "addresses are refused (unless the server allows them), here and again on each connection."
const EVENTS_RULES = `${EVENT_TYPES.join(", ")}; repeats are dropped.`

const BOT = "1b2c3d4e-5f60-4718-89ab-cdef01234567"
const WEBHOOK = {
  webhook_id: "6a65e9ef-c4bc-4d56-90e2-28db71b4b1ff",
  url: "https://hooks.acme.example.com/herald",
  active: true,
  events: ["message.delivered", "message.failed", "message.received"],
  bot_id: BOT,
  channel: "rcs",
  include_broadcast_messages: false,
  created_at: "2026-03-01T09:30:00.000Z"
}
const DELIVERY = "wd_5a8c2e4f-1b3d-4f6a-8c9e-0b1d2f3a4c5e"
const DEAD_DELIVERY = "wd_287a4aab-1746-416b-8221-7a2f25773fdd"
const ALL_BOTS_ONLY = "A member limited to some bots sees only the endpoints of its bots (an all-bots endpoint carries other bots' events: 403 `bot_not_in_scope`). " +
  "The developer webhook (channel whatsapp) is the owner's, as under /api/v1/app/developer/webhook: anyone else is 403 `forbidden` on it."
const WRITER = "An operator or the owner, with a user token (a viewer is 403 `forbidden`; API keys cannot write: 403 `api_key_endpoint_not_allowed`)."

const EndpointStats = Schema.Struct({
  webhook_id: Schema.String.annotations({ description: "The endpoint's id." }),
  attempts: Schema.Int.annotations({ description: "Attempts finished in the window (its latest 10,000 at most)." }),
  succeeded: Schema.Int.annotations({ description: "Of those, the ones answered 2xx." }),
  failed: Schema.Int.annotations({ description: "Of those, the ones answered otherwise or not at all." }),
  success_rate: Schema.NullOr(Schema.Number).annotations({ description: "succeeded / attempts, from 0 to 1; null with no attempt." }),
  latency_ms: Schema.Struct({
    p50: Schema.NullOr(Schema.Int).annotations({ description: "Median time of an attempt, in milliseconds; null with no attempt." }),
    p95: Schema.NullOr(Schema.Int).annotations({ description: "95th percentile, in milliseconds; null with no attempt." })
  }).annotations({ description: "How long attempts took (timeouts count as the time waited)." }),
  last_attempt_at: Schema.NullOr(Schema.String).annotations({ description: "When its latest attempt was sent, ever (ISO 8601, UTC); null if never." }),
  last_status_code: Schema.NullOr(Schema.Int).annotations({ description: "Its latest attempt's status (0: no HTTP answer); null if never." }),
  health: Schema.Literal(...HEALTHS).annotations({
    description: "idle: no attempt in the window; failing: under half succeeded, or the latest three failed; degraded: under 95%, or the latest " +
      "failed; healthy otherwise."
  })
}).annotations({ description: "An endpoint's last hour of attempts." })

/** Webhook subscriptions and the delivery log (contract, "Webhooks and event log"; DESIGN.md). */
export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("list", "/")
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        webhooks: Schema.Array(Webhook).annotations({ description: "The endpoints the caller may see, newest first, the developer webhook included for the owner." })
      }))
      .annotateContext(documented({
        summary: "List the webhook endpoints",
        description: "The account's endpoints, newest first, without their secrets; the developer webhook (channel whatsapp) is listed too, to " +
          "the owner's session alone (it is the owner's, as under /api/v1/app/developer/webhook). A member limited to some bots sees only the endpoints of its bots. A user token of any role, or an API key with webhooks:read " +
          "(webhooks:write grants it).",
        response: { success: true, webhooks: [WEBHOOK] },
        returns: "The endpoints."
      }))
  )
  .add(
    HttpApiEndpoint.post("create", "/")
      .setPayload(Schema.Struct({
        url: Url.pipe(describe(`Where to POST the events: ${URL_RULES}`)),
        events: Events.pipe(describe(`The event types to receive, at least one: ${EVENTS_RULES}`)),
        bot_id: Schema.optionalWith(BotId.annotations({ description: "The one bot of the account whose events to receive; null or absent: every bot's." }), {
          default: () => null
        }),
        include_broadcast_messages: Schema.optionalWith(IncludeBroadcastMessages, { default: () => false })
      }))
      // `webhook` as PATCH answers it; its fields also at the top, as before.
      .addSuccess(Schema.extend(
        Webhook,
        Schema.Struct({
          success: Schema.Literal(true),
          secret: Schema.String.annotations({ description: "The endpoint's signing secret (whsec_…), shown this once: every request's webhook-signature is made with it." }),
          webhook: Webhook.annotations({ description: "The endpoint again, as PATCH answers it." })
        })
      ))
      .addError(ForbiddenResponse)
      .addError(BotNotInScopeResponse)
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "Create a webhook endpoint",
        description: "Subscribes a URL to event types of one bot, or of every bot (`bot_id` null or absent). Each event of those types " +
          "becomes a delivery: a signed POST (Standard Webhooks), tried at once and again 1 s, 5 s and 30 s after each failure, then kept " +
          "as a dead letter. The answer carries the endpoint's signing secret, shown this once.\n\n" +
          "A `bot_id` that is not a bot of the account is 400; a member limited to some bots must name one of them (403 " +
          "`bot_not_in_scope`, for an all-bots endpoint too). `include_broadcast_messages` true needs one of message.sent, " +
          `message.delivered, message.read or message.failed in \`events\` (400). ${WRITER}`,
        request: { url: WEBHOOK.url, events: WEBHOOK.events, bot_id: BOT, include_broadcast_messages: false },
        response: { success: true, ...WEBHOOK, secret: "whsec_Lo8dgApPH3I9dJ0/l4awPkmAzusBG2ij", webhook: WEBHOOK },
        returns: "The endpoint, with its secret shown this once."
      }))
  )
  .add(
    HttpApiEndpoint.get("stats", "/stats")
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        since: Schema.String.annotations({ description: "The window's start (ISO 8601, UTC): an hour before the answer." }),
        endpoints: Schema.Array(EndpointStats).annotations({ description: "The endpoints the caller may see, newest first, each with its window." })
      }))
      .annotateContext(documented({
        summary: "Each endpoint's last hour",
        description: "Per endpoint the caller may see: attempts in the last hour (at most its latest 10,000), how many succeeded (2xx), the " +
          "success rate, latency percentiles, its latest attempt, and a health word: `idle` (no attempt), `failing` (under half succeeded, or " +
          "the latest three failed), `degraded` (under 95%, or the latest failed), else `healthy`. What the console's Webhooks page shows. " +
          "Any role, with a user token; a member limited to some bots sees the endpoints of its bots; the developer webhook's row is the owner's alone.",
        response: {
          success: true,
          since: "2026-03-02T09:15:30.000Z",
          endpoints: [{
            webhook_id: WEBHOOK.webhook_id,
            attempts: 1520,
            succeeded: 1517,
            failed: 3,
            success_rate: 0.998,
            latency_ms: { p50: 42, p95: 180 },
            last_attempt_at: "2026-03-02T10:15:29.870Z",
            last_status_code: 200,
            health: "healthy"
          }]
        },
        returns: "The endpoints' last hour."
      }))
  )
  .add(
    HttpApiEndpoint.get("deadLetters", "/dead-letter")
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        items: Schema.Array(DeadLetter).annotations({ description: "The dead letters the caller may see, the latest failure first." })
      }))
      .addError(ForbiddenResponse)
      .annotateContext(documented({
        summary: "List the dead letters",
        description: "Deliveries given up after four failed attempts, with the body they carried; replay one with POST …/dead-letter/{delivery_id}/replay. " +
          "A member limited to some bots sees only those of endpoints of its bots that still exist; the developer webhook's are the owner's alone. " +
          "An operator or the owner, with a user token.",
        response: {
          success: true,
          items: [{
            delivery_id: DEAD_DELIVERY,
            webhook_id: WEBHOOK.webhook_id,
            event_type: "message.delivered",
            url: WEBHOOK.url,
            reason: "HTTP 503 after 4 attempts",
            first_attempt_at: "2026-03-02T10:15:30.412Z",
            permanent_failure_at: "2026-03-02T10:16:07.958Z",
            envelope: {
              event_id: "3f6b1c2d-8e9a-4b7c-9d0e-1f2a3b4c5d6e",
              type: "message.delivered",
              occurred_at: "2026-03-02T10:15:30.123Z",
              delivery_id: DEAD_DELIVERY,
              account_id: "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b",
              data: {
                message_id: "0c9e7a52-4f1d-4b8e-9a3c-2d5e6f7a8b9c",
                bot_id: BOT,
                to: "+919812345678",
                status: "delivered",
                occurred_at: "2026-03-02T10:15:29.870Z"
              }
            }
          }]
        },
        returns: "The dead letters."
      }))
  )
  .add(
    HttpApiEndpoint.post("replay", "/dead-letter/:delivery_id/replay")
      .setPath(Schema.Struct({ delivery_id: Schema.String.annotations({ description: "The dead letter's delivery_id (wd_<uuid>)." }) }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        new_delivery_id: Schema.String.annotations({ description: "The new delivery's id (wd_<uuid>): its attempts show under GET …/{webhook_id}/deliveries." })
      }))
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Replay a dead letter",
        description: "Sends the archived body again (the same event, data and occurred_at) as a new delivery, with a new delivery_id and " +
          "the full schedule of attempts, and removes the dead letter: replaying it twice is 404. A dead letter of a deleted endpoint " +
          "cannot be replayed (404); one of the developer webhook is the owner's (403 `forbidden` for anyone else). An operator or the owner, with a user token.",
        response: { success: true, new_delivery_id: "wd_8da16236-19a3-442c-b172-99da7bc51224" },
        returns: "The new delivery."
      }))
  )
  .add(
    HttpApiEndpoint.patch("update", "/:webhook_id")
      .setPath(WebhookPath)
      .setPayload(Schema.Struct({
        url: Schema.optional(Url.pipe(describe(`A new URL: ${URL_RULES}`))),
        events: Schema.optional(Events.pipe(describe(`The event types to receive from now on, in place of the old ones: ${EVENTS_RULES}`))),
        bot_id: Schema.optional(BotId.annotations({ description: "Another bot of the account, or null for every bot's events." })),
        active: Schema.optional(Schema.Boolean.annotations({
          description: "false: the endpoint gets no more deliveries (attempts still due are dropped); true: it receives events again."
        })),
        include_broadcast_messages: Schema.optional(IncludeBroadcastMessages)
      }))
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), webhook: Webhook }))
      .addError(ForbiddenResponse)
      .addError(BotNotInScopeResponse)
      .addError(NotFoundResponse)
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "Change a webhook endpoint",
        description: "Only the fields given change. The developer webhook (channel whatsapp) takes only url and active here (400 otherwise). " +
          "`include_broadcast_messages` left true needs one of the message.* types it sends in `events` (400). The rules of creation apply " +
          `to url and bot_id. ${ALL_BOTS_ONLY} ${WRITER}`,
        request: { events: ["message.sent", "message.delivered", "message.read", "message.failed"], include_broadcast_messages: true },
        response: {
          success: true,
          webhook: { ...WEBHOOK, events: ["message.sent", "message.delivered", "message.read", "message.failed"], include_broadcast_messages: true }
        },
        returns: "The endpoint as it is now."
      }))
  )
  .add(
    HttpApiEndpoint.del("remove", "/:webhook_id")
      .setPath(WebhookPath)
      .addSuccess(Schema.Struct({ success: Schema.Literal(true) }))
      .addError(ForbiddenResponse)
      .addError(BotNotInScopeResponse)
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Delete a webhook endpoint",
        description: "The endpoint gets nothing more: deliveries in progress stop. Its dead letters stay listed but cannot be replayed. " +
          `A second DELETE is 404. ${ALL_BOTS_ONLY} ${WRITER}`,
        response: { success: true },
        returns: "Deleted."
      }))
  )
  .add(
    HttpApiEndpoint.post("rotateSecret", "/:webhook_id/rotate-secret")
      .setPath(WebhookPath)
      .addSuccess(RotatedSecret)
      .addError(ForbiddenResponse)
      .addError(BotNotInScopeResponse)
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Rotate a webhook endpoint's signing secret",
        description: `${ROTATION_DESCRIPTION} A second rotation within the overlap drops the oldest secret at once. The developer webhook ` +
          `can be rotated here too, by the owner. ${ALL_BOTS_ONLY} ${WRITER}`,
        response: {
          success: true,
          webhook_id: WEBHOOK.webhook_id,
          secret: "whsec_nWbza8ohHH4vertVLTNtMXEhh9rmMCQh",
          previous_secret_expires_at: "2026-03-03T09:30:00.000Z"
        },
        returns: "The new secret, shown this once."
      }))
  )
  .add(
    HttpApiEndpoint.post("test", "/:webhook_id/test")
      .setPath(WebhookPath)
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        delivery_id: Schema.String.annotations({ description: "The test's delivery (wd_<uuid>): its attempts show under GET …/{webhook_id}/deliveries." })
      }))
      .addError(ForbiddenResponse)
      .addError(BotNotInScopeResponse)
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "Send a test event to a webhook endpoint",
        description: "A `webhook.test` event to this endpoint alone, whatever its events, delivered (and retried) like any other. " +
          `${ALL_BOTS_ONLY} ${WRITER}`,
        response: { success: true, delivery_id: "wd_dddd9d2b-107f-4a93-bbc1-b02af9f4e3b3" },
        returns: "The test's delivery."
      }))
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/:webhook_id/deliveries")
      .setPath(WebhookPath)
      .setUrlParams(Schema.Struct({
        limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.positive(), describe("Attempts to list: 100 by default; above 500 is served as 500.")))
      }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        deliveries: Schema.Array(Attempt).annotations({ description: "The endpoint's finished attempts, newest first." })
      }))
      .addError(ForbiddenResponse)
      .addError(BotNotInScopeResponse)
      .addError(NotFoundResponse)
      .annotateContext(documented({
        summary: "List a webhook endpoint's delivery attempts",
        description: "Every finished HTTP attempt to the endpoint, newest first: its status (0 when there was no answer), duration and the " +
          `start of the answer. ${ALL_BOTS_ONLY} A user token of any role (not an API key).`,
        response: {
          success: true,
          deliveries: [
            {
              attempt_id: "bac46bf2-f642-4212-9b0c-0bc68fd5a398",
              delivery_id: DELIVERY,
              event_type: "message.delivered",
              url: WEBHOOK.url,
              attempt: 2,
              status_code: 200,
              took_ms: 84,
              response_snippet: "{\"ok\":true}",
              sent_at: "2026-03-02T10:15:31.530Z"
            },
            {
              attempt_id: "6f9f14b2-4894-4b23-bcc2-48436121d48c",
              delivery_id: DELIVERY,
              event_type: "message.delivered",
              url: WEBHOOK.url,
              attempt: 1,
              status_code: 0,
              took_ms: 10003,
              response_snippet: "timeout: no answer within 10000 ms",
              sent_at: "2026-03-02T10:15:20.412Z"
            }
          ]
        },
        returns: "The attempts."
      }))
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs/webhooks")
  .annotate(
    OpenApi.Description,
    "Webhook endpoints of the RCS API: the URLs Herald POSTs the account's events to (signed per Standard Webhooks), their delivery " +
      "attempts, and the dead letters of deliveries that failed for good (docs/webhooks.md)."
  ) {}
