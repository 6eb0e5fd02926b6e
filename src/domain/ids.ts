/**
 * Whether a string is a uuid as Postgres prints them. Ids from outside (paths, callbacks) are
 * checked with it before they reach a query as `::uuid`: a malformed one is "not found", not a
 * database error, and comparing the column itself (not `column::text`) keeps its index in use.
 */
export const isUuid = (value: string): boolean => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)
