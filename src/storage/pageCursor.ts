import { isUuid } from "../domain/ids.ts"
import { isUtcMicros } from "../domain/timestamps.ts"

/**
 * The position a newest-first list's cursor carries (DESIGN.md, Lists): a page's last row in the
 * list's order (created_at, then the row's uuid, both descending). created_at travels as Postgres
 * printed it to the microsecond, so the next page starts exactly after that row and a cursor read
 * again gives the same rows. Cursors are signed (ListCursors.ts).
 */
export interface PagePosition {
  /** created_at as `YYYY-MM-DDTHH:MM:SS.ffffffZ` (UTC, microseconds). */
  readonly createdAt: string
  readonly id: string
}

/** SQL printing a timestamptz column the way a position carries it. */
export const positionOf = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

/** A position as a cursor carries it. */
export const positionValues = (position: PagePosition): ReadonlyArray<string> => [position.createdAt, position.id]

/** The position of a cursor's values, or undefined when they are not one (another kind of cursor). */
export const positionFrom = (values: ReadonlyArray<unknown>): PagePosition | undefined => {
  if (values.length !== 2) return undefined
  const [createdAt, id] = values
  return typeof createdAt === "string" && isUtcMicros(createdAt) && typeof id === "string" && isUuid(id) ? { createdAt, id } : undefined
}
