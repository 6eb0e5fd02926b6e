import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The console's sign-ins (docs/console.md). A row is one browser session: the SHA-256 of the
 * random id in its cookie (the id itself is never stored), the user token it acts with, sealed
 * under HERALD_SECRETS_KEY, and its CSRF token. Deleting a row (sign-out, expiry, the account or
 * person gone) tells every node at commit through the change feed, so a signed-out cookie stops
 * working everywhere at once.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE console_sessions (
      session_hash bytea PRIMARY KEY,
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      sealed_token text NOT NULL,
      csrf_token text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX console_sessions_expires_idx ON console_sessions (expires_at)`
  yield* sql`
    CREATE TRIGGER console_sessions_changed AFTER DELETE ON console_sessions
    FOR EACH ROW EXECUTE FUNCTION herald_notify_change()`
})
