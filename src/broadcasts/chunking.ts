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

/** The targets of chunk `chunkNo` when `written` targets exist. */
export const chunkRange = (chunkNo: number, written: number) => ({
  first: chunkNo * CHUNK_TARGETS,
  last: Math.min((chunkNo + 1) * CHUNK_TARGETS, written) - 1
})
