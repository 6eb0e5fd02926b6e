import { Chunk, Effect, Either, Stream } from "effect"
import type { InvalidRequest } from "../domain/errors.ts"
import { mediaTypeOf } from "../domain/mediaType.ts"
import type { ParsedRow } from "./contactRow.ts"
import type { ImportTooLarge, UploadInterrupted, UploadStalled } from "./errors.ts"
import { BATCH_ROWS, IMPORT_SLICE_MS, IMPORTS_PER_NODE } from "./importLimits.ts"
import { type ImportPacer, makeImportPacer } from "./importPacer.ts"
import type { ImportTally, ValidContact } from "./importTally.ts"
import { type ImportFormat, LIST_ROWS, readerFor, type RowDecoder } from "./readers.ts"

/**
 * The import format a Content-Type names: application/json, application/x-ndjson (or
 * application/ndjson) and text/csv, in UTF-8 (a charset parameter naming anything else is
 * refused); undefined for any other.
 */
export const importFormatOf = (contentType: string | undefined): ImportFormat | undefined => {
  if (contentType === undefined) return undefined
  const { type, utf8 } = mediaTypeOf(contentType)
  if (!utf8) return undefined
  switch (type) {
    case "application/json":
      return "json"
    case "application/x-ndjson":
    case "application/ndjson":
      return "ndjson"
    case "text/csv":
      return "csv"
    default:
      return undefined
  }
}

/** Text handed to a reader at once: about a millisecond of parsing. */
const PIECE_CHARS = 16 * 1024

/**
 * The rows of a body in `format`, read piece by piece as its text arrives (see readers.ts), paced
 * with the node's other import work; a body that cannot be read fails the stream with the 400
 * naming where.
 */
export const readRows = (format: ImportFormat, pacer: ImportPacer = makeImportPacer(1), decoder: RowDecoder = LIST_ROWS) => <E, R>(text: Stream.Stream<string, E, R>): Stream.Stream<ParsedRow, E | InvalidRequest, R> =>
  Stream.suspend(() => {
    const reader = readerFor(format, decoder)
    const rowsOf = (pieces: Chunk.Chunk<string>) =>
      Effect.gen(function*() {
        const rows: Array<ParsedRow> = []
        for (const piece of pieces) {
          for (let at = 0; at < piece.length; at += PIECE_CHARS) {
            const read = yield* pacer.slice(() => reader.push(at === 0 && piece.length <= PIECE_CHARS ? piece : piece.slice(at, at + PIECE_CHARS)))
            if (Either.isLeft(read)) return yield* Effect.fail(read.left)
            for (const row of read.right) rows.push(row)
          }
        }
        return Chunk.unsafeFromArray(rows)
      })
    const last = Stream.suspend(() => Either.match(reader.end(), { onLeft: Stream.fail, onRight: Stream.fromIterable }))
    return Stream.concat(Stream.mapChunksEffect(text, rowsOf), last)
  })

/** An import body as the HTTP edge hands it over: its declared type, and its bytes within the size limit. */
export interface Upload {
  readonly contentType: string | undefined
  readonly body: Stream.Stream<Uint8Array, ImportTooLarge | UploadInterrupted | UploadStalled>
}

/**
 * What every streamed import of a node shares, whatever it fills (contact lists, customers): the
 * permits that bound imports at once (each holds a pooled connection and a transaction for its
 * whole upload), the pacer that keeps their parsing to IMPORT_CPU_SHARE of the event loop, and
 * the pipeline from a body's bytes to batches of valid rows.
 */
export class Imports extends Effect.Service<Imports>()("herald/contacts/Imports", {
  effect: Effect.gen(function*() {
    const permits = yield* Effect.makeSemaphore(IMPORTS_PER_NODE)
    const pacer = makeImportPacer()

    /**
     * Normalises rows as they are read, in slices paced with the node's other import work:
     * libphonenumber costs about ten microseconds a number, and other requests share this thread.
     * An import that turns out to be mostly invalid rows stops (see INVALID_ROWS_MAX).
     */
    const normalise = (tally: ImportTally, rows: Chunk.Chunk<ParsedRow>) =>
      Effect.gen(function*() {
        const all = Chunk.toReadonlyArray(rows)
        const valid: Array<ValidContact> = []
        let start = 0
        while (start < all.length) {
          yield* pacer.slice(() => {
            const began = performance.now()
            do {
              tally.sort(all.slice(start, start + 64), valid)
              start += 64
            } while (start < all.length && performance.now() - began < IMPORT_SLICE_MS)
          })
          if (tally.overwhelmed()) return yield* Effect.fail(tally.refusal())
        }
        return Chunk.unsafeFromArray(valid)
      })

    /**
     * The valid rows of a body, normalised piece by piece as it arrives, in batches of BATCH_ROWS
     * with one batch buffered: the caller writes a batch while the next is read (Postgres works on
     * one core while libphonenumber works on the other). No more is read: the request's socket
     * buffer fills and TCP slows the client down, so memory holds about two batches whatever the
     * body's size.
     */
    const validBatches = <E>(body: Stream.Stream<Uint8Array, E>, format: ImportFormat, decoder: RowDecoder, tally: ImportTally) =>
      body.pipe(
        Stream.decodeText(),
        readRows(format, pacer, decoder),
        Stream.mapChunksEffect((rows) => normalise(tally, rows)),
        Stream.rechunk(BATCH_ROWS),
        Stream.chunks,
        Stream.filter((batch) => Chunk.isNonEmpty(batch)),
        Stream.map(Chunk.toReadonlyArray),
        Stream.buffer({ capacity: 1 })
      )

    return { withPermit: permits.withPermits(1), validBatches } as const
  })
}) {}
