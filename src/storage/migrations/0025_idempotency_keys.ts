import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Idempotency-Key (docs/idempotency.md): one row per (scope, key) for 24 hours. A request claims
 * the row (`running`, with a lease its node renews), and its answer is stored when it ends; a
 * duplicate on any node waits for the answer and replays it.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE idempotency_keys (
      scope text NOT NULL,
      key text NOT NULL,
      fingerprint text NOT NULL,
      state text NOT NULL CHECK (state IN ('running', 'done')),
      lease_until timestamptz NOT NULL,
      status integer,
      content_type text,
      body bytea,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (scope, key)
    )`
  yield* sql`CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at)`
})
