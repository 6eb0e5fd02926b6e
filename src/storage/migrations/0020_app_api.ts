import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The app API (docs/app-api.md): saved customer segments, AI agent definitions and conversations
 * assigned to one, and the developer webhook's `conversation.handoff` event.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // A segment is a saved search: its filters and tags in the public search's shape, checked when
  // written and read back through the same parser as a search's.
  yield* sql`
    CREATE TABLE segments (
      segment_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      name text NOT NULL,
      filters jsonb NOT NULL DEFAULT '[]',
      tags text[] NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (account_id, name)
    )`
  yield* sql`CREATE INDEX segments_page_idx ON segments (account_id, created_at DESC, segment_id DESC)`

  yield* sql`
    CREATE TABLE ai_agents (
      agent_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      name text NOT NULL,
      instructions text NOT NULL DEFAULT '',
      faq jsonb NOT NULL DEFAULT '[]',
      handoff_keywords text[] NOT NULL DEFAULT '{}',
      active boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX ai_agents_page_idx ON ai_agents (account_id, created_at DESC, agent_id DESC)`

  // A conversation is assigned to a member or to an AI agent, never both.
  yield* sql`ALTER TABLE conversations ADD COLUMN assignee_ai_agent_id uuid REFERENCES ai_agents ON DELETE SET NULL`
  yield* sql`ALTER TABLE conversations ADD CONSTRAINT conversations_one_assignee CHECK (assignee_user_id IS NULL OR assignee_ai_agent_id IS NULL)`

  // The answer an AI agent owes an inbound message, decided in the inbound's transaction: sent after
  // it commits, and sent again (same message id) if Meta repeats the webhook before it was queued.
  yield* sql`ALTER TABLE wa_inbound ADD COLUMN ai_reply jsonb`

  yield* sql`
    UPDATE webhooks SET events = events || '{conversation.handoff}'::text[]
    WHERE channel = 'whatsapp' AND NOT 'conversation.handoff' = ANY(events)`
})
