import { Context, type Effect } from "effect"

/** What this node owns right now: actor kind → partition numbers. Reported by /health/ready. */
export class OwnedPartitions extends Context.Tag("herald/actors/OwnedPartitions")<
  OwnedPartitions,
  {
    readonly snapshot: Effect.Effect<Record<string, ReadonlyArray<number>>>
    /** Every stream and KV bucket the node uses exists with HERALD_NATS_REPLICAS replicas (checked once at start). */
    readonly busPrepared: Effect.Effect<boolean>
  }
>() {}
