import { Context, type Effect } from "effect"

/** What this node owns right now: actor kind → partition numbers. Reported by /health/ready. */
export class OwnedPartitions extends Context.Tag("herald/actors/OwnedPartitions")<
  OwnedPartitions,
  { readonly snapshot: Effect.Effect<Record<string, ReadonlyArray<number>>> }
>() {}
