import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Messaging: one row per message (single sends, auto-replies; broadcasts later), inbound user
 * messages, bots' upstream throughput, and charges booked in the wallet ledger.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // NULL: the platform default (HERALD_BOT_THROUGHPUT); 0: unlimited.
  yield* sql`ALTER TABLE bots ADD COLUMN throughput integer CHECK (throughput >= 0)`
  yield* sql`
    CREATE TABLE messages (
      message_id uuid PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      bot_id uuid NOT NULL REFERENCES bots ON DELETE CASCADE,
      recipient text NOT NULL,
      content jsonb NOT NULL,
      template_id uuid,
      source text NOT NULL CHECK (source IN ('api', 'auto_reply', 'broadcast')),
      -- queued: accepted, not yet answered upstream; unconfirmed: no answer, or the connection
      -- broke after the request left (it may still arrive; never resent).
      status text NOT NULL CHECK (status IN ('queued', 'unconfirmed', 'sent', 'delivered', 'read', 'failed')),
      error jsonb,
      price numeric(20, 4) NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      sent_at timestamptz,
      delivered_at timestamptz,
      read_at timestamptz,
      failed_at timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX messages_account_idx ON messages (account_id, created_at DESC, message_id DESC)`
  yield* sql`CREATE INDEX messages_bot_idx ON messages (bot_id, created_at DESC, message_id DESC)`
  yield* sql`CREATE INDEX messages_recipient_idx ON messages (account_id, recipient, created_at DESC)`
  // Whoever writes (the sender actor's outcome, a callback, a late retry), a status only moves
  // forward: sent → delivered → read, any → failed, and a late report never moves it back.
  yield* sql`
    CREATE FUNCTION herald_message_status_rank(status text) RETURNS integer
    LANGUAGE sql IMMUTABLE AS $$
      SELECT CASE status WHEN 'queued' THEN 0 WHEN 'unconfirmed' THEN 1 WHEN 'sent' THEN 2
        WHEN 'delivered' THEN 3 WHEN 'read' THEN 4 WHEN 'failed' THEN 5 END
    $$`
  yield* sql`
    CREATE FUNCTION herald_message_status_forward() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      IF herald_message_status_rank(NEW.status) < herald_message_status_rank(OLD.status) THEN
        NEW.status := OLD.status;
        NEW.error := OLD.error;
      END IF;
      NEW.sent_at := coalesce(OLD.sent_at, NEW.sent_at);
      NEW.delivered_at := coalesce(OLD.delivered_at, NEW.delivered_at);
      NEW.read_at := coalesce(OLD.read_at, NEW.read_at);
      NEW.failed_at := coalesce(OLD.failed_at, NEW.failed_at);
      NEW.created_at := OLD.created_at;
      NEW.updated_at := now();
      RETURN NEW;
    END $$`
  yield* sql`
    CREATE TRIGGER messages_status_forward BEFORE UPDATE ON messages
    FOR EACH ROW EXECUTE FUNCTION herald_message_status_forward()`
  // Nodes cache who listens for message events (webhooks/Subscriptions.ts): a new subscription
  // must reach them too, not only changes.
  yield* sql`
    CREATE TRIGGER webhooks_created AFTER INSERT ON webhooks
    FOR EACH ROW EXECUTE FUNCTION herald_notify_change()`
  yield* sql`
    CREATE TABLE inbound_messages (
      bot_id uuid NOT NULL REFERENCES bots ON DELETE CASCADE,
      -- The user's message id upstream: a repeated callback is the same message.
      upstream_id text NOT NULL,
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      sender text NOT NULL,
      text text NOT NULL,
      postback_data text,
      received_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (bot_id, upstream_id)
    )`
  yield* sql`CREATE INDEX inbound_messages_sender_idx ON inbound_messages (account_id, sender, received_at DESC)`
  // Charges are booked many at a time (a commit of the sender actor books its batch's); the
  // balance follows from the rows actually inserted, so a charge repeated after a crash (same
  // reference, skipped by the unique index) never moves it twice. Credits keep their own path.
  yield* sql`ALTER TABLE wallet_transactions ALTER COLUMN balance_after DROP NOT NULL`
  yield* sql`
    CREATE FUNCTION herald_apply_charges() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      -- Lock the accounts in one order: two commits charging the same accounts cannot deadlock.
      -- NO KEY UPDATE (what the UPDATE takes anyway), not UPDATE: the ledger rows' own foreign keys
      -- hold KEY SHARE on the same accounts, and upgrading past it would deadlock two chargers.
      PERFORM 1 FROM accounts WHERE account_id IN (SELECT account_id FROM new_rows WHERE kind IN ('charge', 'refund'))
        ORDER BY account_id FOR NO KEY UPDATE;
      UPDATE accounts a SET wallet_balance = a.wallet_balance + c.delta, updated_at = now()
      FROM (
        SELECT account_id, sum(CASE kind WHEN 'charge' THEN -amount ELSE amount END) AS delta
        FROM new_rows WHERE kind IN ('charge', 'refund') GROUP BY account_id
      ) c
      WHERE a.account_id = c.account_id;
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE TRIGGER wallet_charges_applied AFTER INSERT ON wallet_transactions
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_apply_charges()`
})
