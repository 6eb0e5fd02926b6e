import { isoInstant } from "./isoInstant.ts"

/**
 * How a customer import types its CSV cells (docs/customers.md, Importing). A cell is a trait's
 * value; searches compare numbers as numbers and booleans as booleans only when the trait holds
 * that JSON type, so a cell that plainly is one is stored as one. The rule reads the cell with
 * its surrounding spaces dropped, and only in shapes no spreadsheet user would mean as text:
 *
 * - a number: an optional `-`, digits with no leading zero (but `0` itself), an optional `.` and
 *   digits, 15 digits at most in all (what a JSON number holds exactly; a 16-digit card or an
 *   18-digit id would be rounded). No `+`, exponent, thousands separator or leading zero, so
 *   `00123`, `+919876543210` and `1e5` stay text;
 * - a boolean: `true` or `false`, in any case (spreadsheets write `TRUE`);
 * - an ISO 8601 date or date-time (isoInstant's rule): kept as a string, the way the traits
 *   already hold dates, trimmed so that searches compare it as an instant;
 * - anything else: the cell's text as written.
 *
 * A column whose header ends in `:text` keeps every cell as written (see traitColumn).
 */
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?$/
const MAX_NUMBER_DIGITS = 15

export type CsvTrait = string | number | boolean

export const csvTraitValue = (cell: string): CsvTrait => {
  const trimmed = cell.trim()
  if (NUMBER.test(trimmed) && trimmed.replace(/[-.]/g, "").length <= MAX_NUMBER_DIGITS) return Number(trimmed)
  const lower = trimmed.toLowerCase()
  if (lower === "true" || lower === "false") return lower === "true"
  if (isoInstant(trimmed) !== undefined) return trimmed
  return cell
}

/** The header suffix that keeps a column's cells as text, in any case. */
export const TEXT_SUFFIX = ":text"

/** A CSV column's trait: its name (the header without the suffix) and whether its cells are typed. */
export const traitColumn = (header: string): { readonly name: string; readonly typed: boolean } =>
  header.toLowerCase().endsWith(TEXT_SUFFIX)
    ? { name: header.slice(0, -TEXT_SUFFIX.length).trim(), typed: false }
    : { name: header, typed: true }
