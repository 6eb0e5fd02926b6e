import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { type PagePosition, positionOf } from "../storage/pageCursor.ts"
import type { MatchKind } from "./rules.ts"

export interface RuleRow {
  readonly ruleId: string
  readonly accountId: string
  readonly botId: string
  readonly match: MatchKind
  readonly keyword: string
  readonly replyText: string | null
  readonly replyTemplateId: string | null
  readonly cooldownSeconds: number
  readonly active: boolean
  readonly createdAt: Date
}

export interface FireRow {
  readonly fireId: string
  readonly ruleId: string
  readonly botId: string
  readonly recipient: string
  readonly inboundText: string
  readonly messageId: string
  /** The reply's status in the message log; null until the sender actor has recorded it. */
  readonly replyStatus: string | null
  readonly firedAt: Date
  /** fired_at to the microsecond, as a list cursor carries it. */
  readonly position: string
}

/** A reply as stored: one of the two columns is set. */
export interface StoredReply {
  readonly replyText: string | null
  readonly replyTemplateId: string | null
}

/** A bot keeps at most this many rules: its list is answered whole and scanned on every inbound message. */
export const RULES_PER_BOT_MAX = 500

const COLUMNS = `rule_id, account_id, bot_id, match, keyword, reply_text, reply_template_id, cooldown_seconds, active, created_at`

/** The row a firing writes, in the caller's transaction. */
export interface Firing {
  readonly ruleId: string
  readonly accountId: string
  readonly botId: string
  readonly recipient: string
  readonly inboundText: string
  readonly inboundId: string
  readonly messageId: string
}

export class AutoRepliesRepo extends Effect.Service<AutoRepliesRepo>()("herald/autoReplies/AutoRepliesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Every rule of the bot, in evaluation order (exact first, then oldest first). */
    const list = (botId: string) =>
      sql<RuleRow>`
        SELECT ${sql.literal(COLUMNS)} FROM auto_reply_rules WHERE bot_id = ${botId}::uuid
        ORDER BY (match = 'contains'), created_at, rule_id`.pipe(Effect.orDie)

    /** The active rules of the bot, for matching an inbound message. */
    const active = (botId: string) =>
      sql<RuleRow>`
        SELECT ${sql.literal(COLUMNS)} FROM auto_reply_rules WHERE bot_id = ${botId}::uuid AND active
        ORDER BY (match = 'contains'), created_at, rule_id`.pipe(Effect.orDie)

    /** A rule of the bot; a malformed id or another bot's rule is as good as unknown. */
    const find = (botId: string, ruleId: string) =>
      sql<RuleRow>`
        SELECT ${sql.literal(COLUMNS)} FROM auto_reply_rules WHERE bot_id = ${botId}::uuid AND rule_id::text = ${ruleId}`.pipe(
        Effect.map((rows) => rows[0]),
        Effect.orDie
      )

    /**
     * Stores a rule unless the bot has RULES_PER_BOT_MAX already ("TooMany", nothing written). The
     * count is read by the same statement, so only creations racing each other can overshoot it,
     * by a few: the limit bounds a list, it is not a quota anyone pays for.
     */
    const insert = (input: {
      readonly accountId: string
      readonly botId: string
      readonly match: MatchKind
      readonly keyword: string
      readonly reply: StoredReply
      readonly cooldownSeconds: number
      readonly active: boolean
    }) =>
      sql<RuleRow>`
        INSERT INTO auto_reply_rules (account_id, bot_id, match, keyword, reply_text, reply_template_id, cooldown_seconds, active)
        SELECT ${input.accountId}::uuid, ${input.botId}::uuid, ${input.match}, ${input.keyword}, ${input.reply.replyText},
               ${input.reply.replyTemplateId}::uuid, ${input.cooldownSeconds}, ${input.active}
        WHERE (SELECT count(*) FROM auto_reply_rules WHERE bot_id = ${input.botId}::uuid) < ${RULES_PER_BOT_MAX}
        RETURNING ${sql.literal(COLUMNS)}`.pipe(
        Effect.map((rows) => rows[0] ?? ("TooMany" as const)),
        Effect.orDie
      )

    /** Changes the given fields; undefined when the rule is gone. */
    const update = (botId: string, ruleId: string, changes: {
      readonly match?: MatchKind | undefined
      readonly keyword?: string | undefined
      readonly reply?: StoredReply | undefined
      readonly cooldownSeconds?: number | undefined
      readonly active?: boolean | undefined
    }) =>
      sql<RuleRow>`
        UPDATE auto_reply_rules SET
          match = COALESCE(${changes.match ?? null}, match),
          keyword = COALESCE(${changes.keyword ?? null}, keyword),
          reply_text = CASE WHEN ${changes.reply !== undefined} THEN ${changes.reply?.replyText ?? null} ELSE reply_text END,
          reply_template_id = CASE WHEN ${changes.reply !== undefined} THEN ${changes.reply?.replyTemplateId ?? null}::uuid ELSE reply_template_id END,
          cooldown_seconds = COALESCE(${changes.cooldownSeconds ?? null}::integer, cooldown_seconds),
          active = COALESCE(${changes.active ?? null}::boolean, active),
          updated_at = now()
        WHERE bot_id = ${botId}::uuid AND rule_id::text = ${ruleId}
        RETURNING ${sql.literal(COLUMNS)}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    /** Deletes the rule (its cooldowns go with it; its firings stay as history). False when it was gone. */
    const remove = (botId: string, ruleId: string) =>
      sql`DELETE FROM auto_reply_rules WHERE bot_id = ${botId}::uuid AND rule_id::text = ${ruleId} RETURNING rule_id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    /**
     * Claims the rule's cooldown for the recipient, atomically: the row is inserted, or moved to
     * now() only when the last firing is at least `cooldown_seconds` old. Two callbacks racing
     * for one (rule, recipient) serialize on the row, and the second sees the first's time, so at
     * most one fires per cooldown. The rule is re-read in the same statement: one deactivated or
     * deleted since it was matched claims nothing. False when the claim was refused.
     */
    const claimCooldown = (ruleId: string, recipient: string, cooldownSeconds: number) =>
      sql<{ lastFiredAt: Date }>`
        INSERT INTO auto_reply_cooldowns AS c (rule_id, recipient, last_fired_at)
        SELECT rule_id, ${recipient}, now() FROM auto_reply_rules WHERE rule_id = ${ruleId}::uuid AND active
        ON CONFLICT (rule_id, recipient) DO UPDATE SET last_fired_at = excluded.last_fired_at
        WHERE ${cooldownSeconds}::integer = 0
           OR c.last_fired_at <= excluded.last_fired_at - make_interval(secs => ${cooldownSeconds}::integer)
        RETURNING c.last_fired_at`.pipe(Effect.map((rows) => rows.length > 0))

    /** Records a firing; false when this inbound message fired already (nothing written). */
    const insertFire = (firing: Firing) =>
      sql`
        INSERT INTO auto_reply_fires (rule_id, account_id, bot_id, recipient, inbound_text, inbound_id, message_id)
        VALUES (${firing.ruleId}::uuid, ${firing.accountId}::uuid, ${firing.botId}::uuid, ${firing.recipient}, ${firing.inboundText},
                ${firing.inboundId}, ${firing.messageId}::uuid)
        ON CONFLICT (bot_id, inbound_id) DO NOTHING
        RETURNING fire_id`.pipe(Effect.map((rows) => rows.length > 0))

    /** One page of the bot's firings, newest first; `limit + 1` rows so the caller knows whether another follows. */
    const fires = (botId: string, after: PagePosition | undefined, limit: number) =>
      sql<FireRow>`
        SELECT f.fire_id, f.rule_id, f.bot_id, f.recipient, f.inbound_text, f.message_id, m.status AS reply_status, f.fired_at,
               ${sql.literal(positionOf("f.fired_at"))} AS position
        FROM auto_reply_fires f LEFT JOIN messages m ON m.message_id = f.message_id
        WHERE ${
        sql.and([
          sql`f.bot_id = ${botId}::uuid`,
          ...(after === undefined ? [] : [sql`(f.fired_at, f.fire_id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`])
        ])
      }
        ORDER BY f.fired_at DESC, f.fire_id DESC
        LIMIT ${limit + 1}`.pipe(Effect.orDie)

    return { list, active, find, insert, update, remove, claimCooldown, insertFire, fires } as const
  })
}) {}
