import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The account's secret key (public API, GraphQL, /api/v1/app): one active per account, hashed. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE accounts ADD COLUMN secret_key_hash text UNIQUE`
  yield* sql`ALTER TABLE accounts ADD COLUMN secret_key_last_four text`
  yield* sql`ALTER TABLE accounts ADD COLUMN secret_key_created_at timestamptz`
})
