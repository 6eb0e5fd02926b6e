import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Invitations (DESIGN.md, Team): a person who already has a Herald user is added to another
 * account as `invited`, and the membership counts for nothing (sign-in, tokens, agents) until they
 * accept it, signed in as themselves. Every existing membership was made active at once.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE memberships ADD COLUMN status text NOT NULL DEFAULT 'active'
      CHECK (status IN ('active', 'invited'))`
})
