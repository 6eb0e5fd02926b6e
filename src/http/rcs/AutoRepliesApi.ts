import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { RULES_PER_BOT_MAX } from "../../autoReplies/AutoRepliesRepo.ts"
import { COOLDOWN_DEFAULT_SECONDS, COOLDOWN_MAX_SECONDS, KEYWORD_MAX, MATCH_KINDS } from "../../autoReplies/rules.ts"
import { Authentication } from "../Authentication.ts"
import { ConflictResponse, InvalidRequestResponse, NotFoundResponse } from "../errors.ts"
import { describe, documented } from "../openApiAnnotations.ts"
import { ForbiddenResponse } from "./ApiKeysApi.ts"
import { BotNotInScopeResponse } from "./BotsApi.ts"

const Match = Schema.Literal(...MATCH_KINDS).annotations({
  description: "exact: the whole message equals the keyword; contains: the keyword appears anywhere in it. Both compare after Unicode " +
    "normalization (NFKC), case folding and trimming."
})
const Keyword = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(KEYWORD_MAX))
const Cooldown = Schema.Int.pipe(Schema.between(0, COOLDOWN_MAX_SECONDS))
const COOLDOWN = `Seconds before the rule answers the same sender again, 0 (no cooldown) to ${COOLDOWN_MAX_SECONDS.toLocaleString("en")} (30 days).`
// Both fields optional here: which one is given (exactly one) and the text's RBM limits are
// checked by the service, which names the field at fault.
const ReplyInput = Schema.Struct({
  text: Schema.optional(Schema.String.annotations({ description: "Reply with this text message (1 to 3,072 characters)." })),
  template_id: Schema.optional(Schema.String.annotations({ description: "Reply with this template: an approved template of the same bot." }))
}).annotations({ description: "What the rule answers: exactly one of text or template_id." })

const Rule = Schema.Struct({
  rule_id: Schema.String.annotations({ description: "The rule's id." }),
  bot_id: Schema.String.annotations({ description: "The bot it answers for." }),
  match: Match,
  keyword: Schema.String.annotations({ description: "The keyword, trimmed." }),
  reply: Schema.Union(
    Schema.Struct({ text: Schema.String.annotations({ description: "The text it replies with." }) }),
    Schema.Struct({ template_id: Schema.String.annotations({ description: "The template it replies with." }) })
  ).annotations({ description: "What it answers: {text} or {template_id}." }),
  cooldown_seconds: Schema.Int.annotations({ description: "Seconds before it answers the same sender again; 0: no cooldown." }),
  active: Schema.Boolean.annotations({ description: "Whether it fires: an inactive rule never does." }),
  created_at: Schema.String.annotations({ description: "When it was made (ISO 8601, UTC): among rules of one match kind, the oldest is tried first." })
}).annotations({ description: "An auto-reply rule of a bot." })

const Fire = Schema.Struct({
  fire_id: Schema.String.annotations({ description: "The firing's id." }),
  rule_id: Schema.String.annotations({ description: "The rule that fired (it may have been deleted since)." }),
  bot_id: Schema.String.annotations({ description: "The bot that answered." }),
  recipient: Schema.String.annotations({ description: "The user answered, E.164 with its '+' (as the gateway gave it when it is not a number Herald knows)." }),
  inbound_text: Schema.String.annotations({ description: "The user's message that fired the rule." }),
  message_id: Schema.String.annotations({ description: "The reply's message_id in the message log (GET /api/v1/rcs/messages/{id})." }),
  // The reply's status in the message log (queued, sent, delivered, read, failed, unconfirmed);
  // null for the moment between the firing and the sender actor recording the message.
  reply_status: Schema.NullOr(Schema.String).annotations({
    description: "The reply's status in the message log (queued, unconfirmed, sent, delivered, read or failed); null for the moment before it is recorded."
  }),
  fired_at: Schema.String.annotations({ description: "When the rule fired (ISO 8601, UTC)." })
}).annotations({ description: "One firing of a rule: a user's message answered." })

const BotId = Schema.String.annotations({ description: "The bot's id: another account's bot, an unknown or a malformed id are 404." })
const BotPath = Schema.Struct({ bot_id: BotId })
const RulePath = Schema.Struct({ bot_id: BotId, rule_id: Schema.String.annotations({ description: "The rule's id: a rule of this bot (404 otherwise)." }) })
const RuleAnswer = Schema.Struct({ success: Schema.Literal(true), rule: Rule })

const BOT = "1b2c3d4e-5f60-4718-89ab-cdef01234567"
const RULE = {
  rule_id: "8da16236-19a3-442c-b172-99da7bc51224",
  bot_id: BOT,
  match: "exact",
  keyword: "opening hours",
  reply: { text: "We are open 9:00 to 17:00, Monday to Friday." },
  cooldown_seconds: 3600,
  active: true,
  created_at: "2026-03-01T09:30:00.000Z"
}
const SCOPED = "A member limited to some bots is 403 `bot_not_in_scope` on other bots."
const WRITER = "An operator or the owner, with a user token (a viewer is 403 `forbidden`; API keys cannot write: 403 `api_key_endpoint_not_allowed`)."

/** Auto-reply rules of a bot and their firings (DESIGN.md, "Content shapes"; docs/auto-replies.md). */
export class AutoRepliesApi extends HttpApiGroup.make("autoReplies")
  .add(
    HttpApiEndpoint.get("list", "/:bot_id")
      .setPath(BotPath)
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        rules: Schema.Array(Rule).annotations({ description: "The bot's rules in the order they are tried: exact rules before contains rules, each kind oldest first." })
      }))
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
      .annotateContext(documented({
        summary: "List a bot's auto-reply rules",
        description: "Every rule of the bot, in evaluation order: a user's message fires the first active rule it matches. " +
          `${SCOPED} A user token of any role, or an API key with auto_replies:read.`,
        response: {
          success: true,
          rules: [
            RULE,
            {
              ...RULE,
              rule_id: "6a65e9ef-c4bc-4d56-90e2-28db71b4b1ff",
              match: "contains",
              keyword: "track",
              reply: { template_id: "3e2d1c0b-9a8f-4e7d-8c6b-5a4f3e2d1c0b" },
              cooldown_seconds: 0,
              created_at: "2026-03-01T09:45:00.000Z"
            }
          ]
        },
        returns: "The rules."
      }))
  )
  .add(
    HttpApiEndpoint.post("create", "/:bot_id")
      .setPath(BotPath)
      .setPayload(Schema.Struct({
        match: Match,
        keyword: Keyword.pipe(describe(`What to look for in a user's message: 1 to ${KEYWORD_MAX} characters after trimming; stored trimmed.`)),
        reply: ReplyInput,
        cooldown_seconds: Schema.optionalWith(Cooldown.pipe(describe(`${COOLDOWN} ${COOLDOWN_DEFAULT_SECONDS.toLocaleString("en")} (one hour) by default.`)), {
          default: () => COOLDOWN_DEFAULT_SECONDS
        }),
        active: Schema.optionalWith(Schema.Boolean.annotations({ description: "Whether the rule fires: true by default." }), { default: () => true })
      }))
      .addSuccess(RuleAnswer)
      .addError(InvalidRequestResponse)
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
      .addError(ConflictResponse)
      .annotateContext(documented({
        summary: "Create an auto-reply rule",
        description: "A rule answers a user's message that matches its keyword, at most once per user per cooldown. The reply is a text " +
          "(checked against the RCS limits) or an approved template of the same bot; every problem is named at once (400). Rules can be set " +
          `on a bot that is not active yet: they fire once it is. A bot keeps at most ${RULES_PER_BOT_MAX} rules (409 \`conflict\`, ` +
          `\`key: "bot_id"\`). ${SCOPED} ${WRITER}`,
        request: { match: "exact", keyword: "opening hours", reply: { text: "We are open 9:00 to 17:00, Monday to Friday." }, cooldown_seconds: 3600, active: true },
        response: { success: true, rule: RULE },
        returns: "The new rule."
      }))
  )
  .add(
    HttpApiEndpoint.get("fires", "/:bot_id/fires")
      .setPath(BotPath)
      .setUrlParams(Schema.Struct({
        // Above the maximum (1000) is served as the maximum.
        limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.positive(), describe("Firings on the page: 100 by default; above 1,000 is served as 1,000."))),
        cursor: Schema.optional(Schema.String.annotations({ description: "The next_cursor of the previous page, passed back verbatim; absent for the first page." }))
      }))
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        fires: Schema.Array(Fire).annotations({ description: "The bot's firings, newest first." }),
        count: Schema.Int.annotations({ description: "Firings on this page." }),
        // Absent on the last page.
        next_cursor: Schema.optional(Schema.String.annotations({ description: "Pass it as cursor for the next page; absent on the last page." }))
      }))
      .addError(InvalidRequestResponse)
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
      .annotateContext(documented({
        summary: "List a bot's auto-reply firings",
        description: "Every time a rule of the bot answered a user, newest first, by cursor, with the reply's status. A cursor this list did " +
          `not give out is 400. ${SCOPED} A user token of any role, or an API key with contacts:read (the answer holds phone numbers; ` +
          "auto_replies:read is not enough).",
        response: {
          success: true,
          fires: [{
            fire_id: "bac46bf2-f642-4212-9b0c-0bc68fd5a398",
            rule_id: RULE.rule_id,
            bot_id: BOT,
            recipient: "+919812345678",
            inbound_text: "Opening hours?",
            message_id: "dddd9d2b-107f-4a93-bbc1-b02af9f4e3b3",
            reply_status: "delivered",
            fired_at: "2026-03-02T18:04:11.527Z"
          }],
          count: 1
        },
        returns: "A page of firings."
      }))
  )
  .add(
    HttpApiEndpoint.patch("update", "/:bot_id/:rule_id")
      .setPath(RulePath)
      .setPayload(Schema.Struct({
        match: Schema.optional(Match),
        keyword: Schema.optional(Keyword.pipe(describe(`A new keyword: 1 to ${KEYWORD_MAX} characters after trimming; stored trimmed.`))),
        reply: Schema.optional(ReplyInput),
        cooldown_seconds: Schema.optional(Cooldown.pipe(describe(COOLDOWN))),
        active: Schema.optional(Schema.Boolean.annotations({ description: "false stops the rule firing; true starts it again." }))
      }))
      .addSuccess(RuleAnswer)
      .addError(InvalidRequestResponse)
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
      .annotateContext(documented({
        summary: "Change an auto-reply rule",
        description: "Only the fields given change, with the checks of creation; an empty body changes nothing and answers the rule. " +
          `${SCOPED} ${WRITER}`,
        request: { reply: { template_id: "3e2d1c0b-9a8f-4e7d-8c6b-5a4f3e2d1c0b" }, cooldown_seconds: 86400 },
        response: { success: true, rule: { ...RULE, reply: { template_id: "3e2d1c0b-9a8f-4e7d-8c6b-5a4f3e2d1c0b" }, cooldown_seconds: 86400 } },
        returns: "The rule as it is now."
      }))
  )
  .add(
    HttpApiEndpoint.del("remove", "/:bot_id/:rule_id")
      .setPath(RulePath)
      .addSuccess(Schema.Struct({ success: Schema.Literal(true) }))
      .addError(ForbiddenResponse)
      .addError(NotFoundResponse)
      .addError(BotNotInScopeResponse)
      .annotateContext(documented({
        summary: "Delete an auto-reply rule",
        description: `The rule stops firing at once; its firings stay listed. A second DELETE is 404. ${SCOPED} ${WRITER}`,
        response: { success: true },
        returns: "Deleted."
      }))
  )
  .middleware(Authentication)
  .prefix("/api/v1/rcs/auto-replies")
  .annotate(
    OpenApi.Description,
    "Auto-replies: a bot's keyword rules that answer users' messages with a text or a template, at most once per user per cooldown, and " +
      "the record of their firings (docs/auto-replies.md)."
  ) {}
