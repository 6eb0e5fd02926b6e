import { Context, type Effect } from "effect"
import type { LeaseGuard } from "../actors/runtime/leaseGuard.ts"
import type { ChunkOrder } from "./chunkProtocol.ts"

/**
 * What the sender actor needs of the node's broadcast chunk runs: a port declared here, beside the
 * sender, implemented by broadcasts/ChunkRunner.ts and provided by the node's wiring, so messaging
 * does not depend on broadcasts.
 */
export class ChunkRuns extends Context.Tag("herald/messaging/ChunkRuns")<ChunkRuns, {
  /**
   * Runs a chunk in the background (unless this node runs it already) under the sender
   * partition's lease; `finished` once every target of it has an outcome, `moved` when the
   * partition left this node before it was done.
   */
  readonly start: (order: ChunkOrder, botId: string, lease: LeaseGuard, finished: Effect.Effect<void>, moved: Effect.Effect<void>) => Effect.Effect<void>
  readonly isRunning: (order: { readonly broadcastId: string; readonly chunkNo: number }) => boolean
}>() {}
