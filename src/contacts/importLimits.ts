/**
 * Limits of a contact import (docs/contact-lists.md). They bound what one import can cost the API
 * node: memory per row, rows per statement, imports at once; none bounds how many rows one
 * import may carry.
 */

/** Largest import body: 512 MiB, about ten million CSV rows. Every other route stays at 10 MB. */
export const IMPORT_MAX_BYTES = 512 * 1024 * 1024

/**
 * Largest single record: a JSON element, an NDJSON line or a CSV record (64 KiB). The parsers
 * buffer one record at a time, so this is what a hostile body can make them hold.
 */
export const RECORD_MAX_CHARS = 64 * 1024

/** Rows per INSERT: a few thousand keeps a statement well under a second and its arrays small. */
export const BATCH_ROWS = 5_000

/** Longest stretch of import work between two turns of the event loop. */
export const IMPORT_SLICE_MS = 10

/**
 * Share of an API node's event loop that imports may take together (importPacer.ts): the rest is
 * kept for other requests whatever the imports carry. Normalising is most of an import's cost,
 * and Postgres writes on the other core meanwhile, so a busy import slows by less than the share.
 */
export const IMPORT_CPU_SHARE = 0.75

/**
 * An import stops, writing nothing, once more than this many of its rows are invalid and they
 * are most of the rows read so far: that is the wrong file, not a list with some bad numbers,
 * and reading the rest of it is work for nothing.
 */
export const INVALID_ROWS_MAX = 10_000

/** Invalid rows listed in the report; invalid_count counts them all. */
export const INVALID_REPORTED_MAX = 100

/** A contact's name, in characters. */
export const NAME_MAX = 200

/** A contact's params as JSON, in bytes. */
export const PARAMS_MAX_BYTES = 8 * 1024

/**
 * Imports running at once on one API node. Each holds a pooled connection (16 per node) and an
 * open transaction for as long as its upload lasts; others wait for a permit, their bodies unread.
 */
export const IMPORTS_PER_NODE = 4
