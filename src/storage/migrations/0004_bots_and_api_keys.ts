import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Bots (the minimal table bot scope needs; messaging completes it) and API keys. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE bots (
      bot_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      name text NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'active', 'rejected', 'suspended')),
      suspend_reason text,
      -- NULL when the registration's use case was never recorded (then it may broadcast).
      use_case text CHECK (use_case IN ('promotional', 'transactional', 'otp')),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX bots_account_idx ON bots (account_id, created_at DESC)`
  // Only the SHA-256 of a key and its last four characters are kept; the raw key is shown once.
  yield* sql`
    CREATE TABLE api_keys (
      key_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      name text NOT NULL,
      key_hash text NOT NULL UNIQUE,
      last_four text NOT NULL,
      scopes text[] NOT NULL,
      created_by text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_used_at timestamptz,
      expires_at timestamptz,
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX api_keys_account_idx ON api_keys (account_id, created_at DESC)`
})
