import { FieldIssue } from "../../domain/errors.ts"

/**
 * The `type` and `data` of POST /api/v1/public/message (Interakt's shape, docs: design page "Public
 * messaging API") and what each becomes in a Cloud API send body. Every limit is Meta's (its
 * OpenAPI document and message reference), checked here so that a client learns every problem of
 * a request at once, as a 400 naming each field, instead of one asynchronous upstream rejection.
 *
 * Lengths are counted in Unicode code points (an emoji such as 😀 is one, a flag or a family emoji
 * made of several code points is several). Meta's reference only says "characters"; code points
 * are what JSON Schema's `maxLength` counts, so this check, Meta's OpenAPI schema and the
 * simulator that applies it agree on every string. UTF-16 units would refuse some texts Meta's
 * schema accepts, graphemes would pass some it refuses.
 */

export const PUBLIC_MESSAGE_TYPES = [
  "Text", "Image", "Video", "Audio", "Document", "Sticker", "InteractiveButton", "InteractiveList", "Template"
] as const
export type PublicMessageType = typeof PUBLIC_MESSAGE_TYPES[number]
/** The types this module builds; Template goes through the template path. */
export type FreeFormType = Exclude<PublicMessageType, "Template">

export const isPublicMessageType = (value: unknown): value is PublicMessageType =>
  typeof value === "string" && (PUBLIC_MESSAGE_TYPES as ReadonlyArray<string>).includes(value)

export const isFreeFormType = (type: PublicMessageType): type is FreeFormType => type !== "Template"

export const TEXT_MAX = 4096
export const CAPTION_MAX = 1024
export const INTERACTIVE_BODY_MAX = 1024
export const HEADER_TEXT_MAX = 60
export const FOOTER_TEXT_MAX = 60
export const BUTTONS_MAX = 3
export const BUTTON_ID_MAX = 256
export const BUTTON_TITLE_MAX = 20
export const LIST_BUTTON_MAX = 20
export const SECTIONS_MAX = 10
export const SECTION_TITLE_MAX = 24
/** Across all sections of a list, not per section. */
export const LIST_ROWS_MAX = 10
export const ROW_ID_MAX = 200
export const ROW_TITLE_MAX = 24
export const ROW_DESCRIPTION_MAX = 72
/** Meta states no limit for `link`; 2048 is what browsers and CDNs reliably carry. */
export const MEDIA_URL_MAX = 2048
/**
 * Meta states no limit for a document's `filename`. The recipient's phone saves the file under it,
 * and common file systems cap a name at 255 bytes or UTF-16 units: 240 leaves room for the " (1)"
 * a device appends to a name it already has.
 */
export const FILE_NAME_MAX = 240

export interface CloudContent {
  readonly type: "text" | "image" | "video" | "audio" | "sticker" | "document" | "interactive" | "template"
  readonly object: Record<string, unknown>
}

export type CheckedMessageData = { readonly content: CloudContent } | { readonly issues: ReadonlyArray<FieldIssue> }

// ---------------------------------------------------------------------------------------------
// Field readers: each records its problems and returns the value only when it is usable.
// ---------------------------------------------------------------------------------------------

type Issues = Array<FieldIssue>
type Json = Record<string, unknown>

const isRecord = (value: unknown): value is Json => value !== null && typeof value === "object" && !Array.isArray(value)
const isAbsent = (value: unknown) => value === undefined || value === null

const report = (issues: Issues, path: string, message: string): undefined => {
  issues.push(new FieldIssue({ path, message }))
  return undefined
}

const kindOf = (value: unknown) =>
  value === null ? "null"
  : value === undefined ? "nothing"
  : Array.isArray(value) ? "a list"
  : typeof value === "object" ? "an object"
  : `a ${typeof value}`

/** Code points, counted only when the UTF-16 length could exceed the limit (the common case is free). */
const charCount = (text: string) => [...text].length

interface TextRule {
  readonly max: number
  readonly required: boolean
}

const readText = (issues: Issues, path: string, value: unknown, rule: TextRule): string | undefined => {
  if (isAbsent(value)) return rule.required ? report(issues, path, "is required") : undefined
  if (typeof value !== "string") return report(issues, path, `must be a string (got ${kindOf(value)})`)
  if (value.trim() === "") {
    return report(issues, path, rule.required ? "must not be empty" : "must not be empty (leave it out instead)")
  }
  if (value.length > rule.max) {
    const count = charCount(value)
    if (count > rule.max) return report(issues, path, `must be at most ${rule.max} characters (got ${count})`)
  }
  return value
}

const HAS_SPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f]/

const readMediaUrl = (issues: Issues, path: string, value: unknown, allowHttp: boolean): string | undefined => {
  const url = readText(issues, path, value, { max: MEDIA_URL_MAX, required: true })
  if (url === undefined) return undefined
  if (HAS_SPACE_OR_CONTROL.test(url)) return report(issues, path, "must not contain spaces or control characters (encode them, e.g. %20)")
  if (!URL.canParse(url)) return report(issues, path, "must be an absolute https URL, e.g. https://example.com/photo.jpg")
  const { protocol, hostname } = new URL(url)
  if (protocol === "http:" && !allowHttp) return report(issues, path, "must be an https URL (http is not allowed)")
  if ((protocol !== "https:" && protocol !== "http:") || hostname === "") return report(issues, path, "must be an https URL")
  return url
}

const readFileName = (issues: Issues, path: string, value: unknown): string | undefined => {
  const name = readText(issues, path, value, { max: FILE_NAME_MAX, required: false })
  if (name === undefined) return undefined
  // A name, not a path: the recipient's device would otherwise mangle or refuse it.
  if (/[/\\\u0000-\u001f\u007f]/.test(name)) return report(issues, path, "must be a file name without slashes or control characters")
  return name
}

const readList = (issues: Issues, path: string, value: unknown, min: number, max: number, noun: string): ReadonlyArray<unknown> | undefined => {
  if (isAbsent(value)) return report(issues, path, "is required")
  if (!Array.isArray(value)) return report(issues, path, `must be a list of ${noun}s (got ${kindOf(value)})`)
  if (value.length < min) return report(issues, path, `must have at least ${min} ${noun}${min === 1 ? "" : "s"}`)
  if (value.length > max) report(issues, path, `must have at most ${max} ${noun}s (got ${value.length})`)
  return value
}

/** Names each field `value` has beyond `fields`; `what` completes "is not a field of …". */
const reportUnknownFields = (issues: Issues, path: string, value: Json, fields: ReadonlyArray<string>, what: string) => {
  for (const key of Object.keys(value)) {
    if (!fields.includes(key)) report(issues, `${path}.${key}`, `is not a field of ${what}`)
  }
}

const readObject = (issues: Issues, path: string, value: unknown, fields: ReadonlyArray<string>, what: string): Json | undefined => {
  if (!isRecord(value)) return report(issues, path, `must be an object (got ${kindOf(value)})`)
  reportUnknownFields(issues, path, value, fields, what)
  return value
}

/** Reports each value already seen at an earlier path. */
const reportDuplicates = (issues: Issues, entries: ReadonlyArray<{ readonly path: string; readonly value: string | undefined }>) => {
  const first = new Map<string, string>()
  for (const { path, value } of entries) {
    if (value === undefined) continue
    const earlier = first.get(value)
    if (earlier === undefined) first.set(value, path)
    else report(issues, path, `must be unique (${earlier} is the same)`)
  }
}

// ---------------------------------------------------------------------------------------------
// Per type
// ---------------------------------------------------------------------------------------------

const DATA_FIELDS: Record<FreeFormType, ReadonlyArray<string>> = {
  Text: ["message"],
  Image: ["mediaUrl", "message"],
  Video: ["mediaUrl", "message"],
  Audio: ["mediaUrl"],
  Sticker: ["mediaUrl"],
  Document: ["mediaUrl", "fileName", "message"],
  InteractiveButton: ["message", "header", "footer", "buttons"],
  InteractiveList: ["message", "button", "header", "footer", "sections"]
}

interface Options {
  readonly allowHttpMedia: boolean
}

type Builder = (issues: Issues, data: Json, options: Options) => CloudContent

const optional = <K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> =>
  (value === undefined ? {} : { [key]: value }) as Partial<Record<K, V>>

const text: Builder = (issues, data) => {
  const body = readText(issues, "data.message", data.message, { max: TEXT_MAX, required: true })
  // Meta shows a link preview only when asked; Interakt's API has no switch for it, so none is asked.
  return { type: "text", object: { body, preview_url: false } }
}

const media = (type: "image" | "video" | "audio" | "sticker", captioned: boolean): Builder => (issues, data, options) => {
  const link = readMediaUrl(issues, "data.mediaUrl", data.mediaUrl, options.allowHttpMedia)
  const caption = captioned ? readText(issues, "data.message", data.message, { max: CAPTION_MAX, required: false }) : undefined
  return { type, object: { link, ...optional("caption", caption) } }
}

const document: Builder = (issues, data, options) => {
  const link = readMediaUrl(issues, "data.mediaUrl", data.mediaUrl, options.allowHttpMedia)
  const caption = readText(issues, "data.message", data.message, { max: CAPTION_MAX, required: false })
  const filename = readFileName(issues, "data.fileName", data.fileName)
  return { type: "document", object: { link, ...optional("caption", caption), ...optional("filename", filename) } }
}

/** Header (text only on this API), body and footer, shared by both interactive types. */
const frame = (issues: Issues, data: Json) => {
  const header = readText(issues, "data.header", data.header, { max: HEADER_TEXT_MAX, required: false })
  const body = readText(issues, "data.message", data.message, { max: INTERACTIVE_BODY_MAX, required: true })
  const footer = readText(issues, "data.footer", data.footer, { max: FOOTER_TEXT_MAX, required: false })
  return {
    ...optional("header", header === undefined ? undefined : { type: "text", text: header }),
    body: { text: body },
    ...optional("footer", footer === undefined ? undefined : { text: footer })
  }
}

const readButtonId = (issues: Issues, path: string, value: unknown) => {
  const id = readText(issues, path, value, { max: BUTTON_ID_MAX, required: true })
  if (id !== undefined && id.trim() !== id) return report(issues, path, "must not start or end with a space")
  return id
}

const interactiveButton: Builder = (issues, data) => {
  const shell = frame(issues, data)
  const items = readList(issues, "data.buttons", data.buttons, 1, BUTTONS_MAX, "button") ?? []
  const buttons = items.map((item, i) => {
    const path = `data.buttons[${i}]`
    const button = readObject(issues, path, item, ["id", "title"], "a button")
    const id = button && readButtonId(issues, `${path}.id`, button.id)
    const title = button && readText(issues, `${path}.title`, button.title, { max: BUTTON_TITLE_MAX, required: true })
    return { path, id, title }
  })
  reportDuplicates(issues, buttons.map((b) => ({ path: `${b.path}.id`, value: b.id })))
  reportDuplicates(issues, buttons.map((b) => ({ path: `${b.path}.title`, value: b.title })))
  const action = { buttons: buttons.map(({ id, title }) => ({ type: "reply", reply: { id, title } })) }
  return { type: "interactive", object: { type: "button", ...shell, action } }
}

interface ListRow {
  readonly path: string
  readonly row: Json
}

const readRow = (issues: Issues, path: string, value: unknown): ListRow => {
  const row = readObject(issues, path, value, ["id", "title", "description"], "a row")
  const id = row && readText(issues, `${path}.id`, row.id, { max: ROW_ID_MAX, required: true })
  const title = row && readText(issues, `${path}.title`, row.title, { max: ROW_TITLE_MAX, required: true })
  const description = row && readText(issues, `${path}.description`, row.description, { max: ROW_DESCRIPTION_MAX, required: false })
  return { path, row: { id, title, ...optional("description", description) } }
}

const readSection = (issues: Issues, path: string, value: unknown, sectionCount: number) => {
  const section = readObject(issues, path, value, ["title", "rows"], "a section")
  if (section === undefined) return { section: {}, rows: [] }
  const title = readText(issues, `${path}.title`, section.title, { max: SECTION_TITLE_MAX, required: false })
  if (isAbsent(section.title) && sectionCount > 1) report(issues, `${path}.title`, "is required when there is more than one section")
  // Meta's cap is on rows in total, checked by the caller; per section only emptiness is wrong.
  const rows = (readList(issues, `${path}.rows`, section.rows, 1, Number.MAX_SAFE_INTEGER, "row") ?? [])
    .map((row, j) => readRow(issues, `${path}.rows[${j}]`, row))
  return { section: { ...optional("title", title), rows: rows.map((r) => r.row) }, rows }
}

const interactiveList: Builder = (issues, data) => {
  const shell = frame(issues, data)
  const button = readText(issues, "data.button", data.button, { max: LIST_BUTTON_MAX, required: true })
  const items = readList(issues, "data.sections", data.sections, 1, SECTIONS_MAX, "section") ?? []
  const sections = items.map((item, i) => readSection(issues, `data.sections[${i}]`, item, items.length))
  const rows = sections.flatMap((s) => s.rows)
  if (rows.length > LIST_ROWS_MAX) report(issues, "data.sections", `must hold at most ${LIST_ROWS_MAX} rows in total (got ${rows.length})`)
  reportDuplicates(issues, rows.map((r) => ({ path: `${r.path}.id`, value: typeof r.row.id === "string" ? r.row.id : undefined })))
  const action = { button, sections: sections.map((s) => s.section) }
  return { type: "interactive", object: { type: "list", ...shell, action } }
}

const BUILDERS: Record<FreeFormType, Builder> = {
  Text: text,
  Image: media("image", true),
  Video: media("video", true),
  Audio: media("audio", false),
  Sticker: media("sticker", false),
  Document: document,
  InteractiveButton: interactiveButton,
  InteractiveList: interactiveList
}

interface CheckMessageData {
  /** Validates `data` for a non-template type and builds what goes under the Cloud API body's `[type]` key. */
  (type: FreeFormType, data: unknown, options: Options): CheckedMessageData
  /** Template sends are built by the template path: nothing to check here. */
  (type: "Template", data: unknown, options: Options): undefined
  (type: PublicMessageType, data: unknown, options: Options): CheckedMessageData | undefined
}

/** Validates `data` for a non-template type and builds what goes under the Cloud API body's `[type]` key. */
export const checkMessageData: CheckMessageData = ((type: PublicMessageType, data: unknown, options: Options) => {
  if (!isFreeFormType(type)) return undefined
  const issues: Issues = []
  // The signature rules this out; an unchecked caller still gets an issue rather than a crash.
  if (!Object.hasOwn(BUILDERS, type)) {
    report(issues, "type", `must be one of ${PUBLIC_MESSAGE_TYPES.join(", ")}`)
    return { issues }
  }
  const object = readObject(issues, "data", data, DATA_FIELDS[type], type)
  if (object === undefined) return { issues }
  const content = BUILDERS[type](issues, object, options)
  return issues.length > 0 ? { issues } : { content }
}) as CheckMessageData
