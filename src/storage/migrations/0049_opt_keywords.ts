import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * An account's own opt-out and opt-in keywords (docs/opt-outs.md), stored as keywords (upper
 * case, letters and digits). No row: the defaults (Twilio's Advanced Opt-Out list, START and
 * UNSTOP).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE opt_keywords (
      account_id uuid PRIMARY KEY REFERENCES accounts ON DELETE CASCADE,
      opt_out text[] NOT NULL CHECK (cardinality(opt_out) BETWEEN 1 AND 50),
      opt_in text[] NOT NULL CHECK (cardinality(opt_in) <= 50),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  // Read on every inbound text through a node's cache (src/customers/OptKeywords.ts): a change
  // drops the account's entry on every node at commit.
  yield* sql`
    CREATE TRIGGER opt_keywords_changed AFTER INSERT OR UPDATE OR DELETE ON opt_keywords
    FOR EACH ROW EXECUTE FUNCTION herald_notify_change()`
})
