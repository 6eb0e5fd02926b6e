import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Many commands per JetStream message (docs/actors.md, Outbox): the outbox relay assigns pending
 * rows to a batch in a committed write before publishing it, so a batch re-published after a
 * crash has the same rows (and the same message id). Commands now have positions (stream sequence
 * × 65536 + index in their message) instead of bare stream sequences: the positions already
 * stored are scaled likewise, so a command redelivered across the upgrade is still recognised as
 * applied, and parked commands keep one numbering.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE actor_outbox ADD COLUMN batch bigint`
  yield* sql`CREATE INDEX actor_outbox_batch_idx ON actor_outbox (batch) WHERE published_at IS NULL`
  // Actors' state tables are created by the runtime (one per kind): those with these columns.
  const tables = yield* sql<{ tableName: string }>`
    SELECT c.table_name FROM information_schema.columns c
    WHERE c.table_schema = current_schema() AND c.column_name = 'last_seq'
      AND EXISTS (SELECT 1 FROM information_schema.columns k
                  WHERE k.table_schema = c.table_schema AND k.table_name = c.table_name AND k.column_name = 'actor_key')`
  for (const { tableName } of tables) yield* sql`UPDATE ${sql(tableName)} SET last_seq = last_seq * 65536`
  yield* sql`UPDATE actor_poison SET seq = seq * 65536`
})
