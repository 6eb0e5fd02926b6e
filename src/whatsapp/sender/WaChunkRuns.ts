import { Context, type Effect } from "effect"
import type { LeaseGuard } from "../../actors/runtime/leaseGuard.ts"
import type { ChunkOrder } from "../../messaging/chunkProtocol.ts"

/**
 * What a number's `wa_sender` actor needs of the node's campaign chunk runs: a port declared
 * beside the sender, implemented by broadcasts/WaChunkRunner.ts and provided by the node's wiring,
 * so whatsapp does not depend on broadcasts.
 */
export class WaChunkRuns extends Context.Tag("herald/whatsapp/WaChunkRuns")<WaChunkRuns, {
  /**
   * Runs a campaign chunk in the background (unless this node runs it already) under the number
   * partition's lease; `finished` once every target of it has an outcome, `moved` when the
   * partition left this node before it was done.
   */
  readonly start: (order: ChunkOrder, phoneNumberId: string, lease: LeaseGuard, finished: Effect.Effect<void>, moved: Effect.Effect<void>) => Effect.Effect<void>
  readonly isRunning: (order: { readonly broadcastId: string; readonly chunkNo: number }) => boolean
}>() {}
