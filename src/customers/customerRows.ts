import { type CsvColumns, contactOfCsv, jsonRowOf, malformed, type ParsedRow, reportable } from "../contacts/contactRow.ts"
import type { RowDecoder } from "../contacts/readers.ts"
import { FieldIssue } from "../domain/errors.ts"
import { firstUnstorable, unstorableText } from "../domain/storable.ts"
import { MAX_NAME, MAX_TRAITS, MAX_TRAITS_BYTES, MAX_USER_ID, parseTraitChanges } from "./traits.ts"
import { traitNameProblem } from "./traitFilters.ts"
import { csvTraitValue, traitColumn } from "./csvTraits.ts"
import { samePhone } from "./customerShape.ts"

const optionalText = (value: unknown, field: string, max: number): string | null | { readonly problem: string } => {
  if (value === undefined || value === null) return null
  if (typeof value !== "string") return { problem: `${field} must be a string` }
  const trimmed = value.trim()
  if (value.length > max) return { problem: `${field} is longer than ${max} characters` }
  const problem = unstorableText(trimmed)
  if (problem !== undefined) return { problem: `${field} ${problem}` }
  return trimmed === "" ? null : trimmed
}

/**
 * A line's fields under the app API's names, the public API's (fullPhoneNumber, userId) read as
 * them (docs/customers.md): both spellings of one field only when they say the same; otherwise why not.
 */
const oneSpelling = (value: unknown): { readonly value: unknown; readonly userIdField: string } | string => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { value, userIdField: "user_id" }
  const object = { ...(value as Record<string, unknown>) }
  let userIdField = "user_id"
  for (const [name, alias, same] of [["phone", "fullPhoneNumber", samePhone], ["user_id", "userId", Object.is]] as const) {
    if (!(alias in object)) continue
    if (name in object && object[name] !== undefined && !same(object[name], object[alias])) return `${name} and ${alias} are the same field under two names and differ: give one`
    if (!(name in object) || object[name] === undefined) {
      object[name] = object[alias]
      if (name === "user_id") userIdField = alias
    }
    delete object[alias]
  }
  return { value: object, userIdField }
}

/**
 * An NDJSON line (or JSON element) of a customer import: POST /app/contacts's body, `{phone, name?,
 * user_id?, traits?, tags?}`, checked by the same trait and tag rules (a null trait removes it).
 */
const customerOfJson = (row: number, value: unknown): ParsedRow => {
  const spelled = oneSpelling(value)
  if (typeof spelled === "string") return malformed(row, "", spelled)
  const read = jsonRowOf(row, spelled.value)
  if ("_tag" in read) return read
  const { object, phone } = read
  const shown = reportable(phone)
  const unknown = Object.keys(object).find((key) => !["phone", "name", "user_id", "traits", "tags"].includes(key))
  if (unknown !== undefined) {
    return malformed(row, shown, `${JSON.stringify(unknown.slice(0, 40))} is not a field of a contact (phone, name, user_id, traits, tags; fullPhoneNumber and userId name phone and user_id)`)
  }
  const name = optionalText(object.name, "name", MAX_NAME)
  if (name !== null && typeof name === "object") return malformed(row, shown, name.problem)
  const userId = optionalText(object.user_id, spelled.userIdField, MAX_USER_ID)
  if (userId !== null && typeof userId === "object") return malformed(row, shown, userId.problem)
  const issues: Array<FieldIssue> = []
  const changes = parseTraitChanges(object.traits, object.tags, issues)
  const unstorable = firstUnstorable(object.traits ?? null) ?? firstUnstorable(object.tags ?? null)
  if (issues.length > 0) return malformed(row, shown, `${issues[0]!.path} ${issues[0]!.message}`)
  if (unstorable !== undefined) return malformed(row, shown, `${unstorable.path} ${unstorable.message}`)
  // As sent, null traits included: the upsert removes those from an existing customer (jsonb_strip_nulls).
  const traitsJson = changes.remove.length + Object.keys(changes.set).length === 0 ? null : JSON.stringify(object.traits)
  if (traitsJson !== null && Buffer.byteLength(traitsJson) > MAX_TRAITS_BYTES) return malformed(row, shown, `traits exceed ${MAX_TRAITS_BYTES} bytes as JSON`)
  return {
    _tag: "Contact",
    row,
    phone,
    name,
    params: traitsJson,
    userId,
    tags: changes.addTags.length === 0 ? null : JSON.stringify(changes.addTags)
  }
}

/**
 * A CSV header read as traits, worked out once per header: the columns under their traits' names
 * (a `:text` suffix dropped) and the indexes of the columns whose cells are typed, or why the
 * header cannot name traits.
 */
type TraitHeader = { readonly columns: CsvColumns; readonly typed: ReadonlySet<number> } | { readonly problem: string }
const traitHeaders = new WeakMap<CsvColumns, TraitHeader>()

const readTraitHeader = (columns: CsvColumns): TraitHeader => {
  if (columns.params.length > MAX_TRAITS) return { problem: `the header has ${columns.params.length} trait columns; a contact has at most ${MAX_TRAITS}` }
  const params: Array<readonly [number, string]> = []
  const typed = new Set<number>()
  const seen = new Set<string>()
  for (const [index, header] of columns.params) {
    const { name, typed: isTyped } = traitColumn(header)
    const problem = traitNameProblem(name)
    if (problem !== undefined) return { problem: `column ${JSON.stringify(header.slice(0, 40))}: the trait's name ${problem}` }
    // Matched without regard to case, as csvColumns matches the header's names.
    const key = name.toLowerCase()
    if (key === "phone" || key === "name") return { problem: `column ${JSON.stringify(header)}: ${key} is not a trait and is always text` }
    if (seen.has(key)) return { problem: `the header names trait ${JSON.stringify(name)} twice` }
    seen.add(key)
    params.push([index, name])
    if (isTyped) typed.add(index)
  }
  return { columns: { ...columns, params }, typed }
}

const traitHeaderOf = (columns: CsvColumns): TraitHeader => {
  let header = traitHeaders.get(columns)
  if (header === undefined) {
    header = readTraitHeader(columns)
    traitHeaders.set(columns, header)
  }
  return header
}

/**
 * A CSV record of a customer import: `phone` and `name` as for a contact list, every other column
 * a trait, its cell typed by csvTraitValue (a number, a boolean, an ISO date or text) unless the
 * column's header ends in `:text`. An empty cell sets nothing (a blank in a spreadsheet does not
 * erase what the customer has).
 */
const customerOfCsv = (row: number, columns: CsvColumns, fields: ReadonlyArray<string>): ParsedRow => {
  const header = traitHeaderOf(columns)
  if ("problem" in header) return malformed(row, (fields[columns.phone] ?? "").trim(), header.problem)
  return contactOfCsv(row, header.columns, fields, {
    skipEmptyCells: true,
    cellValue: (index, cell) => (header.typed.has(index) ? csvTraitValue(cell) : cell)
  })
}

/** How a customer import reads its rows (src/customers/CustomerImport.ts). */
export const CUSTOMER_ROWS: RowDecoder = { json: customerOfJson, csv: customerOfCsv }
