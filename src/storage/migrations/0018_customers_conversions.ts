import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Customers searched by trait and tag (docs/customers.md), and conversions forwarded to Meta's
 * Conversions API (docs/conversions.md): the account's CAPI dataset and token, the events queued
 * for its `capi` actor, and a log row for every call Herald makes to an integration.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // jsonb_ops (not jsonb_path_ops): it serves `?` (exists) as well as `@>` (equality).
  yield* sql`CREATE INDEX customers_traits_idx ON customers USING gin (traits)`
  yield* sql`CREATE INDEX customers_tags_idx ON customers USING gin (tags)`
  yield* sql`CREATE INDEX customers_page_idx ON customers (account_id, created_at DESC, customer_id DESC)`

  // An ISO 8601 date or date-time as an instant, or NULL for anything else (no error: a trait is
  // whatever a client stored). A date, or a time without offset, is UTC; an offset is at most
  // ±15:59, as Postgres takes. The same rule as src/customers/isoInstant.ts, which reads filter
  // values (a test holds the two together). Immutable: every accepted form names its offset or is
  // read as UTC, so neither DateStyle nor TimeZone changes the result. PL/pgSQL, not SQL: a SQL
  // function with a FROM is never inlined, and its executor costs ~60 µs a call against ~8 here.
  yield* sql`
    CREATE FUNCTION herald_iso_instant(s text) RETURNS timestamptz
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
    DECLARE m text[];
    BEGIN
      m := regexp_match(s, '^([1-9][0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])(?:([T ](?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\\.[0-9]{1,6})?)?)(Z|[+-](?:0[0-9]|1[0-5])(?::?[0-5][0-9])?)?)?$');
      IF m IS NULL THEN RETURN NULL; END IF;
      IF m[3]::int > extract(day FROM make_date(m[1]::int, m[2]::int, 1) + interval '1 month - 1 day') THEN RETURN NULL; END IF;
      IF m[4] IS NULL THEN RETURN make_date(m[1]::int, m[2]::int, m[3]::int)::timestamp AT TIME ZONE 'UTC'; END IF;
      IF m[5] IS NULL THEN RETURN s::timestamp AT TIME ZONE 'UTC'; END IF;
      RETURN s::timestamptz;
    END
    $$`

  // The customer's traits that are ISO dates, as epoch seconds (microseconds kept): computed once
  // when traits are written, so a date filter compares numbers instead of parsing every row's
  // strings at search time.
  yield* sql`
    CREATE FUNCTION herald_trait_instants(traits jsonb) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
    DECLARE found jsonb := '{}'; k text; v text; t timestamptz;
    BEGIN
      FOR k, v IN SELECT key, value FROM jsonb_each_text(traits) WHERE value ~ '^[1-9][0-9]{3}-[01][0-9]-[0-3][0-9]' LOOP
        t := herald_iso_instant(v);
        IF t IS NOT NULL AND jsonb_typeof(traits -> k) = 'string' THEN found := found || jsonb_build_object(k, extract(epoch FROM t)); END IF;
      END LOOP;
      RETURN found;
    END
    $$`
  yield* sql`ALTER TABLE customers ADD COLUMN trait_instants jsonb GENERATED ALWAYS AS (herald_trait_instants(traits)) STORED`

  yield* sql`
    CREATE TABLE capi_configs (
      account_id uuid PRIMARY KEY REFERENCES accounts ON DELETE CASCADE,
      dataset_id text NOT NULL,
      -- AES-256-GCM under HERALD_SECRETS_KEY (src/security/SecretBox.ts): never shown again in full.
      access_token_sealed text NOT NULL,
      token_last4 text NOT NULL,
      test_event_code text,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`

  // Written by the account's capi actor only. event_uid is derived from (account, event_name,
  // event_id), so a repeated event is the same row: Meta's own deduplication key.
  yield* sql`
    CREATE TABLE capi_events (
      event_uid uuid PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY,
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      event_name text NOT NULL,
      event_id text NOT NULL,
      -- The event in Meta's format, user data already hashed.
      payload jsonb NOT NULL,
      status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sent', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      sent_at timestamptz,
      UNIQUE (account_id, event_name, event_id)
    )`
  yield* sql`CREATE INDEX capi_events_queue_idx ON capi_events (account_id, seq) WHERE status = 'queued'`
  yield* sql`CREATE INDEX capi_events_failed_idx ON capi_events (account_id, seq) WHERE status = 'failed'`

  yield* sql`
    CREATE TABLE integration_logs (
      log_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      integration text NOT NULL,
      -- NULL when no answer came (refused connection, timeout).
      status_code integer,
      outcome text NOT NULL CHECK (outcome IN ('delivered', 'retrying', 'failed')),
      attempt integer NOT NULL,
      took_ms integer NOT NULL,
      events integer NOT NULL,
      response_snippet text,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX integration_logs_account_idx ON integration_logs (account_id, created_at DESC, log_id DESC)`
})
