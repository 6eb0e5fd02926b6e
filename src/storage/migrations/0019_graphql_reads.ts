import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Indexes of GraphQL's reads (docs/graphql.md): an account's WhatsApp calls newest first (`calls`,
 * paged by the keyset (occurred_at, call_id)), and a contact's conversations newest first
 * (`Contact.conversations`, a page per contact of a page of contacts: without it each contact
 * scanned all of the account's conversations).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX wa_calls_account_idx ON wa_calls (account_id, occurred_at DESC, call_id DESC)`
  yield* sql`CREATE INDEX conversations_customer_idx ON conversations (account_id, customer_id, created_at DESC, conversation_id DESC)`
})
