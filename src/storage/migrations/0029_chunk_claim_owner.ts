import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Who holds a broadcast chunk's claim (docs/broadcasts.md, Restart safety): a token per run of the
 * chunk. A run that stops because its node gave the bot's partition up (handed off, or lost while
 * the node was paused or cut off) releases the claim, so the next owner sends the rest at once
 * instead of waiting for the claim to go stale, and only if the claim is still its own: a run that
 * wakes after another node took the chunk over must not move that node's claim.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE broadcast_chunks ADD COLUMN claimed_by text`
})
