import type { CursorScope } from "../storage/ListCursors.ts"
import type { GraphqlContext } from "./context.ts"

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

/**
 * One list's cursors in a resolver, signed for the list and the account (ListCursors): `read` gives
 * what the page's cursor carries (an edited one, or another list's, is VALIDATION_ERROR naming
 * `page.cursor`), `connection` signs each edge's.
 */
export const listCursors = (context: GraphqlContext, scope: CursorScope) => ({
  read: <A>(page: PageArgs | null | undefined, values: (values: ReadonlyArray<unknown>) => A | undefined) =>
    context.run(context.services.cursors.open(scope, page?.cursor, values, "page.cursor")),
  connection: <R, N>(rows: ReadonlyArray<R>, limit: number, valuesOf: (row: R) => ReadonlyArray<unknown>, node: (row: R) => N) =>
    connectionOf(rows, limit, (row) => context.services.cursors.sign(scope, valuesOf(row)), node)
})
