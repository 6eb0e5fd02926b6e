import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { COOLDOWN_DEFAULT_SECONDS, COOLDOWN_MAX_SECONDS, KEYWORD_MAX, MATCH_KINDS } from "../../autoReplies/rules.ts"
import { Authentication } from "../Authentication.ts"
import { ConflictResponse, InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { ForbiddenResponse } from "./ApiKeysApi.ts"
import { BotNotInScopeResponse } from "./BotsApi.ts"

const Match = Schema.Literal(...MATCH_KINDS)
const Keyword = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(KEYWORD_MAX))
const Cooldown = Schema.Int.pipe(Schema.between(0, COOLDOWN_MAX_SECONDS))
// Both fields optional here: which one is given (exactly one) and the text's RBM limits are
// checked by the service, which names the field at fault.
const ReplyInput = Schema.Struct({ text: Schema.optional(Schema.String), template_id: Schema.optional(Schema.String) })

const Rule = Schema.Struct({
  rule_id: Schema.String,
  bot_id: Schema.String,
  match: Match,
  keyword: Schema.String,
  reply: Schema.Union(Schema.Struct({ text: Schema.String }), Schema.Struct({ template_id: Schema.String })),
  cooldown_seconds: Schema.Int,
  active: Schema.Boolean,
  created_at: Schema.String
})

const Fire = Schema.Struct({
  fire_id: Schema.String,
  rule_id: Schema.String,
  bot_id: Schema.String,
  recipient: Schema.String,
  inbound_text: Schema.String,
  message_id: Schema.String,
  // The reply's status in the message log (queued, sent, delivered, read, failed, unconfirmed);
  // null for the moment between the firing and the sender actor recording the message.
  reply_status: Schema.NullOr(Schema.String),
  fired_at: Schema.String
})

const BotPath = Schema.Struct({ bot_id: Schema.String })
const RulePath = Schema.Struct({ bot_id: Schema.String, rule_id: Schema.String })
const RuleAnswer = Schema.Struct({ success: Schema.Literal(true), rule: Rule })

/** Auto-reply rules of a bot and their firings (DESIGN.md, "Content shapes"; docs/auto-replies.md). */
export class AutoRepliesApi extends HttpApiGroup.make("autoReplies")
  .add(
    HttpApiEndpoint.get("list", "/:bot_id")
      .setPath(BotPath)
      .addSuccess(Schema.Struct({ success: Schema.Literal(true), rules: Schema.Array(Rule) }))
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
  )
  .add(
    HttpApiEndpoint.post("create", "/:bot_id")
      .setPath(BotPath)
      .setPayload(Schema.Struct({
        match: Match,
        keyword: Keyword,
        reply: ReplyInput,
        cooldown_seconds: Schema.optionalWith(Cooldown, { default: () => COOLDOWN_DEFAULT_SECONDS }),
        active: Schema.optionalWith(Schema.Boolean, { default: () => true })
      }))
      .addSuccess(RuleAnswer)
      .addError(InvalidRequestResponse)
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
      .addError(ConflictResponse)
  )
  .add(
    HttpApiEndpoint.get("fires", "/:bot_id/fires")
      .setPath(BotPath)
      .setUrlParams(Schema.Struct({
        // Above the maximum (1000) is served as the maximum.
        limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.positive())),
        cursor: Schema.optional(Schema.String)
      }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        fires: Schema.Array(Fire),
        count: Schema.Int,
        // Absent on the last page.
        next_cursor: Schema.optional(Schema.String)
      }))
      .addError(InvalidRequestResponse)
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
  )
  .add(
    HttpApiEndpoint.patch("update", "/:bot_id/:rule_id")
      .setPath(RulePath)
      .setPayload(Schema.Struct({
        match: Schema.optional(Match),
        keyword: Schema.optional(Keyword),
        reply: Schema.optional(ReplyInput),
        cooldown_seconds: Schema.optional(Cooldown),
        active: Schema.optional(Schema.Boolean)
      }))
      .addSuccess(RuleAnswer)
      .addError(InvalidRequestResponse)
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
  )
  .add(
    HttpApiEndpoint.del("remove", "/:bot_id/:rule_id")
      .setPath(RulePath)
      .addSuccess(Schema.Struct({ success: Schema.Literal(true) }))
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs/auto-replies") {}
