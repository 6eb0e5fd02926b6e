import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A broadcast target whose send the gateway did not confirm (no answer in time, or the connection
 * broke after the request left) is `unconfirmed` until its delivery report comes or the report
 * window (HERALD_BROADCAST_REPORT_WINDOW_MS) passes, from `unconfirmed_at`: only then is it failed.
 * A delivery report about it, or about a target still pending that a stopped node had claimed,
 * gives it its real outcome (docs/broadcasts.md, Restart safety).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE broadcast_targets DROP CONSTRAINT broadcast_targets_status_check`
  yield* sql`
    ALTER TABLE broadcast_targets ADD CONSTRAINT broadcast_targets_status_check
    CHECK (status IN ('pending', 'unconfirmed', 'sent', 'delivered', 'read', 'failed', 'cancelled'))`
  yield* sql`ALTER TABLE broadcast_targets ADD COLUMN unconfirmed_at timestamptz`
})
