import type { SqlClient } from "@effect/sql"
import type { Context, Duration, Effect } from "effect"
import type { BusNamesShape } from "../../bus/BusNames.ts"
import type { Connected, Nats } from "../../bus/Nats.ts"
import type { ActorKind } from "./ActorKind.ts"
import type { KindCommitter } from "./committer.ts"
import type { FairPermits } from "./fairPermits.ts"

/** A registered kind: the declaration plus the services its behaviour runs with. */
export interface RegisteredKind {
  readonly kind: ActorKind.Any
  readonly services: Context.Context<any>
  readonly maxAttempts: number
  readonly passivateAfter: Duration.Duration
}

/** What every owned partition of a node shares. */
export interface PartitionEnv {
  readonly sql: SqlClient.SqlClient
  readonly bus: Connected
  /** Publishes to a stream, retried with its message id through a leader election (Nats.publish). */
  readonly publish: Nats["publish"]
  readonly names: BusNamesShape
  readonly partitions: number
  /** Between reloads of a partition's timers (and checks for a fired timer whose command was lost). */
  readonly timerRecheck: Duration.Duration
  /** Bounds how many partitions of this node apply a batch at once. */
  readonly permits: FairPermits
  /** Wakes the outbox relay after a commit wrote outbox rows. */
  readonly nudgeRelay: Effect.Effect<void>
  /** Makes sure a kind's stream exists before the outbox relay publishes to it. */
  readonly ensureKind: (kind: ActorKind.AnyAddress) => Effect.Effect<void, unknown>
  readonly maxAckPending: number
  /** The node's group committer for a kind, shared by its owned partitions. */
  readonly committerOf: (kind: ActorKind.Any) => Effect.Effect<KindCommitter>
}
