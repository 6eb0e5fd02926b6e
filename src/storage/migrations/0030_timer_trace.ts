import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The trace a durable timer's command continues (docs/operations.md, Traces): the W3C
 * `traceparent` of the command that scheduled it, carried in the fired command's headers, so a
 * webhook's later attempts and a send's retries stay in the trace of the request that started
 * them. Null when tracing is off.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE actor_timers ADD COLUMN traceparent text`
})
