import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A parked command whose payload jsonb cannot hold (a NUL character, an unpaired surrogate: the
 * very reason it could not be stored) is kept as the bytes it travelled as; parking must work for
 * any payload, or the command is retried forever.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE actor_poison ALTER COLUMN command DROP NOT NULL, ADD COLUMN command_bytes bytea`
  yield* sql`ALTER TABLE actor_poison ADD CONSTRAINT actor_poison_command_kept CHECK (command IS NOT NULL OR command_bytes IS NOT NULL)`
})
