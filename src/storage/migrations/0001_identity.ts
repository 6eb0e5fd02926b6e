import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Accounts, the people who sign in, and who belongs to which account with which role. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE users (
      user_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      email text NOT NULL,
      password_hash text NOT NULL,
      totp_secret text,
      totp_enabled boolean NOT NULL DEFAULT false,
      totp_enabled_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX users_email_key ON users (lower(email))`
  yield* sql`
    CREATE TABLE user_recovery_codes (
      user_id uuid NOT NULL REFERENCES users ON DELETE CASCADE,
      code_hash text NOT NULL,
      used_at timestamptz,
      PRIMARY KEY (user_id, code_hash)
    )`
  yield* sql`
    CREATE TABLE accounts (
      account_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      label text NOT NULL,
      plan text NOT NULL CHECK (plan IN ('starter', 'growth', 'advanced', 'enterprise')),
      -- Enterprise plans set their own request rate; NULL means the plan's default.
      plan_rate_per_minute integer CHECK (plan_rate_per_minute > 0),
      owner_user_id uuid NOT NULL REFERENCES users,
      wallet_balance numeric(20, 4) NOT NULL DEFAULT 0,
      currency text NOT NULL DEFAULT 'INR',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE memberships (
      member_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES users ON DELETE CASCADE,
      role text NOT NULL CHECK (role IN ('owner', 'operator', 'viewer')),
      assigned_bots text[] NOT NULL DEFAULT ARRAY['*'],
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (account_id, user_id)
    )`
  yield* sql`CREATE INDEX memberships_user_idx ON memberships (user_id)`
  yield* sql`
    CREATE TABLE wallet_transactions (
      txn_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('credit', 'charge', 'refund')),
      amount numeric(20, 4) NOT NULL,
      balance_after numeric(20, 4) NOT NULL,
      -- What the entry is for (a message id for a charge); unique per kind so a redelivered
      -- charge can never be booked twice.
      reference text,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX wallet_transactions_reference_key ON wallet_transactions (account_id, kind, reference) WHERE reference IS NOT NULL`
  yield* sql`CREATE INDEX wallet_transactions_account_idx ON wallet_transactions (account_id, created_at DESC)`
  // Platform-wide settings (price per message, signing keys, ...), one JSON value per key.
  yield* sql`
    CREATE TABLE settings (
      key text PRIMARY KEY,
      value jsonb NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
})
