import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Sign-in: signing keys shared by all nodes, lockout counters, token invalidation. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Ed25519 keys as JWKs. The newest key not retired signs; every key not retired verifies and is
  // published in the JWKS, so a rotation never invalidates tokens already issued.
  yield* sql`
    CREATE TABLE signing_keys (
      kid text PRIMARY KEY,
      public_jwk jsonb NOT NULL,
      private_jwk jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      retired_at timestamptz
    )`
  // Failed sign-ins per e-mail (not per IP), shared by every API node.
  yield* sql`
    CREATE TABLE sign_in_attempts (
      email text PRIMARY KEY,
      failed_passwords integer NOT NULL DEFAULT 0,
      failed_codes integer NOT NULL DEFAULT 0,
      locked_until timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  // Tokens issued at or before this second are refused (set by a password change or reset).
  yield* sql`ALTER TABLE users ADD COLUMN tokens_valid_after timestamptz`
})
