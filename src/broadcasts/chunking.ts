import { Schema } from "effect"

/**
 * How a broadcast's work is cut (docs/broadcasts.md). A chunk is the unit every hop carries: one
 * actor command, one claim, one outcome statement per slice; never one JetStream message per target.
 */

/** Targets per chunk: chunk n is targets [n·CHUNK_TARGETS, (n+1)·CHUNK_TARGETS). */
export const CHUNK_TARGETS = 1_000

/** Chunks of one broadcast handed to the sender and not finished yet. */
export const CHUNK_WINDOW = 32

/** Contacts written as targets per step of the expansion (one statement). */
export const EXPAND_BATCH = 50_000

/** Progress is published at most this often per broadcast. */
export const PROGRESS_EVERY_MS = 250

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

/** The targets of chunk `chunkNo` when `written` targets exist. */
export const chunkRange = (chunkNo: number, written: number) => ({
  first: chunkNo * CHUNK_TARGETS,
  last: Math.min((chunkNo + 1) * CHUNK_TARGETS, written) - 1
})
