import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Timestamp } from "../../domain/timestamps.ts"
import { BotNotPromotional } from "../../broadcasts/errors.ts"
import { GatewayErrorRecord } from "../../gateway/RcsGateway.ts"
import { DEFAULT_VALUE_MAX } from "../../templates/placeholders.ts"
import { Authentication } from "../Authentication.ts"
import { ConflictResponse, errorResponse, InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { ForbiddenResponse } from "./ApiKeysApi.ts"
import { BotNotInScopeResponse } from "./BotsApi.ts"
import { BotNotActiveResponse, InsufficientBalanceResponse } from "./MessagesApi.ts"

const BotNotPromotionalResponse = errorResponse(BotNotPromotional, 403, "bot_not_promotional")

const BROADCAST_STATUSES = ["scheduled", "queued", "running", "completed", "cancelled"] as const
const TARGET_STATUSES = ["pending", "unconfirmed", "sent", "delivered", "read", "failed", "cancelled"] as const

const Broadcast = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  bot_id: Schema.String,
  template_id: Schema.String,
  contact_list_id: Schema.String,
  status: Schema.Literal(...BROADCAST_STATUSES),
  scheduled_at: Schema.NullOr(Schema.String),
  // Contacts of the list when the broadcast started.
  total_count: Schema.Int,
  // Taken by the gateway (later delivered or read included).
  sent_count: Schema.Int,
  // Delivered (read included).
  delivered_count: Schema.Int,
  read_count: Schema.Int,
  failed_count: Schema.Int,
  cancelled_count: Schema.Int,
  created_at: Schema.String,
  started_at: Schema.NullOr(Schema.String),
  completed_at: Schema.NullOr(Schema.String),
  cancelled_at: Schema.NullOr(Schema.String),
  // Default values of the template's placeholders ({} when it has none).
  variables: Schema.Record({ key: Schema.String, value: Schema.String })
})

/** A default value: Postgres stores neither a NUL nor half a surrogate pair, so neither is taken. */
const DefaultValue = Schema.String.pipe(
  Schema.maxLength(DEFAULT_VALUE_MAX),
  Schema.filter((value) => !/\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value), {
    message: () => "must not contain a NUL character or an unpaired surrogate"
  })
)

const Target = Schema.Struct({
  target_no: Schema.Int,
  phone: Schema.String,
  message_id: Schema.String,
  status: Schema.Literal(...TARGET_STATUSES),
  // The Gateway error record's title (message), when the target failed.
  failure_reason: Schema.NullOr(Schema.String),
  // The record without the envelope's `success`: it is a field of a target, not an answer.
  error: Schema.NullOr(GatewayErrorRecord.pipe(Schema.omit("success"))),
  sent_at: Schema.NullOr(Schema.String),
  delivered_at: Schema.NullOr(Schema.String),
  read_at: Schema.NullOr(Schema.String),
  failed_at: Schema.NullOr(Schema.String)
})

const BroadcastPath = Schema.Struct({ id: Schema.String })
const BroadcastAnswer = Schema.Struct({ success: Schema.Literal(true), broadcast: Broadcast })

const PageParams = {
  // Above the maximum (1000) is served as the maximum.
  limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.positive())),
  cursor: Schema.optional(Schema.String)
}

/** Broadcasts (DESIGN.md, Broadcasts; docs/broadcasts.md). */
export class BroadcastsApi extends HttpApiGroup.make("broadcasts")
  .add(
    HttpApiEndpoint.post("create", "/")
      .setPayload(Schema.Struct({
        name: Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(200)),
        bot_id: Schema.String,
        template_id: Schema.String,
        contact_list_id: Schema.String,
        // ISO 8601; absent (or past) starts at once.
        scheduled_at: Schema.optional(Timestamp),
        // Per-recipient personalisation: a default for each {{placeholder}} of the template, given
        // to contacts without a value of their own (docs/broadcasts.md, Personalisation).
        variables: Schema.optional(Schema.Record({ key: Schema.String, value: DefaultValue }))
      }))
      .addSuccess(BroadcastAnswer)
      .addError(InvalidRequestResponse)
      .addError(ForbiddenResponse)
      .addError(BotNotActiveResponse)
      .addError(BotNotPromotionalResponse)
      .addError(BotNotInScopeResponse)
      .addError(InsufficientBalanceResponse)
      .annotate(
        OpenApi.Description,
        "Sends an approved template of the bot to every contact of the list, now or at scheduled_at. The template's {{name}} and {{<param>}} " +
          "placeholders are filled per recipient from the contact's name and params; variables gives each placeholder's default, " +
          "for contacts without a value (required for every placeholder)."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/")
      .setUrlParams(Schema.Struct({ ...PageParams, status: Schema.optional(Schema.Literal(...BROADCAST_STATUSES)) }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        broadcasts: Schema.Array(Broadcast),
        count: Schema.Int,
        // Absent on the last page.
        next_cursor: Schema.optional(Schema.String)
      }))
      .addError(InvalidRequestResponse)
  )
  .add(
    HttpApiEndpoint.get("get", "/:id")
      .setPath(BroadcastPath)
      .addSuccess(BroadcastAnswer)
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
  )
  .add(
    HttpApiEndpoint.get("targets", "/:id/targets")
      .setPath(BroadcastPath)
      .setUrlParams(Schema.Struct({ ...PageParams, status: Schema.optional(Schema.Literal(...TARGET_STATUSES)) }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        targets: Schema.Array(Target),
        count: Schema.Int,
        // Absent on the last page.
        next_cursor: Schema.optional(Schema.String)
      }))
      .addError(InvalidRequestResponse)
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
      .annotate(OpenApi.Description, "Targets newest first (highest target_no first), optionally of one status. Needs contacts:read with an API key.")
  )
  .add(
    HttpApiEndpoint.post("cancel", "/:id/cancel")
      .setPath(BroadcastPath)
      .addSuccess(BroadcastAnswer)
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
      .addError(ConflictResponse)
      .annotate(OpenApi.Description, "Stops further sends; targets not sent become cancelled. 409 when the broadcast has finished.")
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs/broadcasts") {}
