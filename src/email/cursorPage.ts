import { Effect, Schema } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { cursorSigner } from "../crypto/cursorSigner.ts"
import { type PagePosition, positionFrom } from "../storage/pageCursor.ts"

/** The partner lists' refusal of a cursor they did not give out, or one that was edited: 400 `invalid_cursor`. */
export class InvalidCursor extends Schema.TaggedError<InvalidCursor>()("InvalidCursor", {
  message: Schema.String
}) {}

/** One page of a partner list: its rows, and the cursor of the next page (undefined on the last). */
export interface CursorPage<A> {
  readonly rows: ReadonlyArray<A>
  readonly nextCursor: string | undefined
}

export const PAGE_LIMIT_DEFAULT = 100
export const PAGE_LIMIT_MAX = 1000

/**
 * The query of every partner list (the contract's names): `limit` 1..1000, default 100; more is a
 * 400 `invalid_request`, not a silent clamp.
 */
export const PageQuery = {
  limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, PAGE_LIMIT_MAX))).annotations({
    description: `Rows on the page: 1 to ${PAGE_LIMIT_MAX.toLocaleString("en")}, ${PAGE_LIMIT_DEFAULT} by default (anything else is 400 invalid_request).`
  }),
  next_cursor: Schema.optional(Schema.String.pipe(Schema.maxLength(512))).annotations({
    description: "The next_cursor of the previous page, passed back exactly as it came; absent for the first page. A cursor of another list " +
      "(or another filter) is 400 invalid_cursor."
  })
}

/** The fields every partner list answers besides its rows (named after the resource). */
export const pageFields = {
  success: Schema.Literal(true),
  count: Schema.Int.annotations({ description: "Rows on this page." }),
  next_cursor: Schema.optional(Schema.String).annotations({ description: "Pass it as next_cursor for the next page; absent on the last page." })
}

/**
 * Cursors of the partner lists (docs/partner-email.md, Pagination): a keyset position (created_at
 * to the microsecond, then the row's uuid, both descending) with an HMAC-SHA256 under a key derived
 * from HERALD_SECRETS_KEY, base64url. A cursor names a position in one partner's one list: the
 * list's name and the partner are signed with it, so a cursor cannot be moved to another list or
 * partner, and an edited one is refused rather than read as some other position. Keyset pages
 * cost the same at any depth, and rows added after the first page sort before every cursor given
 * out, so they never shift a later page.
 */
export class CursorPages extends Effect.Service<CursorPages>()("herald/email/CursorPages", {
  effect: Effect.map(AppConfig, (config) => {
    const signer = cursorSigner(config.secretsKey, "partner-cursor-v1")
    const encode = (scope: string, position: PagePosition) => signer.sign(scope, [position.createdAt, position.id])
    const decode = (scope: string, cursor: string): PagePosition | undefined => {
      const values = signer.open(scope, cursor)
      return values === undefined ? undefined : positionFrom(values)
    }

    /**
     * One page of a list: `read` gets the position to start after (none for the first page) and how
     * many rows to read (one more than the page, to learn whether a next page exists).
     */
    const page = <R, E, Req>(
      scope: { readonly list: string; readonly partnerId: string },
      query: { readonly limit?: number | undefined; readonly next_cursor?: string | undefined },
      read: (after: PagePosition | undefined, take: number) => Effect.Effect<ReadonlyArray<R>, E, Req>,
      positionOf: (row: R) => PagePosition
    ) =>
      Effect.gen(function*(): Effect.fn.Return<CursorPage<R>, E | InvalidCursor, Req> {
        const signedScope = `${scope.list}\n${scope.partnerId}`
        const limit = query.limit ?? PAGE_LIMIT_DEFAULT
        let after: PagePosition | undefined
        if (query.next_cursor !== undefined && query.next_cursor !== "") {
          after = decode(signedScope, query.next_cursor)
          if (after === undefined) return yield* new InvalidCursor({ message: "next_cursor is not a cursor this list gave out (pass it back exactly as it came)" })
        }
        const rows = yield* read(after, limit + 1)
        const rowsOnPage = rows.slice(0, limit)
        const last = rowsOnPage[rowsOnPage.length - 1]
        const next = rows.length > limit && last !== undefined ? encode(signedScope, positionOf(last)) : undefined
        return { rows: rowsOnPage, nextCursor: next }
      })

    return { page } as const
  })
}) {}
