import { SqlClient } from "@effect/sql"
import { Effect, Stream } from "effect"
import { mayWrite, requireRole } from "../domain/access.ts"
import { Conflict, NotFound } from "../domain/errors.ts"
import { isUuid } from "../domain/ids.ts"
import type { Principal } from "../domain/signIn.ts"
import { isBigintKey } from "../storage/keyCursor.ts"
import { ContactListsRepo } from "./ContactListsRepo.ts"
import { UnsupportedMediaType } from "./errors.ts"
import { importFormatOf, Imports, type Upload } from "./Imports.ts"
import { columnsOf, ImportTally } from "./importTally.ts"
import { type ImportFormat, LIST_ROWS } from "./readers.ts"
import { ListCursors } from "../storage/ListCursors.ts"

export const LIST_LIMIT_DEFAULT = 100
export const LIST_LIMIT_MAX = 1000

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
 * when the body is read, and a body that breaks or is cut short leaves nothing written. Reads and
 * writes answer domain values (lists, contacts, pages of them): http/rcs/presentContactLists.ts
 * presents them.
 */
export class ContactLists extends Effect.Service<ContactLists>()("herald/contacts/ContactLists", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* ContactListsRepo
    const cursors = yield* ListCursors
    const imports = yield* Imports

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
      return row
    })

    /** Newest first, paged by an opaque cursor (DESIGN.md, Lists). */
    const list = Effect.fn("ContactLists.list")(function*(principal: Principal, query: PageQuery) {
      const scope = { list: "contact-lists", accountId: principal.accountId }
      const after = yield* cursors.readPosition(scope, query.cursor)
      const limit = Math.min(query.limit ?? LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX)
      const rows = yield* repo.page(principal.accountId, after, limit)
      return cursors.positionPage(scope, rows, limit, (row) => ({ createdAt: row.position, id: row.listId }))
    })

    const get = Effect.fn("ContactLists.get")(function*(principal: Principal, listId: string) {
      return yield* visible(principal, listId)
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
    })

    /** The list's contacts, newest first, paged by an opaque cursor. Personal data: a signed-in member only. */
    const contacts = Effect.fn("ContactLists.contacts")(function*(principal: Principal, listId: string, query: PageQuery) {
      const row = yield* visible(principal, listId)
      const scope = { list: `contact-list:${row.listId}`, accountId: principal.accountId }
      const before = yield* cursors.readKey(scope, query.cursor, isBigintKey)
      const limit = Math.min(query.limit ?? LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX)
      return cursors.keyPage(scope, yield* repo.contactsPage(row.listId, before, limit), limit, (contact) => contact.contactId)
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
        yield* imports.validBatches(body, format, LIST_ROWS, tally).pipe(
          Stream.runForEach((contacts) => {
            const batch = columnsOf(contacts)
            return Effect.map(repo.insertBatch(listId, batch), (inserted) => tally.written(batch.phones.length, inserted))
          })
        )
        return tally.report()
      }).pipe(sql.withTransaction)

    /**
     * POST …/{id}/contacts: checks that cost nothing first (role, format, the list), then waits
     * for an import permit and reads the body.
     */
    const importContacts = Effect.fn("ContactLists.importContacts")(function*(principal: Principal, listId: string, upload: Upload) {
      yield* mayWrite.importContacts(principal)
      const format = importFormatOf(upload.contentType)
      if (format === undefined) return yield* UnsupportedMediaType.of(upload.contentType)
      yield* visible(principal, listId)
      return yield* imports.withPermit(runImport(principal, listId, format, upload.body))
    })

    return { create, list, get, remove, contacts, importContacts, chunk: repo.chunk } as const
  }),
  dependencies: [ContactListsRepo.Default, Imports.Default, ListCursors.Default]
}) {}
