import { firstUnstorable, unstorableText } from "../domain/storable.ts"
import { NAME_MAX, PARAMS_MAX_BYTES } from "./importLimits.ts"

/**
 * One data row of an import as a parser read it, before its phone is normalised: a contact, or a
 * row whose shape is wrong (counted invalid, never written). `row` is the 1-based number of the
 * data row: the element of the JSON array, the non-blank NDJSON line, the CSV record after the
 * header — not a line number, since blank lines are skipped and a quoted CSV field may span lines.
 */
export type ParsedRow =
  | {
    readonly _tag: "Contact"
    readonly row: number
    readonly phone: string
    readonly name: string | null
    /** The params object as JSON text (serialised once, here), or null for none. */
    readonly params: string | null
    /** A customer import's other fields (src/customers/customerRows.ts); a contact list's rows have none. */
    readonly userId?: string | null
    /** The tags as JSON text. */
    readonly tags?: string | null
  }
  | { readonly _tag: "Malformed"; readonly row: number; readonly phone: string; readonly reason: string }

export const malformed = (row: number, phone: string, reason: string): ParsedRow => ({ _tag: "Malformed", row, phone, reason })

/** A phone as the report may quote it: what cannot be stored or sent back as JSON is dropped. */
export const reportable = (phone: string) => (unstorableText(phone) === undefined ? phone : "")

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** The phone as the client wrote it, for the report: strings as they are, numbers printed, anything else empty. */
const phoneText = (value: unknown): string => (typeof value === "string" ? value : typeof value === "number" ? String(value) : "")

/** Name and params checked the same way whatever the format. */
const contact = (row: number, phone: string, name: string | null, params: string | null): ParsedRow => {
  if (name !== null && name.length > NAME_MAX) return malformed(row, phone, `name is longer than ${NAME_MAX} characters`)
  const nameProblem = name === null ? undefined : unstorableText(name)
  if (nameProblem !== undefined) return malformed(row, reportable(phone), `name ${nameProblem}`)
  if (params !== null && Buffer.byteLength(params) > PARAMS_MAX_BYTES) return malformed(row, phone, `params exceed ${PARAMS_MAX_BYTES} bytes as JSON`)
  return { _tag: "Contact", row, phone, name, params }
}

/**
 * A JSON or NDJSON element as an object with a phone (a string, or a number as a spreadsheet export
 * writes it), or the row refused for its shape.
 */
export const jsonRowOf = (row: number, value: unknown): { readonly object: Record<string, unknown>; readonly phone: string } | ParsedRow => {
  if (!isPlainObject(value)) return malformed(row, "", "must be an object with a phone")
  const phone = value.phone
  if (phone === undefined || phone === null || phone === "") return malformed(row, "", "phone is missing")
  if (typeof phone !== "string" && typeof phone !== "number") return malformed(row, "", "phone must be a string")
  return { object: value, phone: phoneText(phone) }
}

/**
 * A JSON or NDJSON element `{phone, name?, params?}`. A phone may be a string or a number (a
 * spreadsheet export often writes it unquoted); params any JSON object, nested values included.
 * Other keys are ignored.
 */
export const contactOfJson = (row: number, value: unknown): ParsedRow => {
  const read = jsonRowOf(row, value)
  if ("_tag" in read) return read
  const { object, phone } = read
  const name = object.name
  if (name !== undefined && name !== null && typeof name !== "string") return malformed(row, phone, "name must be a string")
  const params = object.params
  if (params !== undefined && params !== null && !isPlainObject(params)) return malformed(row, phone, "params must be an object")
  const trimmed = typeof name === "string" ? name.trim() : ""
  const paramsProblem = isPlainObject(params) ? firstUnstorable(params) : undefined
  if (paramsProblem !== undefined) {
    return malformed(row, reportable(phone), `params${paramsProblem.path === "" ? "" : `.${paramsProblem.path}`} ${paramsProblem.message}`)
  }
  return contact(row, phone, trimmed === "" ? null : trimmed, isPlainObject(params) ? JSON.stringify(params) : null)
}

/** The columns of a CSV header: which field is the phone, which the name, and the rest by name. */
export interface CsvColumns {
  readonly phone: number
  readonly name: number | undefined
  /** Every other named column: its index and the params key it fills. */
  readonly params: ReadonlyArray<readonly [number, string]>
  readonly width: number
}

/**
 * The header row: `phone` required and `name` optional, matched case-insensitively after
 * trimming; every other column goes into params under its header as written (trimmed). A column
 * with an empty header is ignored (spreadsheets add them). A problem is returned as text.
 */
export const csvColumns = (header: ReadonlyArray<string>): CsvColumns | string => {
  const names = header.map((h) => h.trim())
  const seen = new Set<string>()
  for (const name of names) {
    if (name === "") continue
    const problem = unstorableText(name)
    if (problem !== undefined) return `a column name of the header ${problem}`
    const key = name.toLowerCase()
    if (seen.has(key)) return `the header names column ${name} twice`
    seen.add(key)
  }
  const phone = names.findIndex((n) => n.toLowerCase() === "phone")
  if (phone < 0) return "the header row has no phone column"
  const name = names.findIndex((n) => n.toLowerCase() === "name")
  const params = names.flatMap((n, i) => (i === phone || i === name || n === "" ? [] : [[i, n] as const]))
  return { phone, name: name < 0 ? undefined : name, params, width: names.length }
}

/**
 * A CSV data record under `columns`: params hold every other column as a string (an empty cell
 * as "", or left out with `skipEmptyCells`), or as `cellValue` reads the cell of the column at
 * that index (a customer import's typed traits). Missing trailing cells are empty; cells past the
 * header's width must be empty.
 */
export const contactOfCsv = (
  row: number,
  columns: CsvColumns,
  fields: ReadonlyArray<string>,
  options: { readonly skipEmptyCells?: boolean; readonly cellValue?: (index: number, cell: string) => unknown } = {}
): ParsedRow => {
  const phone = (fields[columns.phone] ?? "").trim()
  if (fields.length > columns.width && fields.slice(columns.width).some((f) => f.trim() !== "")) {
    return malformed(row, phone, `has ${fields.length} fields, the header has ${columns.width}`)
  }
  if (phone === "") return malformed(row, "", "phone is missing")
  const name = columns.name === undefined ? "" : (fields[columns.name] ?? "").trim()
  let params: string | null = null
  if (columns.params.length > 0) {
    const object: Record<string, unknown> = {}
    let cells = 0
    for (const [index, key] of columns.params) {
      const value = fields[index] ?? ""
      if (options.skipEmptyCells === true && value.trim() === "") continue
      const problem = unstorableText(value)
      if (problem !== undefined) return malformed(row, reportable(phone), `${key} ${problem}`)
      object[key] = options.cellValue === undefined ? value : options.cellValue(index, value)
      cells++
    }
    if (cells > 0) params = JSON.stringify(object)
  }
  return contact(row, phone, name === "" ? null : name, params)
}
