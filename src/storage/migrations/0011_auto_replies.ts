import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Auto-replies (docs/auto-replies.md): a bot's keyword rules, the cooldown of each rule per
 * recipient, and one row per firing.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE auto_reply_rules (
      rule_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      bot_id uuid NOT NULL REFERENCES bots ON DELETE CASCADE,
      match text NOT NULL CHECK (match IN ('exact', 'contains')),
      -- Stored trimmed, as written (case kept for display); compared case-insensitively.
      keyword text NOT NULL CHECK (length(keyword) BETWEEN 1 AND 200),
      -- Exactly one: a literal text, or a template of the same bot (checked when written, and
      -- again when firing since the template may have been deleted since).
      reply_text text,
      reply_template_id uuid,
      cooldown_seconds integer NOT NULL CHECK (cooldown_seconds BETWEEN 0 AND 2592000),
      active boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((reply_text IS NULL) <> (reply_template_id IS NULL))
    )`
  // Every inbound message reads its bot's active rules.
  yield* sql`CREATE INDEX auto_reply_rules_bot_idx ON auto_reply_rules (bot_id, created_at, rule_id)`
  // When a rule last fired for a recipient: claimed with one INSERT … ON CONFLICT DO UPDATE … WHERE,
  // so concurrent callbacks from one sender cannot both fire a rule inside its cooldown.
  yield* sql`
    CREATE TABLE auto_reply_cooldowns (
      rule_id uuid NOT NULL REFERENCES auto_reply_rules ON DELETE CASCADE,
      recipient text NOT NULL,
      last_fired_at timestamptz NOT NULL,
      PRIMARY KEY (rule_id, recipient)
    )`
  // History: kept when the rule is deleted (rule_id then names a rule that is gone).
  yield* sql`
    CREATE TABLE auto_reply_fires (
      fire_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      rule_id uuid NOT NULL,
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      bot_id uuid NOT NULL REFERENCES bots ON DELETE CASCADE,
      recipient text NOT NULL,
      -- The user's message that fired it, and its id upstream: one firing per inbound message.
      inbound_text text NOT NULL,
      inbound_id text NOT NULL,
      -- The reply, queued for the bot's sender actor in the same transaction.
      message_id uuid NOT NULL UNIQUE,
      fired_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (bot_id, inbound_id)
    )`
  // GET …/fires pages newest first by (fired_at, fire_id).
  yield* sql`CREATE INDEX auto_reply_fires_bot_idx ON auto_reply_fires (bot_id, fired_at DESC, fire_id DESC)`
})
