import { Effect } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { InvalidRequest } from "../domain/errors.ts"
import { cursorSigner } from "../crypto/cursorSigner.ts"
import { type PagePosition, positionFrom, positionValues } from "./pageCursor.ts"

/**
 * Whose list a cursor pages: the list's name (with the id of what it belongs to, for a broadcast's
 * targets or a contact list's contacts) and the account. A cursor of one scope is no cursor in
 * another.
 */
export interface CursorScope {
  readonly list: string
  readonly accountId: string
}

/** What a request's cursor parameter may be: absent or empty for the first page. */
type CursorParam = string | null | undefined

/** A page out of the `limit + 1` rows read: the first `limit`, and the next page's cursor when the extra row shows there is one. */
export interface CursorPage<R> {
  readonly rows: ReadonlyArray<R>
  readonly nextCursor: string | undefined
}

/**
 * The cursors of the accounts' lists (app API, public API, RCS API, GraphQL), signed as the partner
 * e-mail cursors are (crypto/cursorSigner.ts) under their own key derived from
 * HERALD_SECRETS_KEY: an edited cursor, or one of another list or account, is a 400
 * `invalid_request` naming `cursor` (GraphQL: VALIDATION_ERROR naming `page.cursor`), never read as
 * some other position. Every query filters by account as well; the signature keeps clients from
 * steering a keyset scan with positions the list never gave out.
 */
export class ListCursors extends Effect.Service<ListCursors>()("herald/storage/ListCursors", {
  effect: Effect.map(AppConfig, (config) => {
    const signer = cursorSigner(config.secretsKey, "list-cursor-v1")
    const scopeOf = (scope: CursorScope) => `${scope.list}\n${scope.accountId}`

    /** A cursor carrying `values` for `scope`. */
    const sign = (scope: CursorScope, values: ReadonlyArray<unknown>) => signer.sign(scopeOf(scope), values)

    /**
     * What `cursor` carries when this scope signed it and `read` takes its values; none for the first
     * page; otherwise a 400 naming `field` (REST's `cursor`, GraphQL's `page.cursor`).
     */
    const open = <A>(scope: CursorScope, cursor: CursorParam, read: (values: ReadonlyArray<unknown>) => A | undefined, field = "cursor") =>
      Effect.suspend((): Effect.Effect<A | undefined, InvalidRequest> => {
        if (cursor === undefined || cursor === null || cursor === "") return Effect.succeed(undefined)
        const values = signer.open(scopeOf(scope), cursor)
        const value = values === undefined ? undefined : read(values)
        return value === undefined
          ? Effect.fail(InvalidRequest.single(field, "is not a cursor this list gave out (pass it back exactly as it came)"))
          : Effect.succeed(value)
      })

    const page = <R>(scope: CursorScope, rows: ReadonlyArray<R>, limit: number, valuesOf: (row: R) => ReadonlyArray<unknown>): CursorPage<R> => {
      const onPage = rows.slice(0, limit)
      const last = onPage[onPage.length - 1]
      return { rows: onPage, nextCursor: rows.length > limit && last !== undefined ? sign(scope, valuesOf(last)) : undefined }
    }

    return {
      sign,
      open,
      page,
      /** The (created_at, uuid) position of a newest-first list's cursor. */
      readPosition: (scope: CursorScope, cursor: CursorParam, field?: string) => open(scope, cursor, positionFrom, field),
      positionPage: <R>(scope: CursorScope, rows: ReadonlyArray<R>, limit: number, position: (row: R) => PagePosition) =>
        page(scope, rows, limit, (row) => positionValues(position(row))),
      /** The key of a list paged by one increasing key; `isKey` says which values are keys. */
      readKey: <K extends string | number>(scope: CursorScope, cursor: CursorParam, isKey: (value: unknown) => value is K, field?: string) =>
        open(scope, cursor, (values) => (values.length === 1 && isKey(values[0]) ? values[0] : undefined), field),
      keyPage: <R>(scope: CursorScope, rows: ReadonlyArray<R>, limit: number, keyOf: (row: R) => string | number) => page(scope, rows, limit, (row) => [keyOf(row)])
    } as const
  })
}) {}
