import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A message's history records `sent` when the gateway's answer comes after a later report. The
 * simulator (and a real gateway under load) may call back DELIVERED before the sender actor has
 * committed the send's own answer: the status moves queued → delivered, the answer then only sets
 * `sent_at` (a status never moves back, 0010), and 0024's trigger, which adds a row when the status
 * changes, never recorded `sent`. The message did go through it, at `sent_at`.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE OR REPLACE FUNCTION herald_message_history_updated() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      -- Rows whose status did not change (a late report the forward trigger kept back, a write
      -- of other columns) add nothing, but for a send's answer arriving after a later report.
      INSERT INTO message_status_history (message_id, status, at, error)
      SELECT n.message_id, n.status,
             herald_message_status_at(n.status, n.created_at, n.sent_at, n.delivered_at, n.read_at, n.failed_at, n.updated_at), n.error
      FROM new_rows n JOIN old_rows o ON o.message_id = n.message_id
      WHERE n.status <> o.status
      UNION ALL
      SELECT n.message_id, 'sent', n.sent_at, NULL
      FROM new_rows n JOIN old_rows o ON o.message_id = n.message_id
      WHERE o.sent_at IS NULL AND n.sent_at IS NOT NULL AND n.status <> 'sent'
        AND herald_message_status_rank(n.status) > herald_message_status_rank('sent') AND n.status <> 'failed'
      ON CONFLICT DO NOTHING;
      RETURN NULL;
    END $$`
  // Messages already recorded so: their `sent` from the time the answer set.
  yield* sql`
    INSERT INTO message_status_history (message_id, status, at, error)
    SELECT message_id, 'sent', sent_at, NULL FROM messages
    WHERE sent_at IS NOT NULL AND status IN ('delivered', 'read')
    ON CONFLICT DO NOTHING`
})
