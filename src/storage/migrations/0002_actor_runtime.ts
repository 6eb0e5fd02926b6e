import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** Tables of the actor runtime (ACTORS.md): fencing epochs, timers, the outbox, parked commands. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // The fence: every transaction writing actor state checks that its owner's epoch is current.
  yield* sql`
    CREATE TABLE partition_epochs (
      kind text NOT NULL,
      partition integer NOT NULL,
      epoch bigint NOT NULL,
      owner text NOT NULL,
      acquired_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (kind, partition)
    )`
  yield* sql`
    CREATE TABLE actor_timers (
      timer_id text PRIMARY KEY,
      kind text NOT NULL,
      partition integer NOT NULL,
      actor_key text NOT NULL,
      fire_at timestamptz NOT NULL,
      command jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX actor_timers_due_idx ON actor_timers (kind, partition, fire_at)`
  yield* sql`
    CREATE TABLE actor_outbox (
      outbox_id bigserial PRIMARY KEY,
      subject text NOT NULL,
      msg_id text NOT NULL,
      payload jsonb NOT NULL,
      headers jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      published_at timestamptz
    )`
  yield* sql`CREATE INDEX actor_outbox_pending_idx ON actor_outbox (outbox_id) WHERE published_at IS NULL`
  yield* sql`CREATE INDEX actor_outbox_published_idx ON actor_outbox (published_at) WHERE published_at IS NOT NULL`
  yield* sql`
    CREATE TABLE actor_poison (
      poison_id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      kind text NOT NULL,
      partition integer NOT NULL,
      actor_key text NOT NULL,
      seq bigint NOT NULL,
      command jsonb NOT NULL,
      error text NOT NULL,
      attempts integer NOT NULL,
      parked_at timestamptz NOT NULL DEFAULT now(),
      redriven_at timestamptz,
      UNIQUE (kind, seq)
    )`
  yield* sql`CREATE INDEX actor_poison_parked_idx ON actor_poison (parked_at DESC) WHERE redriven_at IS NULL`
})
