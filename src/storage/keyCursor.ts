import { Effect } from "effect"
import { InvalidRequest } from "../domain/errors.ts"

/**
 * The opaque cursor of a list paged by one increasing key (a contact_id, a target_no), newest
 * first: the key of a page's last row. Rows with a bigint or integer key have no uuid and
 * created_at for the accounts' lists' cursor (pageCursor.ts). base64url keeps clients from
 * relying on its form.
 */
export const encodeKeyCursor = (key: string | number): string => Buffer.from(JSON.stringify([key])).toString("base64url")

/** The key a cursor names, or undefined when it is not one a list gave out (`isKey` says which keys are). */
export const decodeKeyCursor = <K extends string | number>(cursor: string, isKey: (value: unknown) => value is K): K | undefined => {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    if (!Array.isArray(parsed) || parsed.length !== 1) return undefined
    const [key] = parsed as [unknown]
    return isKey(key) ? key : undefined
  } catch {
    return undefined
  }
}

/** The key a request's `cursor` names: none (absent or empty) for the first page; 400 when it is not a cursor. */
export const readKeyCursor = <K extends string | number>(cursor: string | undefined, isKey: (value: unknown) => value is K) => {
  if (cursor === undefined || cursor === "") return Effect.succeed(undefined)
  const key = decodeKeyCursor(cursor, isKey)
  return key === undefined ? Effect.fail(InvalidRequest.single("cursor", "is not a cursor this list gave out")) : Effect.succeed(key)
}

/** A page out of the `limit + 1` rows read: the first `limit`, and the next page's cursor when there is one. */
export const keyPage = <R>(rows: ReadonlyArray<R>, limit: number, keyOf: (row: R) => string | number) => {
  const page = rows.slice(0, limit)
  const last = page[page.length - 1]
  return { rows: page, nextCursor: rows.length > limit && last !== undefined ? encodeKeyCursor(keyOf(last)) : undefined }
}

const BIGINT_MAX = 9223372036854775807n

/** A bigint key as Postgres prints it (`::text`): a positive integer a bigint holds. */
export const isBigintKey = (value: unknown): value is string =>
  typeof value === "string" && /^[1-9]\d{0,18}$/.test(value) && BigInt(value) <= BIGINT_MAX

/** A non-negative Postgres integer. */
export const isIntegerKey = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= 2 ** 31 - 1
