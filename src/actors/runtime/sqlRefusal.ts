import type { SqlError } from "@effect/sql/SqlError"
import { Cause } from "effect"

const sqlState = (error: SqlError) => (error.cause as { code?: unknown } | undefined)?.code

/**
 * Whether the database refused a statement (SQLSTATE classes 22 data, 23 integrity, 42 syntax or
 * undefined object, ...) rather than being unreachable or busy (08 connection, 40 rollback, 53
 * resources, 57 operator intervention, or no code at all): retrying the same write cannot help.
 */
export const refused = (error: SqlError): boolean => {
  const code = sqlState(error)
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && !/^(08|40|53|57|58|XX)/.test(code)
}

/**
 * Whether the database refused a write for the values in it (SQLSTATE class 22, data exception: a
 * NUL in text, an unpaired surrogate in jsonb, a number out of range; class 54, a value past a
 * limit such as an index row's size). Applying the command again writes the same values: it is
 * parked at once, before its side effects run a second time.
 */
export const cannotStore = (error: SqlError): boolean => {
  const code = sqlState(error)
  return typeof code === "string" && /^(22|54)/.test(code)
}

/** The failure a refused write counts as, with what the database said (kept with a parked command). */
export const refusal = (error: SqlError) =>
  Cause.fail(`the database refused the write: ${(error.cause as { message?: string } | undefined)?.message ?? error.message}`)
