import { encodePageCursor, type PagePosition } from "../storage/pageCursor.ts"

/** GraphQL's `page: {limit, cursor}` after the cost check (which refuses a limit outside 1..100). */
export interface PageArgs {
  readonly limit?: number | null
  readonly cursor?: string | null
}

export const PAGE_DEFAULT = 20

export const limitOf = (page: PageArgs | null | undefined) => page?.limit ?? PAGE_DEFAULT

/**
 * A connection out of the `limit + 1` rows a read returned, newest first: every edge carries its
 * own cursor (the position after it), so a client may resume from any edge.
 */
export const connectionOf = <R, N>(rows: ReadonlyArray<R>, limit: number, cursorOf: (row: R) => string, node: (row: R) => N) => {
  const page = rows.slice(0, limit)
  const edges = page.map((row) => ({ cursor: cursorOf(row), node: node(row) }))
  return { edges, pageInfo: { hasNextPage: rows.length > limit, endCursor: edges.at(-1)?.cursor ?? null } }
}

/** The cursor of a row of a (created_at, uuid) list. */
export const positionCursor = (position: PagePosition) => encodePageCursor(position)
