import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The partner e-mail API (docs/partner-email.md): partners and their keys, the SES-shaped
 * resources, the mail a partner's `mailer` actor relays and what happened to it. Lists page newest
 * first by (created_at, id), so each list has that index under its partner.
 *
 * Event destinations of configuration sets are webhook endpoints of channel `email`: Herald's
 * delivery machinery (retries, attempts, dead letters) carries their events. Their `account_id`
 * holds the partner's id, the endpoint's tenant, so the foreign keys to accounts are dropped from
 * webhooks and webhook_events (accounts are never deleted; nothing relied on the cascade).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE partners (
      partner_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      name text NOT NULL,
      key_hash text NOT NULL UNIQUE,
      key_last_four text NOT NULL,
      max_24_hour_send integer NOT NULL DEFAULT 200 CHECK (max_24_hour_send >= 0),
      max_send_rate integer NOT NULL DEFAULT 1 CHECK (max_send_rate >= 1),
      production_access boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE email_identities (
      identity_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      partner_id uuid NOT NULL REFERENCES partners ON DELETE CASCADE,
      identity text NOT NULL,
      type text NOT NULL CHECK (type IN ('EMAIL_ADDRESS', 'DOMAIN')),
      status text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'VERIFIED', 'FAILED')),
      verify_token_hash text UNIQUE,
      dkim_tokens text[],
      -- Sealed (AES-256-GCM under HERALD_SECRETS_KEY): signing needs the key itself.
      dkim_private_key text,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      verified_at timestamptz,
      UNIQUE (partner_id, identity)
    )`
  yield* sql`CREATE INDEX email_identities_page_idx ON email_identities (partner_id, created_at DESC, identity_id DESC)`
  yield* sql`
    CREATE TABLE email_configuration_sets (
      config_set_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      partner_id uuid NOT NULL REFERENCES partners ON DELETE CASCADE,
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      UNIQUE (partner_id, name)
    )`
  yield* sql`CREATE INDEX email_configuration_sets_page_idx ON email_configuration_sets (partner_id, created_at DESC, config_set_id DESC)`
  yield* sql`
    CREATE TABLE email_templates (
      template_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      partner_id uuid NOT NULL REFERENCES partners ON DELETE CASCADE,
      name text NOT NULL,
      subject text NOT NULL,
      html text,
      text text,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (partner_id, name)
    )`
  yield* sql`CREATE INDEX email_templates_page_idx ON email_templates (partner_id, created_at DESC, template_id DESC)`
  yield* sql`
    CREATE TABLE email_suppression (
      suppression_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      partner_id uuid NOT NULL REFERENCES partners ON DELETE CASCADE,
      email text NOT NULL,
      reason text NOT NULL CHECK (reason IN ('BOUNCE', 'COMPLAINT', 'MANUAL')),
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      UNIQUE (partner_id, email)
    )`
  yield* sql`CREATE INDEX email_suppression_page_idx ON email_suppression (partner_id, created_at DESC, suppression_id DESC)`
  yield* sql`
    CREATE TABLE email_production_access (
      request_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      partner_id uuid NOT NULL REFERENCES partners ON DELETE CASCADE,
      mail_type text NOT NULL CHECK (mail_type IN ('MARKETING', 'TRANSACTIONAL')),
      website_url text NOT NULL,
      use_case_description text NOT NULL,
      status text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'GRANTED', 'DENIED')),
      reason text,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      decided_at timestamptz
    )`
  yield* sql`CREATE INDEX email_production_access_page_idx ON email_production_access (partner_id, created_at DESC, request_id DESC)`
  yield* sql`
    CREATE TABLE email_messages (
      message_id uuid PRIMARY KEY,
      partner_id uuid NOT NULL REFERENCES partners ON DELETE CASCADE,
      from_address text NOT NULL,
      to_addresses text[] NOT NULL,
      cc_addresses text[] NOT NULL DEFAULT '{}',
      bcc_addresses text[] NOT NULL DEFAULT '{}',
      reply_to text[] NOT NULL DEFAULT '{}',
      subject text NOT NULL,
      text_body text,
      html_body text,
      config_set_id uuid REFERENCES email_configuration_sets ON DELETE SET NULL,
      tags jsonb,
      -- Recipients counted against the daily quota when the message was accepted.
      recipient_count integer NOT NULL,
      status text NOT NULL CHECK (status IN ('QUEUED', 'SENT', 'DELIVERED', 'BOUNCED', 'COMPLAINED', 'REJECTED', 'SUPPRESSED')),
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX email_messages_window_idx ON email_messages (partner_id, created_at)`
  yield* sql`
    CREATE TABLE email_recipients (
      message_id uuid NOT NULL REFERENCES email_messages ON DELETE CASCADE,
      recipient text NOT NULL,
      partner_id uuid NOT NULL,
      -- Relay order within the partner's queue.
      seq bigserial,
      status text NOT NULL CHECK (status IN ('queued', 'sending', 'delivered', 'bounced', 'rejected', 'suppressed', 'complained')),
      attempts integer NOT NULL DEFAULT 0,
      -- queued: when it may be tried; sending: when its try is given up for lost (then tried again).
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      -- The process relaying it (sending): another process's try died with it.
      sending_by text,
      last_response text,
      PRIMARY KEY (message_id, recipient)
    )`
  yield* sql`CREATE INDEX email_recipients_queue_idx ON email_recipients (partner_id, seq) WHERE status IN ('queued', 'sending')`
  yield* sql`
    CREATE TABLE email_events (
      event_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      partner_id uuid NOT NULL REFERENCES partners ON DELETE CASCADE,
      message_id uuid NOT NULL,
      type text NOT NULL CHECK (type IN ('SEND', 'DELIVERY', 'BOUNCE', 'COMPLAINT', 'REJECT', 'SUPPRESSED')),
      recipient text,
      detail text NOT NULL DEFAULT '',
      -- clock_timestamp: events of one commit keep the order they happened in.
      created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    )`
  yield* sql`CREATE INDEX email_events_page_idx ON email_events (partner_id, created_at DESC, event_id DESC)`
  yield* sql`CREATE INDEX email_events_type_page_idx ON email_events (partner_id, type, created_at DESC, event_id DESC)`
  yield* sql`CREATE INDEX email_events_message_idx ON email_events (message_id, created_at, event_id)`

  yield* sql`ALTER TABLE webhooks DROP CONSTRAINT IF EXISTS webhooks_account_id_fkey`
  yield* sql`ALTER TABLE webhook_events DROP CONSTRAINT IF EXISTS webhook_events_account_id_fkey`
  yield* sql`ALTER TABLE webhooks DROP CONSTRAINT IF EXISTS webhooks_channel_check`
  yield* sql`ALTER TABLE webhooks ADD CONSTRAINT webhooks_channel_check CHECK (channel IN ('rcs', 'whatsapp', 'email'))`
  yield* sql`ALTER TABLE webhooks ADD COLUMN config_set_id uuid REFERENCES email_configuration_sets ON DELETE SET NULL`
  yield* sql`CREATE INDEX webhooks_config_set_idx ON webhooks (config_set_id) WHERE config_set_id IS NOT NULL AND deleted_at IS NULL`
})
