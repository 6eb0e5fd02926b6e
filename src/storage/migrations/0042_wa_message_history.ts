import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Every status a WhatsApp message went through, with its time (GET /api/v1/public/message/{id}),
 * as 0024 and 0038 keep it for RCS messages: written by statement triggers on `wa_messages`, in
 * the statement that changes the status and so in its transaction, whoever writes (the wa_sender
 * actor's commits, Meta's status webhooks, the 24-hour expiry of an unconfirmed send). A status
 * only moves forward (0010's trigger, ranked by 0017), so a message has each status at most once.
 * `accepted` is Meta's answer to the send (a wamid); `sent` is Meta's own status webhook. A
 * delivered or read report that comes before `sent` sets `sent_at` with it: the message went
 * through `sent`, and the history says so at that time (0038's rule).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE wa_message_status_history (
      message_id uuid NOT NULL REFERENCES wa_messages ON DELETE CASCADE,
      status text NOT NULL CHECK (status IN ('queued', 'accepted', 'unconfirmed', 'sent', 'delivered', 'read', 'failed')),
      at timestamptz NOT NULL,
      -- The Gateway error record the message had on reaching this status (failed, unconfirmed).
      error jsonb,
      PRIMARY KEY (message_id, status)
    )`
  yield* sql`
    CREATE FUNCTION herald_wa_history_inserted() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO wa_message_status_history (message_id, status, at, error)
      SELECT message_id, status, herald_message_status_at(status, created_at, sent_at, delivered_at, read_at, failed_at, updated_at), error
      FROM new_rows
      ON CONFLICT DO NOTHING;
      RETURN NULL;
    END $$`
  yield* sql`
    CREATE FUNCTION herald_wa_history_updated() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO wa_message_status_history (message_id, status, at, error)
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
  yield* sql`
    CREATE TRIGGER wa_messages_history_inserted AFTER INSERT ON wa_messages
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_wa_history_inserted()`
  yield* sql`
    CREATE TRIGGER wa_messages_history_updated AFTER UPDATE ON wa_messages
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION herald_wa_history_updated()`
  // Messages recorded before this migration: what their columns still tell (a status was reached
  // when its time is set; accepted and unconfirmed, which have no time of their own, only while
  // the message is still in them, at the row's last write).
  yield* sql`
    INSERT INTO wa_message_status_history (message_id, status, at, error)
    SELECT message_id, s.status, s.at, s.error
    FROM wa_messages m
    CROSS JOIN LATERAL (VALUES
      ('queued', m.created_at, NULL::jsonb),
      ('accepted', CASE WHEN m.status = 'accepted' THEN m.updated_at END, NULL::jsonb),
      ('unconfirmed', CASE WHEN m.status = 'unconfirmed' THEN m.updated_at END, m.error),
      ('sent', m.sent_at, NULL::jsonb),
      -- A read report without a delivered one sets delivered_at to the same time: read only.
      ('delivered', CASE WHEN m.read_at IS NULL OR m.delivered_at < m.read_at THEN m.delivered_at END, NULL::jsonb),
      ('read', m.read_at, NULL::jsonb),
      ('failed', m.failed_at, m.error)
    ) AS s(status, at, error)
    WHERE s.at IS NOT NULL`
})
