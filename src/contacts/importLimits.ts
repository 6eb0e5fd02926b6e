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

/** Rows normalised between two yields of the fiber: about 20 ms of libphonenumber work. */
export const NORMALISE_SLICE = 500

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
