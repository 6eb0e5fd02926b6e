import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Broadcasts (docs/broadcasts.md): one template sent to every contact of a list. Targets are
 * written and updated in sets (a chunk of a thousand at a time), never row by row.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE broadcasts (
      broadcast_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id uuid NOT NULL REFERENCES accounts ON DELETE CASCADE,
      bot_id uuid NOT NULL REFERENCES bots ON DELETE CASCADE,
      template_id uuid NOT NULL,
      list_id uuid NOT NULL REFERENCES contact_lists ON DELETE CASCADE,
      name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
      -- The template's content when the broadcast was created: a later template change or
      -- deletion does not change what the broadcast sends.
      content jsonb NOT NULL,
      price numeric(20, 4) NOT NULL,
      status text NOT NULL CHECK (status IN ('scheduled', 'queued', 'running', 'completed', 'cancelled')),
      scheduled_at timestamptz,
      -- Contacts of the list when the broadcast started (those imported later are not sent to).
      total_count integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      started_at timestamptz,
      completed_at timestamptz,
      cancelled_at timestamptz
    )`
  // The counters, kept by the statements that change targets from the rows they actually changed
  // (a statement repeated after a crash changes nothing twice), in COUNTER_SHARDS rows per
  // broadcast: a delivery report moves the shard of its target, so reports about one broadcast do
  // not queue on one row. A broadcast's counters are the sums.
  yield* sql`
    CREATE TABLE broadcast_counters (
      broadcast_id uuid NOT NULL REFERENCES broadcasts ON DELETE CASCADE,
      shard smallint NOT NULL,
      sent_count integer NOT NULL DEFAULT 0,
      delivered_count integer NOT NULL DEFAULT 0,
      read_count integer NOT NULL DEFAULT 0,
      failed_count integer NOT NULL DEFAULT 0,
      cancelled_count integer NOT NULL DEFAULT 0,
      PRIMARY KEY (broadcast_id, shard)
    )`
  yield* sql`CREATE INDEX broadcasts_account_idx ON broadcasts (account_id, created_at DESC, broadcast_id DESC)`
  // target_no numbers a broadcast's targets in list order from 0; chunk n is targets
  // [n·CHUNK, (n+1)·CHUNK). message_id is what the gateway knows the send by (its callbacks).
  yield* sql`
    CREATE TABLE broadcast_targets (
      broadcast_id uuid NOT NULL REFERENCES broadcasts ON DELETE CASCADE,
      target_no integer NOT NULL,
      phone text NOT NULL,
      message_id uuid NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'delivered', 'read', 'failed', 'cancelled')),
      failure_reason text,
      error jsonb,
      sent_at timestamptz,
      delivered_at timestamptz,
      read_at timestamptz,
      failed_at timestamptz,
      PRIMARY KEY (broadcast_id, target_no)
    )`
  yield* sql`CREATE UNIQUE INDEX broadcast_targets_message_idx ON broadcast_targets (message_id)`
  // Which targets of a chunk may have left for the gateway: the sender claims a slice (raises
  // claimed_upto) before sending it, so after a crash a target at or below the mark that has no
  // outcome is unconfirmed (failed, never re-sent) and one above it was never sent.
  yield* sql`
    CREATE TABLE broadcast_chunks (
      broadcast_id uuid NOT NULL REFERENCES broadcasts ON DELETE CASCADE,
      chunk_no integer NOT NULL,
      claimed_upto integer NOT NULL,
      claimed_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (broadcast_id, chunk_no)
    )`
})
