import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Webhooks: subscriptions (soft-deleted, so dead-letter visibility can tell a deleted endpoint),
 * the archived events, one delivery per (event, subscription), one row per finished attempt, and
 * the dead letters with their full envelope.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE webhooks (
      webhook_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      url text NOT NULL,
      events text[] NOT NULL,
      -- NULL: every bot of the account, including bots created later.
      bot_id uuid REFERENCES bots ON DELETE SET NULL,
      -- The signing secret itself: signing needs it (Standard Webhooks is HMAC).
      secret text NOT NULL,
      active boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      deleted_at timestamptz
    )`
  yield* sql`CREATE INDEX webhooks_account_idx ON webhooks (account_id) WHERE deleted_at IS NULL`
  // Delivery workers cache endpoints (URL, secret, live); the change feed tells them of changes.
  yield* sql`
    CREATE TRIGGER webhooks_changed AFTER UPDATE OR DELETE ON webhooks
    FOR EACH ROW EXECUTE FUNCTION herald_notify_change()`
  yield* sql`
    CREATE TABLE webhook_events (
      event_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      type text NOT NULL,
      bot_id uuid,
      data jsonb NOT NULL,
      occurred_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE webhook_deliveries (
      delivery_id text PRIMARY KEY,
      webhook_id uuid NOT NULL REFERENCES webhooks ON DELETE CASCADE,
      account_id uuid NOT NULL,
      event_id uuid NOT NULL REFERENCES webhook_events ON DELETE CASCADE,
      event_type text NOT NULL,
      envelope jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id)`
  yield* sql`
    CREATE TABLE webhook_attempts (
      attempt_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      delivery_id text NOT NULL,
      webhook_id uuid NOT NULL,
      account_id uuid NOT NULL,
      event_type text NOT NULL,
      url text NOT NULL,
      attempt integer NOT NULL CHECK (attempt BETWEEN 1 AND 4),
      status_code integer NOT NULL,
      took_ms integer NOT NULL,
      response_snippet text NOT NULL,
      sent_at timestamptz NOT NULL,
      UNIQUE (delivery_id, attempt)
    )`
  yield* sql`CREATE INDEX webhook_attempts_webhook_idx ON webhook_attempts (webhook_id, sent_at DESC)`
  yield* sql`
    CREATE TABLE webhook_dead_letters (
      delivery_id text PRIMARY KEY,
      webhook_id uuid NOT NULL,
      account_id uuid NOT NULL,
      event_type text NOT NULL,
      url text NOT NULL,
      reason text NOT NULL,
      envelope jsonb NOT NULL,
      first_attempt_at timestamptz NOT NULL,
      permanent_failure_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX webhook_dead_letters_account_idx ON webhook_dead_letters (account_id, permanent_failure_at DESC)`
})
