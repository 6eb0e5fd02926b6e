import { type CsvColumns, contactOfCsv, malformed, phoneText, reportable, type ParsedRow } from "../contacts/contactRow.ts"
import type { RowDecoder } from "../contacts/readers.ts"
import { FieldIssue } from "../domain/errors.ts"
import { firstUnstorable, unstorableText } from "../domain/storable.ts"
import { MAX_NAME, MAX_TRAITS, MAX_TRAITS_BYTES, MAX_USER_ID, parseTraitChanges } from "./traits.ts"
import { traitNameProblem } from "./traitFilters.ts"

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

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
 * An NDJSON line (or JSON element) of a customer import: POST /app/contacts's body, `{phone, name?,
 * user_id?, traits?, tags?}`, checked by the same trait and tag rules (a null trait removes it).
 */
const customerOfJson = (row: number, value: unknown): ParsedRow => {
  if (!isPlainObject(value)) return malformed(row, "", "must be an object with a phone")
  const phone = value.phone
  if (phone === undefined || phone === null || phone === "") return malformed(row, "", "phone is missing")
  if (typeof phone !== "string" && typeof phone !== "number") return malformed(row, "", "phone must be a string")
  const shown = reportable(phoneText(phone))
  const unknown = Object.keys(value).find((key) => !["phone", "name", "user_id", "traits", "tags"].includes(key))
  if (unknown !== undefined) return malformed(row, shown, `${JSON.stringify(unknown.slice(0, 40))} is not a field of a contact (phone, name, user_id, traits, tags)`)
  const name = optionalText(value.name, "name", MAX_NAME)
  if (name !== null && typeof name === "object") return malformed(row, shown, name.problem)
  const userId = optionalText(value.user_id, "user_id", MAX_USER_ID)
  if (userId !== null && typeof userId === "object") return malformed(row, shown, userId.problem)
  const issues: Array<FieldIssue> = []
  const changes = parseTraitChanges(value.traits, value.tags, issues)
  const unstorable = firstUnstorable(value.traits ?? null) ?? firstUnstorable(value.tags ?? null)
  if (issues.length > 0) return malformed(row, shown, `${issues[0]!.path} ${issues[0]!.message}`)
  if (unstorable !== undefined) return malformed(row, shown, `${unstorable.path} ${unstorable.message}`)
  const traits: Record<string, unknown> = { ...changes.set }
  // Kept as null: the upsert removes the trait from an existing customer (jsonb_strip_nulls).
  for (const removed of changes.remove) traits[removed] = null
  const traitsJson = JSON.stringify(traits)
  if (Buffer.byteLength(traitsJson) > MAX_TRAITS_BYTES) return malformed(row, shown, `traits exceed ${MAX_TRAITS_BYTES} bytes as JSON`)
  return {
    _tag: "Contact",
    row,
    phone: phoneText(phone),
    name,
    params: Object.keys(traits).length === 0 ? null : traitsJson,
    userId,
    tags: changes.addTags.length === 0 ? null : JSON.stringify(changes.addTags)
  }
}

/** Why a CSV header cannot name traits, worked out once per header. */
const headerProblems = new WeakMap<CsvColumns, string | null>()
const headerProblem = (columns: CsvColumns): string | null => {
  let problem = headerProblems.get(columns)
  if (problem === undefined) {
    const named = columns.params.map(([, name]) => [name, traitNameProblem(name)] as const).find(([, p]) => p !== undefined)
    problem = columns.params.length > MAX_TRAITS
      ? `the header has ${columns.params.length} trait columns; a contact has at most ${MAX_TRAITS}`
      : named === undefined ? null : `column ${JSON.stringify(named[0].slice(0, 40))}: the trait's name ${named[1]}`
    headerProblems.set(columns, problem)
  }
  return problem
}

/**
 * A CSV record of a customer import: `phone` and `name` as for a contact list, every other column
 * a trait holding the cell's text. An empty cell sets nothing (a blank in a spreadsheet does not
 * erase what the customer has).
 */
const customerOfCsv = (row: number, columns: CsvColumns, fields: ReadonlyArray<string>): ParsedRow => {
  const problem = headerProblem(columns)
  if (problem !== null) return malformed(row, (fields[columns.phone] ?? "").trim(), problem)
  const parsed = contactOfCsv(row, columns, fields)
  if (parsed._tag === "Malformed" || parsed.params === null) return parsed
  const cells = Object.entries(JSON.parse(parsed.params) as Record<string, string>).filter(([, cell]) => cell.trim() !== "")
  return { ...parsed, params: cells.length === 0 ? null : JSON.stringify(Object.fromEntries(cells)) }
}

/** How a customer import reads its rows (src/customers/CustomerImport.ts). */
export const CUSTOMER_ROWS: RowDecoder = { json: customerOfJson, csv: customerOfCsv }
