import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Conflict } from "../domain/errors.ts"
import { isUuid } from "../domain/ids.ts"
import { type PagePosition, positionOf } from "../storage/pageCursor.ts"
import { isUniqueViolation } from "../storage/sqlState.ts"

/** A segment as stored: its filters and tags as its create or update gave them (checked first). */
export interface SegmentRow {
  readonly segmentId: string
  readonly name: string
  readonly filters: ReadonlyArray<unknown>
  readonly tags: ReadonlyArray<string>
  readonly createdAt: Date
  readonly updatedAt: Date
  readonly position: string
}

const COLUMNS = `segment_id::text, name, filters, tags, created_at, updated_at, ${positionOf("created_at")} AS position`

/** The account has a segment of that name already (segments' unique name per account). */
const nameTaken = (name: string | undefined) => new Conflict({ key: "name", message: `the account already has a segment named ${name}` })

/** `segments`: the account's saved customer searches, the table's one writer. */
export class SegmentsRepo extends Effect.Service<SegmentsRepo>()("herald/segments/SegmentsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(COLUMNS)

    const find = Effect.fn("SegmentsRepo.find")(function*(accountId: string, segmentId: string) {
      if (!isUuid(segmentId)) return undefined
      const [row] = yield* sql<SegmentRow>`SELECT ${columns} FROM segments WHERE account_id = ${accountId} AND segment_id = ${segmentId}`.pipe(Effect.orDie)
      return row
    })

    /** A new segment; 409 when the account has one of that name. */
    const insert = Effect.fn("SegmentsRepo.insert")(function*(
      accountId: string,
      input: { readonly name: string; readonly filters: unknown; readonly tags: ReadonlyArray<string> }
    ) {
      const [row] = yield* sql<SegmentRow>`
        INSERT INTO segments (account_id, name, filters, tags)
        VALUES (${accountId}, ${input.name}, ${JSON.stringify(input.filters)}::jsonb, ${input.tags}::text[])
        RETURNING ${columns}`.pipe(
        Effect.catchIf((error) => isUniqueViolation(error), () => Effect.fail(nameTaken(input.name))),
        Effect.catchTag("SqlError", Effect.die)
      )
      return row!
    })

    /** Sets what is given (undefined keeps it); undefined when there is no such segment, 409 when the name is taken. */
    const update = Effect.fn("SegmentsRepo.update")(function*(
      accountId: string,
      segmentId: string,
      input: { readonly name: string | undefined; readonly filters: unknown; readonly tags: ReadonlyArray<string> | undefined }
    ) {
      const [row] = yield* sql<SegmentRow>`
        UPDATE segments SET
          name = coalesce(${input.name ?? null}, name),
          filters = coalesce(${input.filters === undefined ? null : JSON.stringify(input.filters)}::jsonb, filters),
          tags = coalesce(${input.tags ?? null}::text[], tags),
          updated_at = now()
        WHERE account_id = ${accountId} AND segment_id = ${segmentId}
        RETURNING ${columns}`.pipe(
        Effect.catchIf((error) => isUniqueViolation(error), () => Effect.fail(nameTaken(input.name))),
        Effect.catchTag("SqlError", Effect.die)
      )
      return row
    })

    /** False when the account has no such segment. */
    const remove = Effect.fn("SegmentsRepo.remove")(function*(accountId: string, segmentId: string) {
      if (!isUuid(segmentId)) return false
      const deleted = yield* sql`DELETE FROM segments WHERE account_id = ${accountId} AND segment_id = ${segmentId} RETURNING 1`.pipe(Effect.orDie)
      return deleted.length > 0
    })

    /** One page of the account's segments, newest first, after `after` (one row more than `limit` when there are more). */
    const page = Effect.fn("SegmentsRepo.page")(function*(accountId: string, after: PagePosition | undefined, limit: number) {
      return yield* sql<SegmentRow>`
        SELECT ${columns} FROM segments WHERE account_id = ${accountId}
          ${after === undefined ? sql`` : sql`AND (created_at, segment_id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`}
        ORDER BY created_at DESC, segment_id DESC LIMIT ${limit + 1}`.pipe(Effect.orDie)
    })

    return { find, insert, update, remove, page } as const
  })
}) {}
