import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Per-recipient `message.*` events of broadcasts, for the endpoints that opt in (issue 22;
 * docs/webhooks.md, Broadcast messages).
 *
 * - `webhooks.include_broadcast_messages` (false by default: a constant default, so adding the
 *   column rewrites no row) opts an endpoint in.
 * - `webhook_batch_items` holds those events between the statement that moved a target (a slice's
 *   outcomes, a delivery report, the end of a report window), which writes them in its own
 *   statement or transaction, and the batcher (webhooks/MessageBatches.ts), which takes them out
 *   by the hundred in the transaction that writes the `message.batch` delivery carrying them. A
 *   row is one event for one endpoint; rows are written only for endpoints that opted in, so an
 *   account without one writes none. No foreign keys: a batch of a thousand rows would take a
 *   thousand share locks on the same endpoint row, and the batcher drops the rows of an endpoint
 *   gone or inactive when it takes them.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE webhooks ADD COLUMN include_broadcast_messages boolean NOT NULL DEFAULT false`
  yield* sql`
    CREATE TABLE webhook_batch_items (
      item_id bigserial PRIMARY KEY,
      webhook_id uuid NOT NULL,
      account_id uuid NOT NULL,
      broadcast_id uuid NOT NULL,
      bot_id uuid NOT NULL,
      -- The event's own id, as the consumer sees it in the batch: its deduplication key.
      event_id uuid NOT NULL DEFAULT gen_random_uuid(),
      type text NOT NULL,
      data jsonb NOT NULL,
      occurred_at timestamptz NOT NULL,
      staged_at timestamptz NOT NULL DEFAULT now()
    ) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 20000)`
})
