import { Schema } from "effect"
import { ActorKind } from "../actors/runtime/index.ts"

// What a broadcast actor and its bot's sender actor tell each other about chunks, declared by the
// sender's side (broadcasts depend on messaging, never the reverse). Each names the other by
// address: the broadcast kind imports the sender's commands, the sender kind the broadcast's, and
// neither kind imports the other.

/** A chunk the broadcast actor hands to the bot's sender actor. */
export const ChunkOrder = Schema.Struct({
  broadcastId: Schema.String,
  accountId: Schema.String,
  chunkNo: Schema.Int,
  /** First and last target_no of the chunk (inclusive). */
  first: Schema.Int,
  last: Schema.Int
})
export type ChunkOrder = typeof ChunkOrder.Type

export const chunkKey = (order: { readonly broadcastId: string; readonly chunkNo: number }) => `${order.broadcastId}:${order.chunkNo}`

/** A chunk of a broadcast to send (from its broadcast actor). */
export class SendChunk extends Schema.TaggedClass<SendChunk>()("SendChunk", { order: ChunkOrder }) {}

/** Every target of a chunk has its send outcome (from the node that sent it). */
export class ChunkDone extends Schema.TaggedClass<ChunkDone>()("ChunkDone", { chunkNo: Schema.Int }) {}

/** The `sender` kind (one actor per bot), as a broadcast hands it chunks. */
export const SenderAddress = ActorKind.address("sender", SendChunk)

/** The `wa_sender` kind (one actor per WhatsApp number), as a campaign hands it chunks. */
export const WaSenderChunkAddress = ActorKind.address("wa_sender", SendChunk)

/** The `broadcast` kind (one actor per broadcast), as a sender reports a chunk done. */
export const BroadcastAddress = ActorKind.address("broadcast", ChunkDone)
