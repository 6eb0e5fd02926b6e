import { Effect } from "effect"
import { InvalidRequest } from "../domain/errors.ts"
import { isUuid } from "../domain/ids.ts"
import { isUtcMicros } from "../domain/timestamps.ts"

/**
 * The opaque `cursor` of a newest-first list (DESIGN.md, Lists): the position of a page's last
 * row in the list's order (created_at, then the row's uuid, both descending). created_at travels
 * as Postgres printed it to the microsecond, so the next page starts exactly after that row and a
 * cursor read again gives the same rows. base64url keeps clients from relying on its form.
 */
export interface PagePosition {
  /** created_at as `YYYY-MM-DDTHH:MM:SS.ffffffZ` (UTC, microseconds). */
  readonly createdAt: string
  readonly id: string
}

/** SQL printing a timestamptz column the way a position carries it. */
export const positionOf = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

export const encodePageCursor = (position: PagePosition): string => Buffer.from(JSON.stringify([position.createdAt, position.id])).toString("base64url")

/** The position a cursor names, or undefined when it is not one a list gave out. */
export const decodePageCursor = (cursor: string): PagePosition | undefined => {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    if (!Array.isArray(parsed) || parsed.length !== 2) return undefined
    const [createdAt, id] = parsed as [unknown, unknown]
    if (typeof createdAt !== "string" || !isUtcMicros(createdAt)) return undefined
    if (typeof id !== "string" || !isUuid(id)) return undefined
    return { createdAt, id }
  } catch {
    return undefined
  }
}

/** The position a request's `cursor` names: none (absent or empty) for the first page. */
export const readCursor = (cursor: string | undefined): Effect.Effect<PagePosition | undefined, InvalidRequest> => {
  if (cursor === undefined || cursor === "") return Effect.succeed(undefined)
  const position = decodePageCursor(cursor)
  return position === undefined ? Effect.fail(InvalidRequest.single("cursor", "is not a cursor this list gave out")) : Effect.succeed(position)
}

/**
 * A page out of the `limit + 1` rows a repository read: the first `limit`, and the cursor of the
 * next page when the extra row shows there is one.
 */
export const pageOf = <R>(rows: ReadonlyArray<R>, limit: number, position: (row: R) => PagePosition) => {
  const page = rows.slice(0, limit)
  const last = page[page.length - 1]
  return { rows: page, nextCursor: rows.length > limit && last !== undefined ? encodePageCursor(position(last)) : undefined }
}
