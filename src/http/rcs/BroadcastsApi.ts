import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Timestamp } from "../../domain/timestamps.ts"
import { BotNotPromotional } from "../../broadcasts/errors.ts"
import { GatewayErrorRecord } from "../../domain/gatewayError.ts"
import { DEFAULT_VALUE_MAX, PLACEHOLDERS_MAX } from "../../templates/placeholders.ts"
import { Authentication } from "../Authentication.ts"
import { ConflictResponse, errorResponse, InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { describe, documented } from "../openApiAnnotations.ts"
import { ForbiddenResponse } from "./ApiKeysApi.ts"
import { BotNotInScopeResponse } from "./BotsApi.ts"
import { NextCursor, PageCount, PageFields } from "./ContactListsApi.ts"
import { BotNotActiveResponse, InsufficientBalanceResponse } from "./MessagesApi.ts"

const BotNotPromotionalResponse = errorResponse(BotNotPromotional, 403, "bot_not_promotional")

const BROADCAST_STATUSES = ["scheduled", "queued", "running", "completed", "cancelled"] as const
const TARGET_STATUSES = ["pending", "unconfirmed", "sent", "delivered", "read", "failed", "cancelled"] as const

const BroadcastStatus = Schema.Literal(...BROADCAST_STATUSES).annotations({
  description: "scheduled: waiting for scheduled_at; queued: to start at once, not started yet; running: sending; completed: every target has its " +
    "outcome; cancelled: stopped by a cancel."
})
const TargetStatus = Schema.Literal(...TARGET_STATUSES).annotations({
  description: "pending: not sent yet; unconfirmed: the gateway did not confirm the send, never sent again, its delivery report settles it " +
    "(failed if none comes in time); sent: the gateway took it; delivered: it reached the phone; read: the recipient opened it; failed: see " +
    "error; cancelled: not sent because of a cancel."
})

const Broadcast = Schema.Struct({
  id: Schema.String.annotations({ description: "The broadcast's id." }),
  name: Schema.String.annotations({ description: "Its name, for people (need not be unique)." }),
  bot_id: Schema.String.annotations({ description: "The bot it is sent from." }),
  template_id: Schema.String.annotations({ description: "The template it sends." }),
  contact_list_id: Schema.String.annotations({ description: "The contact list it sends to." }),
  status: BroadcastStatus,
  scheduled_at: Schema.NullOr(Schema.String).annotations({ description: "When it was set to start (ISO 8601, UTC); null: at once." }),
  // Contacts of the list when the broadcast started.
  total_count: Schema.Int.annotations({ description: "Contacts of the list when it started (0 until then); contacts imported later are not sent to." }),
  // Taken by the gateway (later delivered or read included).
  sent_count: Schema.Int.annotations({ description: "Targets the gateway took, those delivered or read since included." }),
  // Delivered (read included).
  delivered_count: Schema.Int.annotations({ description: "Targets delivered, read ones included; moves with the gateway's reports, after completion too." }),
  read_count: Schema.Int.annotations({ description: "Targets the recipient read." }),
  failed_count: Schema.Int.annotations({ description: "Targets that failed, each with its Gateway error record." }),
  cancelled_count: Schema.Int.annotations({ description: "Targets not sent because of a cancel." }),
  created_at: Schema.String.annotations({ description: "When it was created (ISO 8601, UTC)." }),
  started_at: Schema.NullOr(Schema.String).annotations({ description: "When it started sending (ISO 8601, UTC); null before." }),
  completed_at: Schema.NullOr(Schema.String).annotations({ description: "When every target had its outcome (ISO 8601, UTC); null until then." }),
  cancelled_at: Schema.NullOr(Schema.String).annotations({ description: "When it was cancelled (ISO 8601, UTC); null unless it was." }),
  // Default values of the template's placeholders ({} when it has none).
  variables: Schema.Record({ key: Schema.String, value: Schema.String }).annotations({
    description: "The default value of each placeholder of the template, by placeholder; {} when the template has none."
  })
}).annotations({
  description: "A broadcast: an approved template sent to every contact of a list. Once it has finished, sent_count + failed_count + " +
    "cancelled_count = total_count."
})

/** A default value: Postgres stores neither a NUL nor half a surrogate pair, so neither is taken. */
const DefaultValue = Schema.String.pipe(
  Schema.maxLength(DEFAULT_VALUE_MAX),
  Schema.filter((value) => !/\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value), {
    message: () => "must not contain a NUL character or an unpaired surrogate"
  })
)

/** The Gateway error record as a field of a target: without the envelope's `success`, its fields described here. */
const TargetError = Schema.Struct({
  message: GatewayErrorRecord.fields.message.annotations({ description: "What went wrong, for a person: the target's failure_reason." }),
  detail: GatewayErrorRecord.fields.detail.annotations({ description: "More about it, as the gateway said it, and what to do." }),
  category: GatewayErrorRecord.fields.category.annotations({ description: "What kind of problem: content, media, recipient, config, quota, gateway or unknown." }),
  retryable: GatewayErrorRecord.fields.retryable.annotations({ description: "Whether sending the same message again later may succeed." }),
  message_id: Schema.optional(Schema.String.annotations({ description: "The message the record is about: present when the send was not confirmed." })),
  upstream_code: Schema.optional(Schema.Int.annotations({ description: "The upstream's own error code, when it gave one, for support and debugging." }))
})

const Target = Schema.Struct({
  target_no: Schema.Int.annotations({ description: "The target's number, from 0, in the order contacts were imported into the list." }),
  phone: Schema.String.annotations({ description: "The recipient, in E.164 with the leading '+'." }),
  message_id: Schema.String.annotations({ description: "The message's id, as the gateway and its delivery reports know it." }),
  status: TargetStatus,
  // The Gateway error record's title (message), when the target failed.
  failure_reason: Schema.NullOr(Schema.String).annotations({ description: "The error record's message when the target failed or is unconfirmed; null otherwise." }),
  // The record without the envelope's `success`: it is a field of a target, not an answer.
  error: Schema.NullOr(TargetError).annotations({
    description: "The Gateway error record (contract), without success: why the target failed or is unconfirmed; null otherwise."
  }),
  sent_at: Schema.NullOr(Schema.String).annotations({ description: "When the gateway took it (ISO 8601, UTC); null if it has not." }),
  delivered_at: Schema.NullOr(Schema.String).annotations({ description: "When it was delivered (ISO 8601, UTC); null if it has not been." }),
  read_at: Schema.NullOr(Schema.String).annotations({ description: "When the recipient read it (ISO 8601, UTC); null if they have not." }),
  failed_at: Schema.NullOr(Schema.String).annotations({ description: "When it failed (ISO 8601, UTC); null unless it did." })
}).annotations({ description: "One recipient of a broadcast and what became of its message." })

const BroadcastPath = Schema.Struct({ id: Schema.String.annotations({ description: "The broadcast's id." }) })
const BroadcastAnswer = Schema.Struct({ success: Schema.Literal(true), broadcast: Broadcast })

const BROADCAST = {
  id: "2f1e0d9c-8b7a-4695-a4b3-c2d1e0f9a8b7",
  name: "Diwali offers",
  bot_id: "1b2c3d4e-5f60-4718-89ab-cdef01234567",
  template_id: "3e2d1c0b-9a8f-4e7d-8c6b-5a4f3e2d1c0b",
  contact_list_id: "7c6b5a49-3827-4165-9e4f-d3c2b1a09f8e",
  status: "completed",
  scheduled_at: "2026-03-05T04:30:00.000Z",
  total_count: 12480,
  sent_count: 12400,
  delivered_count: 12100,
  read_count: 8300,
  failed_count: 80,
  cancelled_count: 0,
  created_at: "2026-03-01T10:15:00.000Z",
  started_at: "2026-03-05T04:30:00.412Z",
  completed_at: "2026-03-05T04:52:37.905Z",
  cancelled_at: null,
  variables: { name: "there", city: "your nearest" }
}

const SCHEDULED = {
  ...BROADCAST,
  status: "scheduled",
  total_count: 0,
  sent_count: 0,
  delivered_count: 0,
  read_count: 0,
  failed_count: 0,
  started_at: null,
  completed_at: null
}

const TARGET = {
  target_no: 12479,
  phone: "+919812345678",
  message_id: "6a5b4c3d-2e1f-4a0b-9c8d-7e6f5a4b3c2d",
  status: "read",
  failure_reason: null,
  error: null,
  sent_at: "2026-03-05T04:52:31.120Z",
  delivered_at: "2026-03-05T04:52:33.804Z",
  read_at: "2026-03-05T05:10:02.000Z",
  failed_at: null
}

const FAILED_TARGET = {
  target_no: 12478,
  phone: "+919811122233",
  message_id: "5b4c3d2e-1f0a-4b9c-8d7e-6f5a4b3c2d1e",
  status: "failed",
  failure_reason: "recipient not reachable over RCS",
  error: {
    message: "recipient not reachable over RCS",
    detail: "RBM answered 404 NOT_FOUND: Requested entity was not found. The number has no RCS, or the bot is not launched on the recipient's " +
      "carrier; reach this recipient another way (SMS).",
    category: "recipient",
    retryable: false
  },
  sent_at: null,
  delivered_at: null,
  read_at: null,
  failed_at: "2026-03-05T04:52:31.118Z"
}

/** Broadcasts (DESIGN.md, Broadcasts; docs/broadcasts.md). */
export class BroadcastsApi extends HttpApiGroup.make("broadcasts")
  .add(
    HttpApiEndpoint.post("create", "/")
      .setPayload(Schema.Struct({
        name: Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(200), describe("1 to 200 characters after trimming, for people; need not be unique.")),
        bot_id: Schema.String.annotations({
          description: "An active bot of the account, in the caller's scope, whose use case is promotional (or was never recorded)."
        }),
        template_id: Schema.String.annotations({ description: "An approved template of that bot." }),
        contact_list_id: Schema.String.annotations({
          description: "A live contact list of the account: every contact it holds when the broadcast starts gets the message."
        }),
        // ISO 8601; absent (or past) starts at once.
        scheduled_at: Schema.optional(
          Timestamp.pipe(describe("When to start: an ISO 8601 date-time such as 2026-03-05T04:30:00Z. Absent or in the past: at once."))
        ),
        // Per-recipient personalisation: a default for each {{placeholder}} of the template, given
        // to contacts without a value of their own (docs/broadcasts.md, Personalisation).
        variables: Schema.optional(Schema.Record({ key: Schema.String, value: DefaultValue }).pipe(describe(
          "A default for each {{placeholder}} of the template, by placeholder (name, city, offer.pct…), sent to contacts without a value of their " +
            `own. Required for every placeholder and for nothing else; at most ${DEFAULT_VALUE_MAX.toLocaleString("en")} characters each; "" ` +
            "leaves the placeholder out."
        )))
      }))
      .addSuccess(BroadcastAnswer)
      .addError(InvalidRequestResponse)
      .addError(ForbiddenResponse)
      .addError(BotNotActiveResponse)
      .addError(BotNotPromotionalResponse)
      .addError(BotNotInScopeResponse)
      .addError(InsufficientBalanceResponse)
      .annotateContext(documented({
        summary: "Create a broadcast",
        description: "Sends an approved template of the bot to every contact of the list, now or at scheduled_at. The template's {{name}} and " +
          "{{<param>}} placeholders are filled per recipient from the contact's name and params; variables gives each placeholder's default, " +
          "for contacts without a value (required for every placeholder).\n\n" +
          "Checked in this order before anything is written: the role (403 `forbidden`); the bot, active and of the account (403 " +
          "`bot_not_active`) and in the caller's scope (403 `bot_not_in_scope`); its use case (a transactional or OTP bot is 403 " +
          "`bot_not_promotional`); the template and the list (400 `invalid_request` naming the field); variables (400, one error per " +
          `placeholder; a template with more than ${PLACEHOLDERS_MAX} placeholders is refused); the wallet, which must cover the list's size ` +
          "times the message price (402 `insufficient_balance`).\n\n" +
          "The broadcast is answered scheduled (with scheduled_at) or queued; its progress shows in GET /api/v1/rcs/broadcasts/{id}. Takes an " +
          "Idempotency-Key. An operator or the owner, with a user token.",
        request: {
          name: "Diwali offers",
          bot_id: BROADCAST.bot_id,
          template_id: BROADCAST.template_id,
          contact_list_id: BROADCAST.contact_list_id,
          scheduled_at: "2026-03-05T04:30:00Z",
          variables: { name: "there", city: "your nearest" }
        },
        response: { success: true, broadcast: SCHEDULED },
        returns: "The new broadcast."
      }))
  )
  .add(
    HttpApiEndpoint.get("list", "/")
      .setUrlParams(Schema.Struct({ ...PageFields, status: Schema.optional(BroadcastStatus.annotations({ description: "Only broadcasts in this status." })) }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        broadcasts: Schema.Array(Broadcast).annotations({ description: "The broadcasts the caller may see, newest first." }),
        count: PageCount,
        // Absent on the last page.
        next_cursor: Schema.optional(NextCursor)
      }))
      .addError(InvalidRequestResponse)
      .annotateContext(documented({
        summary: "List the broadcasts",
        description: "The account's broadcasts, newest first, by cursor, optionally of one status, with their counters. A bot-scoped member " +
          "sees its bots' broadcasts only. A user token of any role, or an API key with broadcasts:read (broadcasts:write grants it).",
        response: { success: true, broadcasts: [BROADCAST], count: 1 },
        returns: "A page of broadcasts."
      }))
  )
  .add(
    HttpApiEndpoint.get("get", "/:id")
      .setPath(BroadcastPath)
      .addSuccess(BroadcastAnswer)
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
      .annotateContext(documented({
        summary: "Read a broadcast",
        description: "One broadcast with its status and live counters. Another account's broadcast is 404; another bot's, for a bot-scoped " +
          "member, 403 `bot_not_in_scope`. A user token of any role, or an API key with broadcasts:read.",
        response: { success: true, broadcast: BROADCAST },
        returns: "The broadcast."
      }))
  )
  .add(
    HttpApiEndpoint.get("targets", "/:id/targets")
      .setPath(BroadcastPath)
      .setUrlParams(Schema.Struct({ ...PageFields, status: Schema.optional(TargetStatus.annotations({ description: "Only targets in this status." })) }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        targets: Schema.Array(Target).annotations({ description: "The broadcast's targets, highest target_no first." }),
        count: PageCount,
        // Absent on the last page.
        next_cursor: Schema.optional(NextCursor)
      }))
      .addError(InvalidRequestResponse)
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
      .annotateContext(documented({
        summary: "List a broadcast's targets",
        description: "The report of a broadcast: one target per recipient, newest first (highest target_no first), optionally of one status. " +
          "Targets exist once the broadcast has started. Personal data: a user token of any role, or an API key with contacts:read.",
        response: { success: true, targets: [TARGET, FAILED_TARGET], count: 2 },
        returns: "A page of targets."
      }))
  )
  .add(
    HttpApiEndpoint.post("cancel", "/:id/cancel")
      .setPath(BroadcastPath)
      .addSuccess(BroadcastAnswer)
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
      .addError(ConflictResponse)
      .annotateContext(documented({
        summary: "Cancel a broadcast",
        description: "Stops further sends of a scheduled, queued or running broadcast. One not started yet never starts. A running one sends " +
          "no more (a slice already on its way finishes): its targets not sent yet become cancelled, counted in cancelled_count shortly " +
          "after the answer. A completed or cancelled broadcast is 409 `conflict` (`key: \"status\"`). An operator or the owner, with a " +
          "user token.",
        response: {
          success: true,
          broadcast: {
            ...BROADCAST,
            status: "cancelled",
            sent_count: 4200,
            delivered_count: 3900,
            read_count: 1200,
            failed_count: 25,
            completed_at: null,
            cancelled_at: "2026-03-05T04:38:10.221Z"
          }
        },
        returns: "The broadcast, cancelled."
      }))
  )  .add(
    HttpApiEndpoint.post("retryFailed", "/:id/retry-failed")
      .setPath(BroadcastPath)
      .addSuccess(BroadcastAnswer, { status: 201 })
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
      .addError(ConflictResponse)
      .addError(InsufficientBalanceResponse)
      .annotateContext(documented({
        summary: "Retry a broadcast's failed targets",
        description: "Creates a new broadcast over this one's targets that failed with a category worth trying again: `gateway` (the " +
          "gateway's own failures) and `quota` (its throughput refusals), each with its phone and values as they were and a new message_id. " +
          "Failures of the recipient or the content would fail the same way, and a send never confirmed may have been delivered, so none of " +
          "those is sent again. Same bot, template and defaults; its name ends in \" (retry)\". The broadcast must have completed or been " +
          "cancelled (409 `conflict`, `key: \"status\"`) and have such targets (409 `conflict`, `key: \"targets\"`); the wallet must cover " +
          "them (402). An operator or the owner, with a user token.",
        response: { success: true, broadcast: { ...BROADCAST, name: "Diwali (retry)", status: "queued", total_count: 0, started_at: null } },
        returns: "The new broadcast, queued."
      }))
  )

  .middleware(Authentication)
  .prefix("/api/v1/rcs/broadcasts")
  .annotate(OpenApi.Description, "Broadcasts: one approved template sent to every contact of a contact list, now or at a set time, with per-recipient " +
    "placeholders, live counters and a per-recipient report (docs/broadcasts.md).") {}
