import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The operator view's sign-ins (docs/console.md). The cookie still carries its expiry and an HMAC
 * under HERALD_OPS_TOKEN (a forged cookie costs no query, and a new token ends every session), and
 * a session is also a row here, which sign-out deletes: a cookie copied before sign-out opens
 * nothing afterwards, on any node. Only the SHA-256 of the cookie's value is stored.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE ops_sessions (
      session_hash bytea PRIMARY KEY,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX ops_sessions_expires_idx ON ops_sessions (expires_at)`
})
