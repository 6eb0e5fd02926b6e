import { Layer } from "effect"
import { ActorClient } from "./ActorClient.ts"
import { ActorRuntime, OwnedPartitionsLive } from "./ActorRuntime.ts"
import { Outbox } from "./outbox.ts"
import { PoisonQueue } from "./poison.ts"

export * as ActorKind from "./ActorKind.ts"
export { ActorClient, AskTimeout, CommandParked, EphemeralUnavailable } from "./ActorClient.ts"
export { ActorRuntime, registerKind } from "./ActorRuntime.ts"
export { Outbox } from "./outbox.ts"
export { PoisonQueue } from "./poison.ts"

/**
 * The runtime of a node: client (send/ask), outbox relay, ownership of partitions on workers,
 * and what /health/ready reports. Needs AppConfig, SqlClient, Nats and Storage.
 */
export const ActorRuntimeLive = Layer.mergeAll(OwnedPartitionsLive, PoisonQueue.Default).pipe(
  Layer.provideMerge(ActorRuntime.Default),
  Layer.provideMerge(Outbox.Default),
  Layer.provideMerge(ActorClient.Default)
)
