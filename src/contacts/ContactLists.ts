import { SqlClient } from "@effect/sql"
import { Chunk, Effect, Either, Stream } from "effect"
import { requireRole } from "../domain/access.ts"
import { Conflict, InvalidRequest, NotFound } from "../domain/errors.ts"
import { isUuid } from "../domain/ids.ts"
import { mediaTypeOf } from "../domain/mediaType.ts"
import type { Principal } from "../domain/signIn.ts"
import { isBigintKey, keyPage, readKeyCursor } from "../storage/keyCursor.ts"
import { pageOf, readCursor } from "../storage/pageCursor.ts"
import type { ParsedRow } from "./contactRow.ts"
import { type ContactRow, ContactListsRepo, type ListRow } from "./ContactListsRepo.ts"
import { ImportTooLarge, UnsupportedMediaType, UploadInterrupted, UploadStalled } from "./errors.ts"
import { BATCH_ROWS, IMPORT_SLICE_MS, IMPORTS_PER_NODE } from "./importLimits.ts"
import { type ImportPacer, makeImportPacer } from "./importPacer.ts"
import { columnsOf, ImportTally, type ValidContact } from "./importTally.ts"
import { type ImportFormat, readerFor } from "./readers.ts"

export const LIST_LIMIT_DEFAULT = 100
export const LIST_LIMIT_MAX = 1000


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
export const readRows = (format: ImportFormat, pacer: ImportPacer = makeImportPacer(1)) => <E, R>(text: Stream.Stream<string, E, R>): Stream.Stream<ParsedRow, E | InvalidRequest, R> =>
  Stream.suspend(() => {
    const reader = readerFor(format)
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

const presentList = (row: ListRow) => ({
  list_id: row.listId,
  name: row.name,
  contact_count: row.contactCount,
  created_at: new Date(row.createdAt).toISOString()
})

const presentContact = (row: ContactRow) => ({
  contact_id: row.contactId,
  phone: row.phone,
  name: row.name,
  params: row.params,
  created_at: new Date(row.createdAt).toISOString()
})

const notFound = (listId: string) => new NotFound({ message: `no contact list ${listId}` })

const busy = () =>
  new Conflict({ key: "list_id", message: "an import into this list (or its deletion) is running; try again when it has finished" })

interface PageQuery {
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/**
 * Contact lists (docs/contact-lists.md): account-wide lists of recipients for broadcasts. Every
 * role reads them, operators and owners write them; they hang off no bot, so a member scoped to
 * bots reads and writes them like any member of its role. Imports stream the request body
 * through a format reader into batched INSERTs inside one transaction: the report comes back
 * when the body is read, and a body that breaks or is cut short leaves nothing written.
 */
export class ContactLists extends Effect.Service<ContactLists>()("herald/contacts/ContactLists", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* ContactListsRepo
    // Each import holds a pooled connection for as long as its upload lasts: a few at a time.
    const importPermits = yield* Effect.makeSemaphore(IMPORTS_PER_NODE)
    const pacer = makeImportPacer()

    /** A live list of the caller's account: anything else, a malformed id included, is a 404. */
    const visible = (principal: Principal, listId: string) =>
      Effect.gen(function*() {
        if (!isUuid(listId)) return yield* notFound(listId)
        const row = yield* repo.find(principal.accountId, listId)
        if (row === undefined) return yield* notFound(listId)
        return row
      })

    const create = Effect.fn("ContactLists.create")(function*(principal: Principal, name: string) {
      yield* requireRole(principal, "operator", "create contact lists")
      const row = yield* repo.insert(principal.accountId, name)
      if (row === "NameTaken") return yield* new Conflict({ key: "name", message: `the account already has a contact list named ${name}` })
      return { success: true as const, list: presentList(row) }
    })

    /** Newest first, paged by an opaque cursor (DESIGN.md, Lists). */
    const list = Effect.fn("ContactLists.list")(function*(principal: Principal, query: PageQuery) {
      const after = yield* readCursor(query.cursor)
      const limit = Math.min(query.limit ?? LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX)
      const rows = yield* repo.page(principal.accountId, after, limit)
      const page = pageOf(rows, limit, (row) => ({ createdAt: row.position, id: row.listId }))
      return {
        success: true as const,
        lists: page.rows.map(presentList),
        count: page.rows.length,
        ...(page.nextCursor !== undefined ? { next_cursor: page.nextCursor } : {})
      }
    })

    const get = Effect.fn("ContactLists.get")(function*(principal: Principal, listId: string) {
      return { success: true as const, list: presentList(yield* visible(principal, listId)) }
    })

    /**
     * Soft delete: the list leaves every read and takes no more imports; its contacts stay for a
     * broadcast already expanding it. Refused (409) while an import into it runs.
     */
    const remove = Effect.fn("ContactLists.remove")(function*(principal: Principal, listId: string) {
      yield* requireRole(principal, "operator", "delete contact lists")
      yield* visible(principal, listId)
      const removed = yield* repo.remove(principal.accountId, listId)
      if (removed === "Busy") return yield* busy()
      if (!removed) return yield* notFound(listId)
      return { success: true as const }
    })

    /** The list's contacts, newest first, paged by an opaque cursor. Personal data: a signed-in member only. */
    const contacts = Effect.fn("ContactLists.contacts")(function*(principal: Principal, listId: string, query: PageQuery) {
      const before = yield* readKeyCursor(query.cursor, isBigintKey)
      const row = yield* visible(principal, listId)
      const limit = Math.min(query.limit ?? LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX)
      const page = keyPage(yield* repo.contactsPage(row.listId, before, limit), limit, (contact) => contact.contactId)
      return {
        success: true as const,
        contacts: page.rows.map(presentContact),
        count: page.rows.length,
        ...(page.nextCursor === undefined ? {} : { next_cursor: page.nextCursor })
      }
    })

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
     * The import itself, in one transaction holding the list. Rows are normalised piece by piece
     * as the body arrives, gathered into batches of BATCH_ROWS, and each batch is written while
     * the next is read (a buffer of one batch between the two, so Postgres works on one core while
     * libphonenumber works on the other). No more is read: the request's socket buffer fills and
     * TCP slows the client down, so memory holds about two batches whatever the body's size.
     */
    const runImport = (principal: Principal, listId: string, format: ImportFormat, body: Upload["body"]) =>
      Effect.gen(function*() {
        const lock = yield* repo.lockForImport(principal.accountId, listId)
        if (lock === "Busy") return yield* busy()
        if (lock === "Gone") return yield* notFound(listId)
        const tally = new ImportTally()
        yield* body.pipe(
          Stream.decodeText(),
          readRows(format, pacer),
          Stream.mapChunksEffect((rows) => normalise(tally, rows)),
          Stream.rechunk(BATCH_ROWS),
          Stream.mapChunks((contacts) => Chunk.of(columnsOf(contacts))),
          Stream.buffer({ capacity: 1 }),
          Stream.runForEach((batch) =>
            batch.phones.length === 0 ? Effect.void : Effect.map(repo.insertBatch(listId, batch), (inserted) => tally.written(batch.phones.length, inserted)))
        )
        return tally.report()
      }).pipe(sql.withTransaction)

    /**
     * POST …/{id}/contacts: checks that cost nothing first (role, format, the list), then waits
     * for an import permit and reads the body.
     */
    const importContacts = Effect.fn("ContactLists.importContacts")(function*(principal: Principal, listId: string, upload: Upload) {
      yield* requireRole(principal, "operator", "import contacts")
      const format = importFormatOf(upload.contentType)
      if (format === undefined) return yield* UnsupportedMediaType.of(upload.contentType)
      yield* visible(principal, listId)
      return yield* importPermits.withPermits(1)(runImport(principal, listId, format, upload.body))
    })

    return { create, list, get, remove, contacts, importContacts, chunk: repo.chunk } as const
  }),
  dependencies: [ContactListsRepo.Default]
}) {}
