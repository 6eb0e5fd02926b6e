import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { type PagePosition, positionOf } from "../storage/pageCursor.ts"
import { LOCK_NOT_AVAILABLE, sqlState } from "../storage/sqlState.ts"
import type { Batch } from "./importTally.ts"

export interface ListRow {
  readonly listId: string
  readonly accountId: string
  readonly name: string
  readonly contactCount: number
  readonly createdAt: Date
  /** created_at to the microsecond, as a list cursor carries it. */
  readonly position: string
}

export interface ContactRow {
  /** bigint, as text. */
  readonly contactId: string
  readonly phone: string
  readonly name: string | null
  readonly params: Record<string, unknown>
  readonly createdAt: Date
}

const LIST_COLUMNS = `list_id, account_id, name, contact_count, created_at, ${positionOf("created_at")} AS position`
// contact_id is a bigint read as text under its own name: an ORDER BY or comparison must name
// the table's column (`contacts.contact_id`), or Postgres sorts by the text output column
// ('999' after '1000') while cursors compare numbers.
const CONTACT_COLUMNS = `contact_id::text AS contact_id, phone, name, params, created_at`

/** 23505 unique_violation. */
const UNIQUE_VIOLATION = "23505"

export class ContactListsRepo extends Effect.Service<ContactListsRepo>()("herald/contacts/ContactListsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** A new empty list; "NameTaken" when the account has a live list of that name (nothing written). */
    const insert = (accountId: string, name: string) =>
      sql<ListRow>`
        INSERT INTO contact_lists (account_id, name) VALUES (${accountId}::uuid, ${name})
        RETURNING ${sql.literal(LIST_COLUMNS)}`.pipe(
        Effect.map((rows) => rows[0]!),
        Effect.catchTag("SqlError", (error) => sqlState(error) === UNIQUE_VIOLATION ? Effect.succeed("NameTaken" as const) : Effect.die(error))
      )

    /** One page of the account's live lists, newest first; `limit + 1` rows tell whether another follows. */
    const page = (accountId: string, after: PagePosition | undefined, limit: number) =>
      sql<ListRow>`
        SELECT ${sql.literal(LIST_COLUMNS)} FROM contact_lists
        WHERE ${
        sql.and([
          sql`account_id = ${accountId}::uuid`,
          sql`deleted_at IS NULL`,
          ...(after === undefined ? [] : [sql`(created_at, list_id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`])
        ])
      }
        ORDER BY created_at DESC, list_id DESC
        LIMIT ${limit + 1}`.pipe(Effect.orDie)

    /** A live list of the account; another account's or a deleted one is as good as unknown (ids are
     * checked to be uuids before they reach the repository). */
    const find = (accountId: string, listId: string) =>
      sql<ListRow>`
        SELECT ${sql.literal(LIST_COLUMNS)} FROM contact_lists
        WHERE account_id = ${accountId}::uuid AND list_id = ${listId}::uuid AND deleted_at IS NULL`.pipe(
        Effect.map((rows) => rows[0]),
        Effect.orDie
      )

    /**
     * Soft delete: "Busy" when an import holds the list (it would otherwise wait for the whole
     * upload), false when there was no live list.
     */
    const remove = (accountId: string, listId: string) =>
      sql`
        UPDATE contact_lists SET deleted_at = now()
        WHERE list_id = (
          SELECT list_id FROM contact_lists
          WHERE account_id = ${accountId}::uuid AND list_id = ${listId}::uuid AND deleted_at IS NULL
          FOR UPDATE NOWAIT)
        RETURNING list_id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.catchTag("SqlError", (error) => sqlState(error) === LOCK_NOT_AVAILABLE ? Effect.succeed("Busy" as const) : Effect.die(error))
      )

    /**
     * Takes the list for an import, inside the import's transaction, until it commits: "Busy" when
     * another import or a deletion holds it, "Gone" when it is no longer a live list. Imports into
     * one list are serialised this way; concurrent ones would otherwise block each other on the
     * unique index, and could deadlock.
     */
    const lockForImport = (accountId: string, listId: string) =>
      sql`
        SELECT list_id FROM contact_lists
        WHERE account_id = ${accountId}::uuid AND list_id = ${listId}::uuid AND deleted_at IS NULL
        FOR UPDATE NOWAIT`.pipe(
        Effect.map((rows) => (rows.length > 0 ? ("Locked" as const) : ("Gone" as const))),
        Effect.catchTag("SqlError", (error) => sqlState(error) === LOCK_NOT_AVAILABLE ? Effect.succeed("Busy" as const) : Effect.die(error))
      )

    /**
     * Writes a batch of normalised contacts in one statement and raises the list's count by the
     * rows that were new; a phone already in the list (from this batch or before) is skipped, the
     * first occurrence kept. Answers how many were new.
     */
    const insertBatch = (listId: string, batch: Batch) =>
      sql<{ added: number }>`
        WITH added AS (
          INSERT INTO contacts (list_id, phone, name, params)
          SELECT ${listId}::uuid, t.phone, t.name, coalesce(t.params, '{}'::jsonb)
          FROM unnest(${batch.phones}::text[], ${batch.names}::text[], ${batch.params}::jsonb[]) WITH ORDINALITY AS t(phone, name, params, ord)
          ORDER BY t.ord
          ON CONFLICT (list_id, phone) DO NOTHING
          RETURNING 1
        ), counted AS (SELECT count(*)::int AS n FROM added)
        UPDATE contact_lists SET contact_count = contact_count + counted.n
        FROM counted WHERE list_id = ${listId}::uuid
        RETURNING counted.n AS added`.pipe(
        Effect.map((rows) => rows[0]?.added ?? 0),
        Effect.orDie
      )

    /** A page of a list's contacts, newest first, below `before` (a contact_id) when given. */
    const contactsPage = (listId: string, before: string | undefined, limit: number) =>
      sql<ContactRow>`
        SELECT ${sql.literal(CONTACT_COLUMNS)} FROM contacts
        WHERE list_id = ${listId}::uuid ${before === undefined ? sql`` : sql`AND contacts.contact_id < ${before}::bigint`}
        ORDER BY contacts.contact_id DESC
        LIMIT ${limit + 1}`.pipe(Effect.orDie)

    /**
     * For a broadcast expanding a list: the next `limit` contacts after `after` (a contact_id; "0"
     * to start), oldest first, along the primary key. Reads soft-deleted lists too.
     */
    const chunk = (listId: string, after: string, limit: number) =>
      sql<ContactRow>`
        SELECT ${sql.literal(CONTACT_COLUMNS)} FROM contacts
        WHERE list_id = ${listId}::uuid AND contacts.contact_id > ${after}::bigint
        ORDER BY contacts.contact_id
        LIMIT ${limit}`.pipe(Effect.orDie)

    return { insert, page, find, remove, lockForImport, insertBatch, contactsPage, chunk } as const
  })
}) {}
