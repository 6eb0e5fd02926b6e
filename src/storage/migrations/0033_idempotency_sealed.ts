import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Idempotency answers sealed at rest (docs/idempotency.md): the answer of a key creation holds the
 * raw `sk_live_…` or `rcs_pk_live_…`, which a reader of the table must not see. From now on every
 * answer is stored sealed under HERALD_SECRETS_KEY (`sealed`); answers stored in plain before are
 * replayed as they are for the rest of their 24 hours, except those holding a raw key, which are
 * deleted here (a retry of such a request runs again under its new, per-principal scope anyway).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE idempotency_keys ADD COLUMN sealed boolean NOT NULL DEFAULT false`
  yield* sql`
    DELETE FROM idempotency_keys
    WHERE position('sk_live_'::bytea IN body) > 0 OR position('rcs_pk_live_'::bytea IN body) > 0`
})
