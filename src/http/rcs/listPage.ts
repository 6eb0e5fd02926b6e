import type { CursorPage } from "../../storage/ListCursors.ts"

/**
 * A page of an /api/v1/rcs list as every one answers it: `{success: true, <name>: [Item…], count,
 * next_cursor}`, with no next_cursor on the last page.
 */
export const presentListPage = <A, B, const Name extends string>(name: Name, page: CursorPage<A>, present: (item: A) => B) =>
  ({
    success: true as const,
    [name]: page.rows.map(present),
    count: page.rows.length,
    ...(page.nextCursor === undefined ? {} : { next_cursor: page.nextCursor })
  }) as { readonly success: true; readonly count: number; readonly next_cursor?: string } & { readonly [K in Name]: ReadonlyArray<B> }

/** An RCS write that answers nothing but its success (a delete). */
export const presentDone = () => ({ success: true as const })
