import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Every status a message went through, with its time (GET /api/v1/rcs/messages/{id}). Written by
 * triggers on `messages`, in the statement that changes the status and so in its transaction,
 * whoever writes: the sender actor's commits (insert `queued`, the gateway's answer) and the
 * gateway's reports alike. A status only moves forward (0010's trigger), so a message has each
 * status at most once: the key is (message_id, status), and a repeated write adds nothing.
 * Statement triggers with transition tables: the sender actor writes its messages a batch per
 * statement, and pays one trigger call per batch, not per row.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE message_status_history (
      message_id uuid NOT NULL REFERENCES messages ON DELETE CASCADE,
      status text NOT NULL CHECK (status IN ('queued', 'unconfirmed', 'sent', 'delivered', 'read', 'failed')),
      at timestamptz NOT NULL,
      -- The Gateway error record the message had on reaching this status (failed, unconfirmed).
      error jsonb,
      PRIMARY KEY (message_id, status)
    )`
  // The time of the status the row has now: its own column, else (unconfirmed has none) the
  // time of the write.
  yield* sql`
    CREATE FUNCTION herald_message_status_at(status text, created_at timestamptz, sent_at timestamptz, delivered_at timestamptz,
                                             read_at timestamptz, failed_at timestamptz, updated_at timestamptz)
    RETURNS timestamptz LANGUAGE sql IMMUTABLE AS $$
      SELECT coalesce(CASE status WHEN 'queued' THEN created_at WHEN 'sent' THEN sent_at WHEN 'delivered' THEN delivered_at
        WHEN 'read' THEN read_at WHEN 'failed' THEN failed_at END, updated_at)
    $$`
  yield* sql`
    CREATE FUNCTION herald_message_history_inserted() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO message_status_history (message_id, status, at, error)
      SELECT message_id, status, herald_message_status_at(status, created_at, sent_at, delivered_at, read_at, failed_at, updated_at), error
      FROM new_rows
      ON CONFLICT DO NOTHING;
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE FUNCTION herald_message_history_updated() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      -- Rows whose status did not change (a late report the forward trigger kept back, a write
      -- of other columns) add nothing.
      INSERT INTO message_status_history (message_id, status, at, error)
      SELECT n.message_id, n.status,
             herald_message_status_at(n.status, n.created_at, n.sent_at, n.delivered_at, n.read_at, n.failed_at, n.updated_at), n.error
      FROM new_rows n JOIN old_rows o ON o.message_id = n.message_id
      WHERE n.status <> o.status
      ON CONFLICT DO NOTHING;
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE TRIGGER messages_history_inserted AFTER INSERT ON messages
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_message_history_inserted()`
  yield* sql`
    CREATE TRIGGER messages_history_updated AFTER UPDATE ON messages
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_message_history_updated()`
  // Messages recorded before this migration: what their columns still tell (a status was reached
  // when its time is set; unconfirmed, only while it still is, at the row's last write).
  yield* sql`
    INSERT INTO message_status_history (message_id, status, at, error)
    SELECT message_id, s.status, s.at, s.error
    FROM messages m
    CROSS JOIN LATERAL (VALUES
      ('queued', m.created_at, NULL::jsonb),
      ('unconfirmed', CASE WHEN m.status = 'unconfirmed' THEN m.updated_at END, m.error),
      ('sent', m.sent_at, NULL::jsonb),
      -- A read report without a delivered one sets delivered_at to the same time: read only.
      ('delivered', CASE WHEN m.read_at IS NULL OR m.delivered_at < m.read_at THEN m.delivered_at END, NULL::jsonb),
      ('read', m.read_at, NULL::jsonb),
      ('failed', m.failed_at, m.error)
    ) AS s(status, at, error)
    WHERE s.at IS NOT NULL`
})
