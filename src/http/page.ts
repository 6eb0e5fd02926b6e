import { Schema } from "effect"

/**
 * The answer every cursor-paged list gives: `{success: true, <name>: [Item…], next_cursor}`, with
 * an empty next_cursor on the last page (as /api/v1/app and /api/v1/public word it). `pageOrEnd`
 * is the /api/v1/rcs wording: no next_cursor on the last page.
 */
export const page = <const Name extends string, Item extends Schema.Schema.Any>(name: Name, item: Item) =>
  Schema.Struct({
    success: Schema.Literal(true),
    ...({ [name]: Schema.Array(item) } as { readonly [K in Name]: Schema.Array$<Item> }),
    next_cursor: NextCursor
  })

export const pageOrEnd = <const Name extends string, Item extends Schema.Schema.Any>(name: Name, item: Item) =>
  Schema.Struct({
    success: Schema.Literal(true),
    ...({ [name]: Schema.Array(item) } as { readonly [K in Name]: Schema.Array$<Item> }),
    next_cursor: Schema.optional(NextCursorOrAbsent)
  })

const NextCursor = Schema.String.annotations({ description: "Pass it as cursor to read the next page; empty (\"\") on the last page." })
const NextCursorOrAbsent = Schema.String.annotations({ description: "Pass it as cursor to read the next page; absent on the last page." })

/** What a service hands a surface for one page of a list: the items and where the next page starts. */
export interface Page<A> {
  readonly items: ReadonlyArray<A>
  /** Undefined on the last page. */
  readonly nextCursor: string | undefined
}

/** A page as `page(name, …)` answers it (last page: empty next_cursor), items presented by `present`. */
export const presentPage = <A, B, const Name extends string>(name: Name, value: Page<A>, present: (item: A) => B) =>
  ({ success: true, [name]: value.items.map(present), next_cursor: value.nextCursor ?? "" }) as
    & { readonly success: true; readonly next_cursor: string }
    & { readonly [K in Name]: ReadonlyArray<B> }

/** A page as `pageOrEnd(name, …)` answers it (last page: no next_cursor). */
export const presentPageOrEnd = <A, B, const Name extends string>(name: Name, value: Page<A>, present: (item: A) => B) =>
  ({ success: true, [name]: value.items.map(present), ...(value.nextCursor !== undefined ? { next_cursor: value.nextCursor } : {}) }) as
    & { readonly success: true; readonly next_cursor?: string }
    & { readonly [K in Name]: ReadonlyArray<B> }
