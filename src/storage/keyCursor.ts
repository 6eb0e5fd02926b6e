/*
 * The keys of lists paged by one increasing key (a contact_id, a target_no), newest first: a
 * page's last row's key is what the list's cursor carries (ListCursors.ts). Rows with a bigint or
 * integer key have no uuid and created_at for the accounts' lists' position (pageCursor.ts).
 */

const BIGINT_MAX = 9223372036854775807n

/** A bigint key as Postgres prints it (`::text`): a positive integer a bigint holds. */
export const isBigintKey = (value: unknown): value is string =>
  typeof value === "string" && /^[1-9]\d{0,18}$/.test(value) && BigInt(value) <= BIGINT_MAX

/** A non-negative Postgres integer. */
export const isIntegerKey = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= 2 ** 31 - 1
