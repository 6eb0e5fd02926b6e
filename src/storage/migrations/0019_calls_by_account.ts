import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * An account's WhatsApp calls newest first (GraphQL's `calls`, docs/graphql.md): paged by the
 * keyset (occurred_at, call_id), both descending, within the account.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX wa_calls_account_idx ON wa_calls (account_id, occurred_at DESC, call_id DESC)`
})
