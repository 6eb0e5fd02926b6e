import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { MAX_CAMPAIGN_TRAITS, MAX_FALLBACK_LENGTH } from "../../broadcasts/campaignValues.ts"
import { CAMPAIGN_NAME_MAX, CAMPAIGNS_LIMIT_DEFAULT, CAMPAIGNS_LIMIT_MAX, MAX_AUDIENCE_IDS } from "../../campaigns/Campaigns.ts"
import { Timestamp } from "../../domain/timestamps.ts"
import { AppAuthentication } from "../app/AppAuthentication.ts"
import { ConflictResponse, InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { describe, documented } from "../openApiAnnotations.ts"
import { GatewayErrorRecordSchema } from "../rcs/ContentApi.ts"
import { InsufficientBalanceResponse } from "../rcs/MessagesApi.ts"
import { NoWaNumberResponse, TemplateNotUsableResponse, TraitFilter } from "./PublicApi.ts"
import { PublicAuthentication } from "./PublicAuthentication.ts"

const n = (value: number) => value.toLocaleString("en-US")
const At = (what: string) => Schema.NullOr(Schema.String).annotations({ description: `When ${what} (ISO 8601, UTC); null until then.` })

const CampaignStatus = Schema.Literal("scheduled", "queued", "running", "completed", "cancelled").annotations({
  description: "scheduled: waiting for scheduled_at; queued: to start at once; running: sending; completed: every target has its outcome; " +
    "cancelled: stopped by a cancel (targets not sent yet are cancelled)."
})

export const CAMPAIGN_TARGET_STATUSES = ["pending", "unconfirmed", "sent", "delivered", "read", "failed", "cancelled", "skipped"] as const
const TargetStatus = Schema.Literal(...CAMPAIGN_TARGET_STATUSES).annotations({
  description: "pending: not sent yet; unconfirmed: Meta's answer never came (never sent again: a status from Meta moves it on, else it fails " +
    "after the unconfirmed expiry); sent, delivered, read: Meta's statuses; failed: see error; cancelled: not sent because of a cancel; " +
    "skipped: the customer had opted out (never sent, never charged)."
})

const Values = (what: string) => Schema.Array(Schema.String).annotations({ description: `${what}; each may hold {{trait.<name>}}.` })

const TemplateValues = Schema.Struct({
  name: Schema.String.annotations({ description: "An APPROVED template of the account." }),
  languageCode: Schema.String.annotations({ description: "Its language, as Meta's code (en, en_US, hi…)." }),
  headerValues: Schema.optional(Values("The header's values (a text header's {{1}}, or a media header's URL), as a Template send takes them")),
  bodyValues: Schema.optional(Values("The body's values in order ({{1}}, {{2}}…), as a Template send takes them")),
  buttonValues: Schema.optional(Schema.Record({ key: Schema.String, value: Values("The button's values") }).annotations({
    description: "Values by button index ({\"0\": [\"A-1234\"]}), as a Template send takes them."
  }))
}).annotations({
  description: "The template and its values, as POST /api/v1/public/message takes a Template's data (carousel and order-details templates " +
    "are not sent by campaigns). Any value may hold {{trait.<name>}} (such as \"Hi {{trait.first_name}}\"): each customer gets their own " +
    "trait there, or fallbackValues' when they lack it."
})

const Audience = Schema.Struct({
  segment_id: Schema.optional(Schema.String).annotations({ description: "A segment of the account: its filters and tags as they are when the campaign is created." }),
  filters: Schema.optional(Schema.Array(TraitFilter)).annotations({ description: "A customer search's trait filters (all must match), as POST /customers/search takes them." }),
  tags: Schema.optional(Schema.Array(Schema.String)).annotations({ description: "Tags every customer must have, as the customer search takes them." }),
  customer_ids: Schema.optional(Schema.Array(Schema.String)).annotations({ description: `1 to ${n(MAX_AUDIENCE_IDS)} customers by id.` })
}).annotations({
  description: "Who gets it: exactly one of segment_id, a customer search (filters and/or tags), or customer_ids. The customers matching it " +
    "when the campaign starts are its targets (customers recorded later are not sent to). Customers who opted out are skipped."
})

const CampaignInput = Schema.Struct({
  name: Schema.String.annotations({ description: `Your name for it, 1 to ${CAMPAIGN_NAME_MAX} characters.` }),
  phoneNumberId: Schema.optional(Schema.String).annotations({ description: "Send from this WhatsApp number of the account (phone_number_id); its default number without it." }),
  template: TemplateValues,
  fallbackValues: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })).annotations({
    description: `A value for each trait the template's values name ({{trait.city}} → "city"), sent to customers without it: required for ` +
      `every trait named and for nothing else; 1 to ${n(MAX_FALLBACK_LENGTH)} characters each; at most ${MAX_CAMPAIGN_TRAITS} traits.`
  }),
  audience: Audience,
  scheduled_at: Schema.optional(Timestamp.pipe(describe("When to start: an ISO 8601 date-time such as 2026-12-05T04:30:00Z. Absent or in the past: at once.")))
})

const FrozenAudience = Schema.Struct({
  segment_id: Schema.optional(Schema.NullOr(Schema.String)).annotations({ description: "The segment it was created from; null for a search." }),
  filters: Schema.optional(Schema.Array(TraitFilter)).annotations({ description: "The trait filters, as they were at creation." }),
  tags: Schema.optional(Schema.Array(Schema.String)).annotations({ description: "The tags, as they were at creation." }),
  customer_ids: Schema.optional(Schema.Array(Schema.String)).annotations({ description: "The customers it was created for by id." }),
  retry_of: Schema.optional(Schema.String).annotations({ description: "A retry: the campaign whose failed targets it sends again." })
}).annotations({ description: "The audience as frozen at creation: {segment_id, filters, tags}, {customer_ids}, or {retry_of} for a retry." })

export const Campaign = Schema.Struct({
  id: Schema.String.annotations({ description: "The campaign's id." }),
  name: Schema.String.annotations({ description: "Its name, as given." }),
  status: CampaignStatus,
  phone_number_id: Schema.String.annotations({ description: "The WhatsApp number it is sent from." }),
  template: TemplateValues.annotations({ description: "The template and its values as given ({{trait.x}} unfilled)." }),
  category: Schema.String.annotations({ description: "The template's category, which sets the price of each message delivered." }),
  fallback_values: Schema.Record({ key: Schema.String, value: Schema.String }).annotations({ description: "The fallbacks of the traits named ({} when none)." }),
  audience: FrozenAudience,
  scheduled_at: Schema.NullOr(Schema.String).annotations({ description: "When it was set to start (ISO 8601, UTC); null: at once." }),
  counters: Schema.Struct({
    total: Schema.Int.annotations({ description: "Customers of the audience when it started (0 before)." }),
    sent: Schema.Int.annotations({ description: "Taken by Meta (includes delivered and read)." }),
    delivered: Schema.Int.annotations({ description: "Reported delivered (includes read): each charged once at its category's price." }),
    read: Schema.Int.annotations({ description: "Reported read." }),
    failed: Schema.Int.annotations({ description: "Refused by Meta, failed after, or unconfirmed past the expiry: never charged." }),
    skipped: Schema.Int.annotations({ description: "Opted-out customers: never sent, never charged." }),
    waiting: Schema.Int.annotations({ description: "Not sent yet: queued behind the number's tier." }),
    cancelled: Schema.Int.annotations({ description: "Not sent because of a cancel." })
  }).annotations({ description: "Where its targets stand; sent + failed + skipped + waiting + cancelled = total while it runs." }),
  created_at: Schema.String.annotations({ description: "When it was created (ISO 8601, UTC)." }),
  started_at: At("it started"),
  completed_at: At("every target had its outcome"),
  cancelled_at: At("it was cancelled")
}).annotations({ description: "A WhatsApp campaign: one approved template to an audience of customers (docs/campaigns.md)." })

const CampaignTarget = Schema.Struct({
  target_no: Schema.Int.annotations({ description: "Its number in the campaign, from 0 in customer order." }),
  customer_id: Schema.String.annotations({ description: "The customer it was written from." }),
  phone: Schema.String.annotations({ description: "The customer's number, E.164." }),
  message_id: Schema.String.annotations({ description: "What Meta's statuses of the message are matched by." }),
  status: TargetStatus,
  error: Schema.NullOr(GatewayErrorRecordSchema).annotations({ description: "Why it failed or is unconfirmed; null otherwise." }),
  sent_at: At("it was sent"),
  delivered_at: At("it was delivered"),
  read_at: At("it was read"),
  failed_at: At("it failed")
})

const CampaignAnswer = Schema.Struct({ result: Schema.Literal(true), success: Schema.Literal(true), campaign: Campaign })
const CampaignPath = Schema.Struct({ id: Schema.String.annotations({ description: "The campaign's id." }) })
const PageParams = {
  limit: Schema.optional(Schema.NumberFromString.pipe(
    Schema.int(),
    Schema.between(1, CAMPAIGNS_LIMIT_MAX),
    describe(`Rows per page, 1 to ${n(CAMPAIGNS_LIMIT_MAX)}; ${CAMPAIGNS_LIMIT_DEFAULT} by default.`)
  )),
  cursor: Schema.optional(Schema.String.annotations({ description: "The next_cursor of the previous page, passed back verbatim." }))
}
const NextCursor = Schema.String.annotations({ description: "Pass it as cursor for the next page; empty (\"\") on the last page." })

const EXAMPLE = {
  id: "4b7f0f6e-4b61-4a57-9a37-0d1a1f0c2a11",
  name: "Diwali offer",
  status: "running",
  phone_number_id: "115416010524074",
  template: { name: "diwali_offer", languageCode: "en", bodyValues: ["{{trait.first_name}}", "20%"] },
  category: "MARKETING",
  fallback_values: { first_name: "there" },
  audience: { segment_id: "9d1f…", filters: [{ trait: "city", op: "eq", value: "Pune" }], tags: [] },
  scheduled_at: null,
  counters: { total: 12000, sent: 8000, delivered: 7400, read: 3100, failed: 12, skipped: 40, waiting: 3948, cancelled: 0 },
  created_at: "2026-11-29T08:00:00.000Z",
  started_at: "2026-11-29T08:00:01.000Z",
  completed_at: null,
  cancelled_at: null
}

const CALLER = "The account's secret key (Basic under /api/v1/public, Bearer under /api/v1/app), on any plan but Starter."

/** The campaign endpoints, declared once and served under both surfaces that take a secret key. */
const campaignEndpoints = <const Name extends string>(name: Name) =>
  HttpApiGroup.make(name)
    .add(
      HttpApiEndpoint.post("createCampaign", "/campaigns")
        .setPayload(CampaignInput)
        .addSuccess(CampaignAnswer, { status: 201 })
        .addError(InvalidRequestResponse)
        .addError(TemplateNotUsableResponse)
        .addError(InsufficientBalanceResponse)
        .addError(NoWaNumberResponse)
        .annotateContext(documented({
          summary: "Create a WhatsApp campaign",
          description: "Sends an APPROVED template from one of the account's numbers to every customer of the audience, now or at scheduled_at, " +
            "at the number's throughput tier. Everything is checked before anything is written: 400 `invalid_request` naming each field " +
            "(the audience, the template's values filled with the fallbacks, a {{trait.x}} without a fallback), 400 `template_not_usable`, " +
            "402 `insufficient_balance` when the wallet does not cover the audience at the category's price, 409 `no_wa_number`. " +
            "Each message is charged when Meta reports it delivered. Customers who opted out are skipped. " + CALLER,
          request: {
            name: "Diwali offer",
            template: { name: "diwali_offer", languageCode: "en", bodyValues: ["{{trait.first_name}}", "20%"] },
            fallbackValues: { first_name: "there" },
            audience: { filters: [{ trait: "city", op: "eq", value: "Pune" }] }
          },
          response: { result: true, success: true, campaign: { ...EXAMPLE, status: "queued", started_at: null } },
          returns: "The campaign, queued or scheduled."
        }))
    )
    .add(
      HttpApiEndpoint.get("listCampaigns", "/campaigns")
        .setUrlParams(Schema.Struct({ ...PageParams, status: Schema.optional(CampaignStatus.annotations({ description: "Only campaigns in this status." })) }))
        .addSuccess(Schema.Struct({
          result: Schema.Literal(true),
          success: Schema.Literal(true),
          campaigns: Schema.Array(Campaign).annotations({ description: "The campaigns on this page, newest first." }),
          next_cursor: NextCursor
        }))
        .addError(InvalidRequestResponse)
        .annotateContext(documented({
          summary: "List WhatsApp campaigns",
          description: "The account's campaigns, newest first, by cursor. " + CALLER,
          response: { result: true, success: true, campaigns: [EXAMPLE], next_cursor: "" },
          returns: "A page of campaigns."
        }))
    )
    .add(
      HttpApiEndpoint.get("getCampaign", "/campaigns/:id")
        .setPath(CampaignPath)
        .addSuccess(CampaignAnswer)
        .addError(NotFoundResponse)
        .annotateContext(documented({
          summary: "Read a WhatsApp campaign",
          description: "A campaign with its counters, which move as it sends and as Meta's statuses come. Another account's, or an id that is " +
            "not one, is 404 `not_found`. " + CALLER,
          response: { result: true, success: true, campaign: EXAMPLE },
          returns: "The campaign."
        }))
    )
    .add(
      HttpApiEndpoint.get("listCampaignTargets", "/campaigns/:id/targets")
        .setPath(CampaignPath)
        .setUrlParams(Schema.Struct({ ...PageParams, status: Schema.optional(TargetStatus.annotations({ description: "Only targets in this status." })) }))
        .addSuccess(Schema.Struct({
          result: Schema.Literal(true),
          success: Schema.Literal(true),
          targets: Schema.Array(CampaignTarget).annotations({ description: "The targets on this page, highest target_no first." }),
          next_cursor: NextCursor
        }))
        .addError(InvalidRequestResponse)
        .addError(NotFoundResponse)
        .annotateContext(documented({
          summary: "List a campaign's targets",
          description: "One row per customer of the campaign, highest target_no first, by cursor: its status, message id and error. " + CALLER,
          response: {
            result: true,
            success: true,
            targets: [{
              target_no: 11999,
              customer_id: "0b6d…",
              phone: "+919812345678",
              message_id: "6e2aa670-73b1-4b35-abd7-22cbceab9053",
              status: "delivered",
              error: null,
              sent_at: "2026-11-29T08:01:10.000Z",
              delivered_at: "2026-11-29T08:01:12.000Z",
              read_at: null,
              failed_at: null
            }],
            next_cursor: ""
          },
          returns: "A page of targets."
        }))
    )
    .add(
      HttpApiEndpoint.post("cancelCampaign", "/campaigns/:id/cancel")
        .setPath(CampaignPath)
        .addSuccess(CampaignAnswer)
        .addError(NotFoundResponse)
        .addError(ConflictResponse)
        .annotateContext(documented({
          summary: "Cancel a WhatsApp campaign",
          description: "Stops it: targets not sent yet are cancelled; messages already with Meta go on. A campaign that completed or was " +
            "cancelled already is 409 `conflict` (`key: \"status\"`). " + CALLER,
          response: { result: true, success: true, campaign: { ...EXAMPLE, status: "cancelled", cancelled_at: "2026-11-29T08:05:00.000Z" } },
          returns: "The campaign, cancelled."
        }))
    )
    .add(
      HttpApiEndpoint.post("retryFailedCampaign", "/campaigns/:id/retry-failed")
        .setPath(CampaignPath)
        .addSuccess(CampaignAnswer, { status: 201 })
        .addError(NotFoundResponse)
        .addError(ConflictResponse)
        .addError(InsufficientBalanceResponse)
        .annotateContext(documented({
          summary: "Retry a campaign's failed targets",
          description: "Creates a new campaign (a new run, `audience: {retry_of}`) over this one's targets that failed with a category worth " +
            "trying again: `gateway` (Meta's 5xx, a request that never left) and `quota` (a throughput refusal). Failures of the recipient " +
            "or the content would fail the same way, and a send never confirmed may have reached the customer, so none of those is sent " +
            "again; customers who opted out since are skipped. The campaign must have completed or been cancelled (409 `conflict`, `key: " +
            "\"status\"`), and have such targets (409 `conflict`, `key: \"targets\"`). Same template, values and number; charged as any " +
            "campaign. " + CALLER,
          response: {
            result: true,
            success: true,
            campaign: { ...EXAMPLE, id: "5c8e1a2b-…", name: "Diwali offer (retry)", status: "queued", audience: { retry_of: EXAMPLE.id }, started_at: null }
          },
          returns: "The new campaign, queued."
        }))
    )

const DESCRIPTION = "WhatsApp campaigns: an approved template to a segment of customers, on the broadcast engine (docs/campaigns.md)."

/** /api/v1/public/campaigns: the public messaging API's campaigns (Basic secret key). */
export class PublicCampaignsApi extends campaignEndpoints("publicCampaigns")
  .middleware(PublicAuthentication)
  .prefix("/api/v1/public")
  .annotate(OpenApi.Description, DESCRIPTION) {}

/** /api/v1/app/campaigns: the same for the app API and its command-line client (Bearer secret key). */
export class AppCampaignsApi extends campaignEndpoints("appCampaigns")
  .middleware(AppAuthentication)
  .prefix("/api/v1/app")
  .annotate(OpenApi.Description, DESCRIPTION) {}
