import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Templates: message content stored once, checked against the RCS limits when created, and sent
 * by id (single sends, broadcasts, auto-replies). Soft-deleted, so a deleted template can no longer
 * be used while rows that referred to it keep their meaning; its name is then free again.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE templates (
      template_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      bot_id uuid NOT NULL REFERENCES bots ON DELETE CASCADE,
      name text NOT NULL,
      type text NOT NULL CHECK (type IN ('text', 'rich_card', 'carousel')),
      -- The MessageContent exactly as it is sent: {type, text | rich_card | carousel, suggestions}.
      content jsonb NOT NULL,
      -- The simulator approves at once; a real gateway may answer later.
      status text NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
      -- What the limits check said without refusing (e.g. PDF media, media that could not be checked).
      warnings text[] NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      deleted_at timestamptz,
      CHECK (content ->> 'type' = type)
    )`
  yield* sql`CREATE UNIQUE INDEX templates_bot_name_key ON templates (bot_id, name) WHERE deleted_at IS NULL`
  // Lists page newest first by (created_at, template_id), per account or per bot.
  yield* sql`CREATE INDEX templates_account_idx ON templates (account_id, created_at DESC, template_id DESC) WHERE deleted_at IS NULL`
  yield* sql`CREATE INDEX templates_bot_idx ON templates (bot_id, created_at DESC, template_id DESC) WHERE deleted_at IS NULL`
})
