import { Schema } from "effect"
import { ActorKind } from "../actors/runtime/index.ts"
import { ChunkOrder } from "./chunking.ts"

// What a broadcast actor and its bot's sender actor tell each other about chunks. Each names the
// other by address: the broadcast kind imports the sender's commands, the sender kind the
// broadcast's, and neither kind imports the other.

/** A chunk of a broadcast to send (from its broadcast actor). */
export class SendChunk extends Schema.TaggedClass<SendChunk>()("SendChunk", { order: ChunkOrder }) {}

/** Every target of a chunk has its send outcome (from the node that sent it). */
export class ChunkDone extends Schema.TaggedClass<ChunkDone>()("ChunkDone", { chunkNo: Schema.Int }) {}

/** The `sender` kind (one actor per bot), as a broadcast hands it chunks. */
export const SenderAddress = ActorKind.address("sender", SendChunk)

/** The `broadcast` kind (one actor per broadcast), as a sender reports a chunk done. */
export const BroadcastAddress = ActorKind.address("broadcast", ChunkDone)
