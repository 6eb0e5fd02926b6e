import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Opting out of marketing by keyword (src/customers/optOut.ts): developer webhooks made before it
 * receive its two events as well (the developer webhook takes every WhatsApp event, as 0020 did for
 * conversation.handoff). The state itself is a customer trait (`opted_out`), in `traits` and its
 * GIN index: no column.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    UPDATE webhooks SET events = events || ARRAY['customer.opted_out', 'customer.opted_in']
    WHERE channel = 'whatsapp' AND NOT 'customer.opted_out' = ANY(events)`
})
