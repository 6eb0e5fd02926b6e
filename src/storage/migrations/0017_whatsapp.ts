import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * WhatsApp (docs/whatsapp.md): an account's numbers, its templates, the messages sent through the
 * public API, and what the gateway reports about its customers (inbound messages, calls, payments)
 * kept per conversation. The developer webhook is an ordinary webhook endpoint of channel
 * `whatsapp`.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE wa_numbers (
      -- Meta's ids: the number's, and its WhatsApp Business Account's.
      phone_number_id text PRIMARY KEY,
      waba_id text NOT NULL,
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      -- E.164; a number belongs to one account.
      phone text NOT NULL UNIQUE,
      display_name text,
      -- Messages per second upstream (Meta's default tier is 80).
      throughput integer NOT NULL CHECK (throughput BETWEEN 1 AND 1000000),
      is_default boolean NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX wa_numbers_default_idx ON wa_numbers (account_id) WHERE is_default`
  yield* sql`CREATE INDEX wa_numbers_account_idx ON wa_numbers (account_id, created_at)`
  yield* sql`
    CREATE TRIGGER wa_numbers_changed AFTER INSERT OR UPDATE OR DELETE ON wa_numbers
    FOR EACH ROW EXECUTE FUNCTION herald_notify_change()`

  // Customers: one row per phone of the account (traits and tags are the next issue's search).
  yield* sql`
    CREATE TABLE customers (
      customer_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      phone text NOT NULL,
      name text,
      user_id text,
      traits jsonb NOT NULL DEFAULT '{}',
      tags text[] NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      last_seen_at timestamptz,
      UNIQUE (account_id, phone)
    )`

  // One conversation per (number, customer). last_inbound_at opens the 24-hour service window.
  yield* sql`
    CREATE TABLE conversations (
      conversation_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      phone_number_id text NOT NULL REFERENCES wa_numbers ON DELETE CASCADE,
      customer_id uuid NOT NULL REFERENCES customers ON DELETE CASCADE,
      customer_phone text NOT NULL,
      status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'resolved')),
      assignee_user_id uuid REFERENCES users ON DELETE SET NULL,
      last_inbound_at timestamptz,
      last_message jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (phone_number_id, customer_phone)
    )`
  yield* sql`CREATE INDEX conversations_account_idx ON conversations (account_id, updated_at DESC, conversation_id DESC)`

  yield* sql`
    CREATE TABLE wa_templates (
      template_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      waba_id text NOT NULL,
      name text NOT NULL,
      language text NOT NULL,
      category text NOT NULL CHECK (category IN ('MARKETING', 'UTILITY', 'AUTHENTICATION')),
      kind text NOT NULL,
      components jsonb NOT NULL,
      status text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'APPROVED', 'REJECTED')),
      rejected_reason text,
      -- Meta's template id, once the submission is answered.
      upstream_id text,
      warnings jsonb NOT NULL DEFAULT '[]',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      deleted_at timestamptz
    )`
  yield* sql`CREATE UNIQUE INDEX wa_templates_name_idx ON wa_templates (account_id, name, language) WHERE deleted_at IS NULL`
  yield* sql`CREATE INDEX wa_templates_account_idx ON wa_templates (account_id, created_at DESC, template_id DESC) WHERE deleted_at IS NULL`
  yield* sql`CREATE INDEX wa_templates_upstream_idx ON wa_templates (upstream_id)`
  // Meta's reviews as they come, by Meta's template id: a review may overtake the commit of the
  // template it decides (both sides take an advisory lock on the id, so neither misses the other).
  yield* sql`
    CREATE TABLE wa_template_reviews (
      upstream_id text PRIMARY KEY,
      status text NOT NULL,
      reason text,
      reviewed_at timestamptz NOT NULL DEFAULT now()
    )`

  // A WhatsApp send: `accepted` once Meta took it (Meta's own `sent` comes as a status webhook).
  yield* sql`
    CREATE OR REPLACE FUNCTION herald_message_status_rank(status text) RETURNS integer
    LANGUAGE sql IMMUTABLE AS $$
      SELECT CASE status WHEN 'queued' THEN 0 WHEN 'accepted' THEN 1 WHEN 'unconfirmed' THEN 1 WHEN 'sent' THEN 2
        WHEN 'delivered' THEN 3 WHEN 'read' THEN 4 WHEN 'failed' THEN 5 END
    $$`
  yield* sql`
    CREATE TABLE wa_messages (
      message_id uuid PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      phone_number_id text NOT NULL,
      recipient text NOT NULL,
      -- The public type name (Text, InteractiveList, Template, ...), and what goes upstream.
      type text NOT NULL,
      content jsonb NOT NULL,
      template_id uuid,
      category text,
      callback_data text,
      status text NOT NULL CHECK (status IN ('queued', 'accepted', 'unconfirmed', 'sent', 'delivered', 'read', 'failed')),
      -- What a delivery costs (template category price; 0 for service messages).
      price numeric(12, 4) NOT NULL,
      upstream_id text,
      error jsonb,
      attempts integer NOT NULL DEFAULT 1,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      sent_at timestamptz,
      delivered_at timestamptz,
      read_at timestamptz,
      failed_at timestamptz
    )`
  yield* sql`CREATE INDEX wa_messages_account_idx ON wa_messages (account_id, created_at DESC, message_id DESC)`
  // Statuses name Meta's id; Herald's own travels with them too, but not from every sender.
  yield* sql`CREATE INDEX wa_messages_upstream_idx ON wa_messages (upstream_id) WHERE upstream_id IS NOT NULL`
  yield* sql`CREATE INDEX wa_messages_conversation_idx ON wa_messages (phone_number_id, recipient, created_at DESC)`
  yield* sql`
    CREATE TRIGGER wa_messages_status_forward BEFORE UPDATE ON wa_messages
    FOR EACH ROW EXECUTE FUNCTION herald_message_status_forward()`

  // Inbound messages, idempotent on Meta's id (Meta retries a webhook for days).
  yield* sql`
    CREATE TABLE wa_inbound (
      upstream_id text PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      phone_number_id text NOT NULL,
      conversation_id uuid NOT NULL REFERENCES conversations ON DELETE CASCADE,
      customer_id uuid NOT NULL,
      sender text NOT NULL,
      type text NOT NULL,
      text text,
      payload jsonb NOT NULL,
      received_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX wa_inbound_conversation_idx ON wa_inbound (conversation_id, received_at DESC)`
  yield* sql`
    CREATE TABLE wa_calls (
      call_id text PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      conversation_id uuid NOT NULL REFERENCES conversations ON DELETE CASCADE,
      direction text NOT NULL,
      status text NOT NULL,
      duration_sec integer NOT NULL,
      recording_url text,
      occurred_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX wa_calls_conversation_idx ON wa_calls (conversation_id, occurred_at DESC)`
  yield* sql`
    CREATE TABLE wa_payments (
      payment_id text PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      conversation_id uuid NOT NULL REFERENCES conversations ON DELETE CASCADE,
      reference_id text NOT NULL,
      amount numeric(14, 2) NOT NULL,
      currency text NOT NULL,
      status text NOT NULL,
      occurred_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX wa_payments_conversation_idx ON wa_payments (conversation_id, occurred_at DESC)`

  // The developer webhook (Settings, Developer) is the account's one endpoint of channel whatsapp.
  yield* sql`ALTER TABLE webhooks ADD COLUMN channel text NOT NULL DEFAULT 'rcs' CHECK (channel IN ('rcs', 'whatsapp'))`
  yield* sql`CREATE UNIQUE INDEX webhooks_developer_idx ON webhooks (account_id) WHERE channel = 'whatsapp' AND deleted_at IS NULL`
})
