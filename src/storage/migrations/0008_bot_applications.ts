import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Bot applications: the company and brand a bot is registered for, and the claims that keep a
 * GSTIN or a brand website to one account. A claim is a row per (field, value) owned by the first
 * account that applied with it; the primary key makes two accounts racing for one value queue on
 * each other, the loser finding the winner's row. Claims stay when a bot is rejected or deleted:
 * the identity was used by that account.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE bots
      ADD COLUMN company_name text,
      ADD COLUMN company_gstin text,
      ADD COLUMN brand_website text`
  yield* sql`
    CREATE TABLE bot_identity_claims (
      field text NOT NULL CHECK (field IN ('company_gstin', 'brand_website')),
      value text NOT NULL,
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (field, value)
    )`
})
