/**
 * What `POST /api/v1/public/templates` accepts (shared/design/whatsapp.md, Templates): a template in
 * Meta's own component format, checked against Meta's limits before Herald stores it and submits it,
 * so a client learns every problem at once instead of from a rejection by Meta's review a day later.
 * Hard errors block creation; warnings name what Meta's review tends to refuse or recategorise.
 *
 * Sources (the bracketed tag names the source of each limit below):
 * - [components] Meta, "Template components" (developers.facebook.com/documentation/business-messaging/
 *   whatsapp/templates/components; the same table is in the message_templates examples of
 *   vendor/meta/whatsapp-business-messaging-api_v23.0.yaml): header text 60 characters and 1
 *   placeholder; body 1024; footer 60; at most 10 buttons; quick replies 10 with labels of 25; URL
 *   buttons 2, label 25, URL 2000 with 1 placeholder appended at its end; phone buttons 1, label 25,
 *   number 20; quick replies grouped before or after the other buttons; samples for every placeholder.
 * - [names] Meta template name rules as quoted by 360dialog and Syniverse: 512 characters, lowercase
 *   letters, digits and underscores.
 * - [languages] Meta, "Supported Languages" (templates/supported-languages, updated May 21, 2026).
 * - [auth] Meta, "Copy code / one-tap authentication templates" (and the AUTHENTICATION example of the
 *   OpenAPI document): preset body with optional add_security_recommendation, footer
 *   code_expiration_minutes 1–90, exactly one OTP button (COPY_CODE, ONE_TAP, ZERO_TAP); no header,
 *   URLs or media; codes of at most 15 characters (YCloud quoting Meta).
 * - [coupon] Meta "Coupon code templates" via 360dialog: one COPY_CODE button, code ≤ 15 characters,
 *   MARKETING only (Gupshup's button list: UTILITY templates cannot use COPY_CODE).
 * - [carousel] Meta, "Media card carousel templates" (marketing-templates/media-card-carousel-templates,
 *   Nov 2025): a body and 2–10 cards, each an IMAGE or VIDEO header, an optional body (all cards or
 *   none), buttons among quick reply, URL and phone, every card alike; "carousel cards are only
 *   available for marketing template messages". Card body 160 characters and 1–2 buttons per card from
 *   Sprinklr, Treble and MessageBird, which agree.
 * - [checkout] Meta, "Checkout button templates" (payments-br/overview: MARKETING, one ORDER_DETAILS
 *   button first, up to 9 quick replies) and "Send order details template message" (payments-in:
 *   created under UTILITY).
 * - [variables] Maqsam, Syniverse, BusinessChat on Meta's review: placeholders numbered from {{1}}
 *   without gaps; a body starting or ending with one, adjacent ones, or fewer than 2n+1 other words
 *   for n placeholders get rejected.
 */

export const TEMPLATE_CATEGORIES = ["MARKETING", "UTILITY", "AUTHENTICATION"] as const
export type TemplateCategory = (typeof TEMPLATE_CATEGORIES)[number]

export type TemplateKind = "text" | "media" | "auth" | "dynamic_cta" | "carousel" | "order_details"

export const NAME_MAX = 512 // [names]
export const HEADER_TEXT_MAX = 60 // [components]
export const HEADER_PLACEHOLDERS_MAX = 1 // [components]
export const BODY_MAX = 1024 // [components]
export const FOOTER_MAX = 60 // [components]
export const BUTTONS_MAX = 10 // [components]
export const QUICK_REPLIES_MAX = 10 // [components]
export const BUTTON_TEXT_MAX = 25 // [components]
export const URL_BUTTONS_MAX = 2 // [components]
export const URL_MAX = 2000 // [components]
export const PHONE_BUTTONS_MAX = 1 // [components]
export const PHONE_NUMBER_MAX = 20 // [components]
export const CODE_MAX = 15 // [coupon] [auth]: a coupon code and a one-time code alike
export const CODE_EXPIRATION_MINUTES_MIN = 1 // [auth]
export const CODE_EXPIRATION_MINUTES_MAX = 90 // [auth]
export const CAROUSEL_CARDS_MIN = 2 // [carousel]
export const CAROUSEL_CARDS_MAX = 10 // [carousel]
export const CARD_BODY_MAX = 160 // [carousel]
export const CARD_BUTTONS_MIN = 1 // [carousel]
export const CARD_BUTTONS_MAX = 2 // [carousel]
export const CHECKOUT_QUICK_REPLIES_MAX = 9 // [checkout]

/** [languages] Meta's list as of May 2026 (from "Lao" on, the long-standing codes: newer regional ones may be missing). */
export const TEMPLATE_LANGUAGES: ReadonlySet<string> = new Set([
  "af", "sq", "ar", "ar_EG", "ar_AE", "ar_LB", "ar_MA", "ar_QA", "az", "be_BY", "bn", "bn_IN", "bg", "ca",
  "zh_CN", "zh_HK", "zh_TW", "hr", "cs", "da", "prs_AF", "nl", "nl_BE", "en", "en_GB", "en_US", "en_AE",
  "en_AU", "en_CA", "en_GH", "en_IE", "en_IN", "en_JM", "en_MY", "en_NZ", "en_QA", "en_SG", "en_UG",
  "en_ZA", "et", "fil", "fi", "fr", "fr_BE", "fr_CA", "fr_CH", "fr_CI", "fr_MA", "ka", "de", "de_AT",
  "de_CH", "el", "gu", "ha", "he", "hi", "hu", "id", "ga", "it", "ja", "kn", "kk", "rw_RW", "ko", "ky_KG",
  "lo", "lv", "lt", "mk", "ms", "ml", "mr", "nb", "fa", "pl", "pt_BR", "pt_PT", "pa", "ro", "ru", "sr",
  "sk", "sl", "es", "es_AR", "es_ES", "es_MX", "sw", "sv", "ta", "te", "th", "tr", "uk", "ur", "uz", "vi",
  "zu"
])

export type MediaFormat = "IMAGE" | "VIDEO" | "DOCUMENT"
export type OtpType = "COPY_CODE" | "ONE_TAP" | "ZERO_TAP"

export interface WaTextHeader {
  readonly type: "HEADER"
  readonly format: "TEXT"
  readonly text: string
  readonly example?: { readonly header_text: ReadonlyArray<string> }
}
export interface WaMediaHeader {
  readonly type: "HEADER"
  readonly format: MediaFormat
  readonly example: { readonly header_handle: ReadonlyArray<string> }
}
export type WaHeader = WaTextHeader | WaMediaHeader
export interface WaBody {
  readonly type: "BODY"
  readonly text: string
  readonly example?: { readonly body_text: ReadonlyArray<ReadonlyArray<string>> }
}
/** Meta writes an authentication body itself ("{{1}} is your verification code."). */
export interface WaAuthBody {
  readonly type: "BODY"
  readonly add_security_recommendation?: boolean
}
export interface WaFooter {
  readonly type: "FOOTER"
  readonly text: string
}
export interface WaAuthFooter {
  readonly type: "FOOTER"
  readonly code_expiration_minutes?: number
}
export interface WaSupportedApp {
  readonly package_name: string
  readonly signature_hash: string
}
export type WaButton =
  | { readonly type: "QUICK_REPLY"; readonly text: string }
  | { readonly type: "URL"; readonly text: string; readonly url: string; readonly example?: ReadonlyArray<string> }
  | { readonly type: "PHONE_NUMBER"; readonly text: string; readonly phone_number: string }
  | { readonly type: "COPY_CODE"; readonly example: string }
  | { readonly type: "ORDER_DETAILS"; readonly text: string }
  | {
    readonly type: "OTP"
    readonly otp_type: OtpType
    readonly text?: string
    readonly autofill_text?: string
    readonly package_name?: string
    readonly signature_hash?: string
    readonly zero_tap_terms_accepted?: boolean
    readonly supported_apps?: ReadonlyArray<WaSupportedApp>
  }
export type WaButtonType = WaButton["type"]
export interface WaButtons {
  readonly type: "BUTTONS"
  readonly buttons: ReadonlyArray<WaButton>
}
export interface WaCard {
  readonly components: ReadonlyArray<WaMediaHeader | WaBody | WaButtons>
}
export interface WaCarousel {
  readonly type: "CAROUSEL"
  readonly cards: ReadonlyArray<WaCard>
}
export type WaComponent = WaHeader | WaBody | WaAuthBody | WaFooter | WaAuthFooter | WaButtons | WaCarousel

/** A template as Herald stores it and submits it to Meta: normalised (upper-case types, canonical examples). */
export interface WaTemplateDefinition {
  readonly name: string
  readonly language: string
  readonly category: TemplateCategory
  readonly components: ReadonlyArray<WaComponent>
}

export interface TemplateCheck {
  readonly errors: ReadonlyArray<string>
  readonly warnings: ReadonlyArray<string>
  readonly kind?: TemplateKind
  readonly template?: WaTemplateDefinition
}

// ---------------------------------------------------------------------------------------------
// Placeholders
// ---------------------------------------------------------------------------------------------

const TOKEN = /\{\{([^{}]*)\}\}/g
const POSITIONAL = /^[1-9][0-9]*$/

/** The `{{…}}` tokens of a text, inner text as written (so `{{ 1 }}` and `{{name}}` show as such). */
const tokensOf = (text: string): Array<string> => [...text.matchAll(TOKEN)].map((m) => m[1] ?? "")

/** How many placeholders a checked text asks values for: its highest `{{n}}` (they run from 1 without gaps). */
export const placeholderCount = (text: string): number =>
  tokensOf(text).reduce((max, token) => (POSITIONAL.test(token) ? Math.max(max, Number(token)) : max), 0)

/** A URL button whose URL ends in `{{1}}`: the send supplies the suffix. */
export const isDynamicUrl = (url: string): boolean => url.endsWith("{{1}}")

/** `text` with each `{{n}}` replaced by `values[n-1]`: what the recipient reads, whose length Meta limits. */
export const renderPlaceholders = (text: string, values: ReadonlyArray<string>): string =>
  text.replace(TOKEN, (whole, token: string) => (POSITIONAL.test(token) ? (values[Number(token) - 1] ?? whole) : whole))

// ---------------------------------------------------------------------------------------------
// Small readers: each pushes its errors and answers the normalised value, or undefined
// ---------------------------------------------------------------------------------------------

interface Report {
  readonly errors: Array<string>
  readonly warnings: Array<string>
}

type Json = Record<string, unknown>

const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

/** Length in characters (code points, so an emoji counts once), as the RCS limits count. */
const characters = (value: string): number => [...value].length

const shown = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 40 ? `${text.slice(0, 37)}...` : text
}

// "an OTP", "an ORDER_DETAILS", but "a UTILITY", "a URL": no U reads as a vowel here.
const article = (word: string) => (/^[AEIO]/i.test(word) ? "an" : "a")

const upperCase = (value: unknown): string | undefined => (typeof value === "string" ? value.toUpperCase() : undefined)

const readString = (report: Report, path: string, value: unknown, max: number): string | undefined => {
  if (value === undefined || value === null) {
    report.errors.push(`${path}: is required`)
    return undefined
  }
  if (typeof value !== "string") {
    report.errors.push(`${path}: must be a string`)
    return undefined
  }
  if (value.trim() === "") {
    report.errors.push(`${path}: must not be empty`)
    return undefined
  }
  const length = characters(value)
  if (length > max) {
    report.errors.push(`${path}: must be at most ${max} characters (got ${length})`)
    return undefined
  }
  return value
}

const readOptionalString = (report: Report, path: string, value: unknown, max: number): string | undefined =>
  value === undefined ? undefined : readString(report, path, value, max)

/** Fields Herald does not submit are dropped, and said so, rather than silently lost. */
const warnIgnored = (report: Report, path: string, raw: Json, allowed: ReadonlyArray<string>) => {
  for (const key of Object.keys(raw)) {
    if (!allowed.includes(key)) report.warnings.push(`${path === "" ? "" : `${path}.`}${key}: ignored; Herald does not submit it`)
  }
}

/** Button labels and footers are fixed text: a `{{n}}` there would reach the recipient as written. */
const refusePlaceholders = (report: Report, path: string, text: string, what: string) => {
  if (tokensOf(text).length > 0) report.errors.push(`${path}: ${what} cannot have placeholders`)
}

// ---------------------------------------------------------------------------------------------
// Name, language, category
// ---------------------------------------------------------------------------------------------

const NAME_PATTERN = /^[a-z0-9_]+$/

const readName = (report: Report, value: unknown): string | undefined => {
  const name = readString(report, "name", value, NAME_MAX)
  if (name !== undefined && !NAME_PATTERN.test(name)) {
    report.errors.push("name: only lowercase letters, digits and underscores are allowed")
    return undefined
  }
  return name
}

const readLanguage = (report: Report, value: unknown): string | undefined => {
  if (typeof value === "string" && TEMPLATE_LANGUAGES.has(value)) return value
  const hint = typeof value === "string" && TEMPLATE_LANGUAGES.has(value.replace("-", "_")) ? ` (did you mean ${value.replace("-", "_")}?)` : ""
  report.errors.push(`language: ${shown(value)} is not a language code Meta supports for templates, such as en, en_US, hi or pt_BR${hint}`)
  return undefined
}

const readCategory = (report: Report, value: unknown): TemplateCategory | undefined => {
  const category = TEMPLATE_CATEGORIES.find((c) => c === upperCase(value))
  if (category === undefined) report.errors.push(`category: must be MARKETING, UTILITY or AUTHENTICATION (got ${shown(value)})`)
  return category
}

// ---------------------------------------------------------------------------------------------
// Text with placeholders, and their samples
// ---------------------------------------------------------------------------------------------

/**
 * The placeholders of a text, numbered as Meta requires: `{{1}}`…`{{n}}`, each once, none missing.
 * Answers n, or undefined when they break the rules (so their samples are not checked against them).
 */
const checkPlaceholders = (report: Report, path: string, text: string): number | undefined => {
  const tokens = tokensOf(text)
  const bad = tokens.filter((t) => !POSITIONAL.test(t))
  for (const token of bad) report.errors.push(`${path}: {{${token}}} is not a placeholder Herald accepts; use {{1}}, {{2}}, … in order`)
  const numbers = tokens.filter((t) => POSITIONAL.test(t)).map(Number)
  const repeated = [...new Set(numbers.filter((n, i) => numbers.indexOf(n) !== i))]
  for (const n of repeated) report.errors.push(`${path}: {{${n}}} appears more than once; each placeholder may appear once`)
  const highest = Math.max(0, ...numbers)
  const missing = Array.from({ length: highest }, (_, i) => i + 1).filter((n) => !numbers.includes(n))
  if (missing.length > 0) {
    report.errors.push(`${path}: placeholders must run from {{1}} without gaps; missing ${missing.map((n) => `{{${n}}}`).join(", ")}`)
  }
  if (bad.length > 0 || repeated.length > 0 || missing.length > 0) return undefined
  if (numbers.some((n, i) => i > 0 && n < numbers[i - 1]!)) {
    report.warnings.push(`${path}: placeholders appear out of order; Meta numbers them by position and may reject the template`)
  }
  return highest
}

const readSampleList = (report: Report, path: string, value: unknown, count: number): Array<string> | undefined => {
  if (!Array.isArray(value)) {
    report.errors.push(`${path}: required: ${count} sample value${count === 1 ? "" : "s"}, one per placeholder`)
    return undefined
  }
  if (value.length !== count) {
    report.errors.push(`${path}: needs ${count} sample value${count === 1 ? "" : "s"}, one per placeholder (got ${value.length})`)
    return undefined
  }
  const bad = value.flatMap((v, i) => (typeof v === "string" && v.trim() !== "" ? [] : [i]))
  for (const i of bad) report.errors.push(`${path}[${i}]: must be a non-empty string`)
  return bad.length === 0 ? (value as Array<string>) : undefined
}

/** Meta's `body_text` is one row of samples (`[["a","b"]]`); a flat list is read as that row. */
const readBodySamples = (report: Report, path: string, example: unknown, count: number): Array<string> | undefined => {
  if (count === 0) {
    if (example !== undefined) report.warnings.push(`${path}: ignored; the text has no placeholders`)
    return undefined
  }
  const rows = isRecord(example) ? example.body_text : undefined
  const row = Array.isArray(rows) && Array.isArray(rows[0]) ? rows[0] : rows
  if (Array.isArray(rows) && rows.length > 1 && Array.isArray(rows[0])) report.warnings.push(`${path}.body_text: only the first row of samples is submitted`)
  return readSampleList(report, `${path}.body_text${row === rows ? "" : "[0]"}`, row, count)
}

/** Meta rejects or recategorises these shapes; they are allowed, but the client should know. */
const warnBodyShape = (report: Report, path: string, text: string, count: number) => {
  if (count === 0) return
  const trimmed = text.trim()
  if (/^\{\{\d+\}\}/.test(trimmed)) report.warnings.push(`${path}: the text starts with a placeholder; Meta often rejects such templates`)
  if (/\{\{\d+\}\}[\s.!?,;:]*$/.test(trimmed)) report.warnings.push(`${path}: the text ends with a placeholder; Meta often rejects such templates`)
  if (/\}\}\s*\{\{/.test(text)) report.warnings.push(`${path}: two placeholders stand side by side; Meta often rejects such templates`)
  const words = text.replace(TOKEN, " ").split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length
  if (words < 2 * count + 1) {
    report.warnings.push(
      `${path}: ${count} placeholder${count === 1 ? "" : "s"} for ${words} word${words === 1 ? "" : "s"} of text; Meta rejects templates with too many placeholders for their length (keep at least ${2 * count + 1} other words)`
    )
  }
}

// ---------------------------------------------------------------------------------------------
// Header, body, footer
// ---------------------------------------------------------------------------------------------

const MEDIA_FORMATS: ReadonlyArray<MediaFormat> = ["IMAGE", "VIDEO", "DOCUMENT"]

const readMediaHeader = (report: Report, path: string, raw: Json, formats: ReadonlyArray<MediaFormat>): WaMediaHeader | undefined => {
  const format = formats.find((f) => f === upperCase(raw.format))
  if (format === undefined) {
    const allowed = formats === MEDIA_FORMATS ? "TEXT, IMAGE, VIDEO or DOCUMENT" : formats.join(" or ")
    report.errors.push(`${path}.format: must be ${allowed} (got ${shown(raw.format)})`)
    return undefined
  }
  warnIgnored(report, path, raw, ["type", "format", "example"])
  const handles = isRecord(raw.example) ? raw.example.header_handle : undefined
  if (!Array.isArray(handles) || handles.length !== 1 || typeof handles[0] !== "string" || handles[0].trim() === "") {
    report.errors.push(`${path}.example.header_handle: a media header needs one sample: the handle of an uploaded ${format.toLowerCase()}`)
    return undefined
  }
  return { type: "HEADER", format, example: { header_handle: [handles[0]] } }
}

const readTextHeader = (report: Report, path: string, raw: Json): WaTextHeader | undefined => {
  warnIgnored(report, path, raw, ["type", "format", "text", "example"])
  const text = readString(report, `${path}.text`, raw.text, HEADER_TEXT_MAX)
  if (text === undefined) return undefined
  const count = checkPlaceholders(report, `${path}.text`, text)
  if (count === undefined) return undefined
  if (count > HEADER_PLACEHOLDERS_MAX) {
    report.errors.push(`${path}.text: a header takes at most ${HEADER_PLACEHOLDERS_MAX} placeholder (got ${count})`)
    return undefined
  }
  if (count === 0) {
    if (raw.example !== undefined) report.warnings.push(`${path}.example: ignored; the text has no placeholders`)
    return { type: "HEADER", format: "TEXT", text }
  }
  const samples = readSampleList(report, `${path}.example.header_text`, isRecord(raw.example) ? raw.example.header_text : undefined, count)
  return samples === undefined ? undefined : { type: "HEADER", format: "TEXT", text, example: { header_text: samples } }
}

const readHeader = (report: Report, path: string, raw: Json): WaHeader | undefined =>
  upperCase(raw.format) === "TEXT" ? readTextHeader(report, path, raw) : readMediaHeader(report, path, raw, MEDIA_FORMATS)

const readBody = (report: Report, path: string, raw: Json, max: number): WaBody | undefined => {
  warnIgnored(report, path, raw, ["type", "text", "example"])
  const text = readString(report, `${path}.text`, raw.text, max)
  if (text === undefined) return undefined
  const count = checkPlaceholders(report, `${path}.text`, text)
  if (count === undefined) return undefined
  warnBodyShape(report, `${path}.text`, text, count)
  const samples = readBodySamples(report, `${path}.example`, raw.example, count)
  if (count === 0) return { type: "BODY", text }
  return samples === undefined ? undefined : { type: "BODY", text, example: { body_text: [samples] } }
}

const readFooter = (report: Report, path: string, raw: Json): WaFooter | undefined => {
  warnIgnored(report, path, raw, ["type", "text"])
  const text = readString(report, `${path}.text`, raw.text, FOOTER_MAX)
  if (text === undefined) return undefined
  refusePlaceholders(report, `${path}.text`, text, "a footer")
  return tokensOf(text).length > 0 ? undefined : { type: "FOOTER", text }
}

// ---------------------------------------------------------------------------------------------
// Buttons
// ---------------------------------------------------------------------------------------------

const BUTTON_TYPES: ReadonlyArray<WaButtonType> = ["QUICK_REPLY", "URL", "PHONE_NUMBER", "COPY_CODE", "OTP", "ORDER_DETAILS"]
const OTP_TYPES: ReadonlyArray<OtpType> = ["COPY_CODE", "ONE_TAP", "ZERO_TAP"]
const PHONE_PATTERN = /^\+?[0-9]+$/

const readLabel = (report: Report, path: string, value: unknown): string | undefined => {
  const text = readString(report, path, value, BUTTON_TEXT_MAX)
  if (text !== undefined) refusePlaceholders(report, path, text, "a button label")
  return text !== undefined && tokensOf(text).length === 0 ? text : undefined
}

const httpUrlProblem = (value: string): string | undefined => {
  try {
    const url = new URL(value)
    return url.protocol === "http:" || url.protocol === "https:" ? undefined : "must be an http or https URL"
  } catch {
    return "must be an absolute http or https URL"
  }
}

/** A URL takes one placeholder, `{{1}}`, appended at its very end: the send supplies that suffix. */
const readButtonUrl = (report: Report, path: string, raw: Json): { readonly url: string; readonly dynamic: boolean } | undefined => {
  const url = readString(report, `${path}.url`, raw.url, URL_MAX)
  if (url === undefined) return undefined
  const tokens = tokensOf(url)
  const dynamic = tokens.length === 1 && isDynamicUrl(url)
  if (tokens.length > 0 && !dynamic) {
    report.errors.push(`${path}.url: only one placeholder, {{1}}, at the very end of the URL is allowed`)
    return undefined
  }
  const problem = httpUrlProblem(dynamic ? `${url.slice(0, -"{{1}}".length)}x` : url)
  if (problem !== undefined) report.errors.push(`${path}.url: ${problem}`)
  return problem === undefined ? { url, dynamic } : undefined
}

/** Meta's own examples give the sample either as the suffix or as the whole URL; either is passed on. */
const readUrlButton = (report: Report, path: string, raw: Json): WaButton | undefined => {
  warnIgnored(report, path, raw, ["type", "text", "url", "example"])
  const text = readLabel(report, `${path}.text`, raw.text)
  const target = readButtonUrl(report, path, raw)
  if (text === undefined || target === undefined) return undefined
  if (!target.dynamic) {
    if (raw.example !== undefined) report.warnings.push(`${path}.example: ignored; the URL has no placeholder`)
    return { type: "URL", text, url: target.url }
  }
  const example = typeof raw.example === "string" ? [raw.example] : raw.example
  const samples = readSampleList(report, `${path}.example`, example, 1)
  return samples === undefined ? undefined : { type: "URL", text, url: target.url, example: samples }
}

const readPhoneButton = (report: Report, path: string, raw: Json): WaButton | undefined => {
  warnIgnored(report, path, raw, ["type", "text", "phone_number"])
  const text = readLabel(report, `${path}.text`, raw.text)
  const phone = readString(report, `${path}.phone_number`, raw.phone_number, PHONE_NUMBER_MAX)
  if (phone !== undefined && !PHONE_PATTERN.test(phone)) report.errors.push(`${path}.phone_number: digits with country code, + optional`)
  return text === undefined || phone === undefined || !PHONE_PATTERN.test(phone) ? undefined : { type: "PHONE_NUMBER", text, phone_number: phone }
}

/** [coupon] The label is WhatsApp's own ("Copy offer code"); the sample is the code itself. */
const readCopyCodeButton = (report: Report, path: string, raw: Json): WaButton | undefined => {
  warnIgnored(report, path, raw, ["type", "example"])
  const example = readString(report, `${path}.example`, raw.example, CODE_MAX)
  return example === undefined ? undefined : { type: "COPY_CODE", example }
}

const readSupportedApps = (report: Report, path: string, value: unknown): Array<WaSupportedApp> | undefined => {
  if (!Array.isArray(value) || value.length === 0) {
    report.errors.push(`${path}: must be a non-empty list of {package_name, signature_hash}`)
    return undefined
  }
  const apps = value.map((app, i) => {
    const entry = isRecord(app) ? app : {}
    const packageName = readString(report, `${path}[${i}].package_name`, entry.package_name, 224)
    const signatureHash = readString(report, `${path}[${i}].signature_hash`, entry.signature_hash, 64)
    return packageName === undefined || signatureHash === undefined ? undefined : { package_name: packageName, signature_hash: signatureHash }
  })
  return apps.every((a) => a !== undefined) ? (apps as Array<WaSupportedApp>) : undefined
}

/** [auth] One-tap and zero-tap hand the code to an Android app, so they must name it. */
const readOtpApp = (report: Report, path: string, raw: Json) => {
  if (raw.supported_apps !== undefined) {
    const apps = readSupportedApps(report, `${path}.supported_apps`, raw.supported_apps)
    return apps === undefined ? undefined : { supported_apps: apps }
  }
  const packageName = readString(report, `${path}.package_name`, raw.package_name, 224)
  const signatureHash = readString(report, `${path}.signature_hash`, raw.signature_hash, 64)
  return packageName === undefined || signatureHash === undefined ? undefined : { package_name: packageName, signature_hash: signatureHash }
}

const readOtpButton = (report: Report, path: string, raw: Json): WaButton | undefined => {
  warnIgnored(report, path, raw, [
    "type", "otp_type", "text", "autofill_text", "package_name", "signature_hash", "zero_tap_terms_accepted", "supported_apps"
  ])
  const otpType = OTP_TYPES.find((t) => t === upperCase(raw.otp_type))
  if (otpType === undefined) report.errors.push(`${path}.otp_type: must be COPY_CODE, ONE_TAP or ZERO_TAP (got ${shown(raw.otp_type)})`)
  const text = raw.text === undefined ? undefined : readLabel(report, `${path}.text`, raw.text)
  const autofill = readOptionalString(report, `${path}.autofill_text`, raw.autofill_text, BUTTON_TEXT_MAX)
  if (otpType === undefined || otpType === "COPY_CODE") {
    return otpType === undefined ? undefined : { type: "OTP", otp_type: otpType, ...(text !== undefined ? { text } : {}) }
  }
  const app = readOtpApp(report, path, raw)
  if (otpType === "ZERO_TAP" && raw.zero_tap_terms_accepted !== true) {
    report.errors.push(`${path}.zero_tap_terms_accepted: must be true: Meta sends zero-tap codes only once its terms are accepted`)
    return undefined
  }
  return app === undefined ? undefined : {
    type: "OTP",
    otp_type: otpType,
    ...(text !== undefined ? { text } : {}),
    ...(autofill !== undefined ? { autofill_text: autofill } : {}),
    ...app,
    ...(otpType === "ZERO_TAP" ? { zero_tap_terms_accepted: true } : {})
  }
}

const readButton = (report: Report, path: string, raw: unknown): WaButton | undefined => {
  const entry = isRecord(raw) ? raw : {}
  const type = BUTTON_TYPES.find((t) => t === upperCase(entry.type))
  switch (type) {
    case "QUICK_REPLY": {
      warnIgnored(report, path, entry, ["type", "text"])
      const text = readLabel(report, `${path}.text`, entry.text)
      return text === undefined ? undefined : { type, text }
    }
    case "URL":
      return readUrlButton(report, path, entry)
    case "PHONE_NUMBER":
      return readPhoneButton(report, path, entry)
    case "COPY_CODE":
      return readCopyCodeButton(report, path, entry)
    case "OTP":
      return readOtpButton(report, path, entry)
    case "ORDER_DETAILS": {
      warnIgnored(report, path, entry, ["type", "text"])
      const text = readLabel(report, `${path}.text`, entry.text)
      return text === undefined ? undefined : { type, text }
    }
    case undefined:
      report.errors.push(`${path}.type: must be one of ${BUTTON_TYPES.join(", ")} (got ${shown(entry.type)})`)
      return undefined
  }
}

/** Where a button list sits decides which types it may hold. */
type ButtonPlace = { readonly where: "template"; readonly category: TemplateCategory | undefined } | { readonly where: "card" }

const ALLOWED_TYPES: Record<TemplateCategory | "card", ReadonlyArray<WaButtonType>> = {
  MARKETING: ["QUICK_REPLY", "URL", "PHONE_NUMBER", "COPY_CODE", "ORDER_DETAILS"],
  // [coupon] no COPY_CODE; [checkout] order details templates are created as UTILITY.
  UTILITY: ["QUICK_REPLY", "URL", "PHONE_NUMBER", "ORDER_DETAILS"],
  AUTHENTICATION: ["OTP"],
  card: ["QUICK_REPLY", "URL", "PHONE_NUMBER"] // [carousel]
}

const PER_TYPE_MAX: Partial<Record<WaButtonType, number>> = {
  QUICK_REPLY: QUICK_REPLIES_MAX,
  URL: URL_BUTTONS_MAX,
  PHONE_NUMBER: PHONE_BUTTONS_MAX,
  COPY_CODE: 1, // [coupon]
  ORDER_DETAILS: 1, // [checkout]
  OTP: 1 // [auth]
}

const checkButtonTypes = (report: Report, path: string, raws: ReadonlyArray<unknown>, place: ButtonPlace) => {
  if (place.where === "template" && place.category === undefined) return // the category is refused already
  const allowed = ALLOWED_TYPES[place.where === "card" ? "card" : place.category ?? "MARKETING"]
  const where = place.where === "card" ? "a carousel card" : `${article(place.category ?? "")} ${place.category} template`
  raws.forEach((raw, i) => {
    const type = upperCase(isRecord(raw) ? raw.type : undefined)
    if (type !== undefined && (BUTTON_TYPES as ReadonlyArray<string>).includes(type) && !(allowed as ReadonlyArray<string>).includes(type)) {
      report.errors.push(`${path}[${i}].type: ${where} cannot have ${article(type)} ${type} button (allowed: ${allowed.join(", ")})`)
    }
  })
}

/** [components] Quick replies form one run, before or after the others: never QR, URL, QR. */
const quickRepliesGrouped = (types: ReadonlyArray<WaButtonType>): boolean =>
  types.filter((t, i) => i > 0 && (t === "QUICK_REPLY") !== (types[i - 1] === "QUICK_REPLY")).length <= 1

const checkButtonCombination = (report: Report, path: string, buttons: ReadonlyArray<WaButton>) => {
  const types = buttons.map((b) => b.type)
  for (const [type, max] of Object.entries(PER_TYPE_MAX)) {
    const count = types.filter((t) => t === type).length
    if (max !== undefined && count > max) report.errors.push(`${path}: at most ${max} ${type} button${max === 1 ? "" : "s"} (got ${count})`)
  }
  if (!quickRepliesGrouped(types)) {
    report.errors.push(`${path}: quick replies must be grouped together, before or after the other buttons (Meta refuses e.g. QUICK_REPLY, URL, QUICK_REPLY)`)
  }
  if (types.includes("ORDER_DETAILS")) checkCheckoutButtons(report, path, types)
}

/** [checkout] One checkout button, first, then up to 9 quick replies. */
const checkCheckoutButtons = (report: Report, path: string, types: ReadonlyArray<WaButtonType>) => {
  if (types[0] !== "ORDER_DETAILS") report.errors.push(`${path}: the ORDER_DETAILS button must be the first button`)
  const others = types.filter((t) => t !== "ORDER_DETAILS")
  if (others.some((t) => t !== "QUICK_REPLY")) report.errors.push(`${path}: beside an ORDER_DETAILS button only QUICK_REPLY buttons are allowed`)
  if (others.length > CHECKOUT_QUICK_REPLIES_MAX) {
    report.errors.push(`${path}: at most ${CHECKOUT_QUICK_REPLIES_MAX} quick replies beside an ORDER_DETAILS button (got ${others.length})`)
  }
}

const readButtonList = (report: Report, path: string, raw: Json, place: ButtonPlace): WaButtons | undefined => {
  warnIgnored(report, path, raw, ["type", "buttons"])
  const listPath = `${path}.buttons`
  const [min, max] = place.where === "card" ? [CARD_BUTTONS_MIN, CARD_BUTTONS_MAX] : [1, BUTTONS_MAX]
  if (!Array.isArray(raw.buttons) || raw.buttons.length < min || raw.buttons.length > max) {
    const got = Array.isArray(raw.buttons) ? `got ${raw.buttons.length}` : "got none"
    report.errors.push(`${listPath}: ${min} to ${max} buttons ${place.where === "card" ? "per card" : "per template"} (${got})`)
    return undefined
  }
  const before = report.errors.length
  checkButtonTypes(report, listPath, raw.buttons, place)
  const buttons = raw.buttons.map((b, i) => readButton(report, `${listPath}[${i}]`, b))
  if (buttons.some((b) => b === undefined) || report.errors.length > before) return undefined
  const read = buttons as Array<WaButton>
  checkButtonCombination(report, listPath, read)
  return report.errors.length > before ? undefined : { type: "BUTTONS", buttons: read }
}

// ---------------------------------------------------------------------------------------------
// Carousel
// ---------------------------------------------------------------------------------------------

const CARD_MEDIA: ReadonlyArray<MediaFormat> = ["IMAGE", "VIDEO"]

/** A card: exactly one IMAGE or VIDEO header, at most one body, exactly one button list. */
const readCard = (report: Report, path: string, raw: unknown): WaCard | undefined => {
  const card = isRecord(raw) ? raw : {}
  if (!Array.isArray(card.components)) {
    report.errors.push(`${path}.components: must be a list of HEADER, BODY and BUTTONS components`)
    return undefined
  }
  warnIgnored(report, path, card, ["components"])
  const before = report.errors.length
  const components = card.components.map((c, i) => readCardComponent(report, `${path}.components[${i}]`, c))
  const types = card.components.map((c) => upperCase(isRecord(c) ? c.type : undefined))
  for (const [type, min, max] of [["HEADER", 1, 1], ["BODY", 0, 1], ["BUTTONS", 1, 1]] as const) {
    const count = types.filter((t) => t === type).length
    if (count < min || count > max) report.errors.push(`${path}.components: ${min === max ? "exactly one" : "at most one"} ${type} per card (got ${count})`)
  }
  return report.errors.length > before ? undefined : { components: components as Array<WaMediaHeader | WaBody | WaButtons> }
}

const readCardComponent = (report: Report, path: string, raw: unknown): WaMediaHeader | WaBody | WaButtons | undefined => {
  const component = isRecord(raw) ? raw : {}
  switch (upperCase(component.type)) {
    case "HEADER":
      return readMediaHeader(report, path, component, CARD_MEDIA)
    case "BODY":
      return readBody(report, path, component, CARD_BODY_MAX)
    case "BUTTONS":
      return readButtonList(report, path, component, { where: "card" })
    default:
      report.errors.push(`${path}.type: a card holds HEADER, BODY and BUTTONS components (got ${shown(component.type)})`)
      return undefined
  }
}

const cardHeader = (card: WaCard) => card.components.find((c): c is WaMediaHeader => c.type === "HEADER")
const cardButtons = (card: WaCard) => card.components.find((c): c is WaButtons => c.type === "BUTTONS")?.buttons ?? []
const componentIndex = (card: WaCard, type: string) => card.components.findIndex((c) => c.type === type)

/** [carousel] "All cards defined on a template must have the same components." */
const checkCardsAlike = (report: Report, path: string, cards: ReadonlyArray<WaCard>) => {
  const [first, ...rest] = cards
  if (first === undefined) return
  const format = cardHeader(first)?.format
  const hasBody = componentIndex(first, "BODY") >= 0
  const buttons = cardButtons(first).map((b) => b.type).join(", ")
  rest.forEach((card, n) => {
    const at = `${path}[${n + 1}]`
    const other = cardHeader(card)?.format
    if (other !== format) {
      report.errors.push(`${at}.components[${componentIndex(card, "HEADER")}].format: every card needs the same header format as card 0 (${format}); got ${other}`)
    }
    if ((componentIndex(card, "BODY") >= 0) !== hasBody) {
      report.errors.push(`${at}.components: ${hasBody ? "card 0 has a body, so every card needs one" : "card 0 has no body, so no card may have one"}`)
    }
    const otherButtons = cardButtons(card).map((b) => b.type).join(", ")
    if (otherButtons !== buttons) {
      report.errors.push(`${at}.components[${componentIndex(card, "BUTTONS")}].buttons: every card needs the same buttons, in the same order, as card 0 (${buttons}); got ${otherButtons}`)
    }
  })
}

const readCarousel = (report: Report, path: string, raw: Json): WaCarousel | undefined => {
  warnIgnored(report, path, raw, ["type", "cards"])
  const raws = Array.isArray(raw.cards) ? raw.cards : []
  if (raws.length < CAROUSEL_CARDS_MIN || raws.length > CAROUSEL_CARDS_MAX) {
    report.errors.push(`${path}.cards: a carousel needs ${CAROUSEL_CARDS_MIN} to ${CAROUSEL_CARDS_MAX} cards (got ${raws.length})`)
    return undefined
  }
  const cards = raws.map((card, i) => readCard(report, `${path}.cards[${i}]`, card))
  if (cards.some((c) => c === undefined)) return undefined
  const before = report.errors.length
  checkCardsAlike(report, `${path}.cards`, cards as Array<WaCard>)
  return report.errors.length > before ? undefined : { type: "CAROUSEL", cards: cards as Array<WaCard> }
}

// ---------------------------------------------------------------------------------------------
// Authentication components
// ---------------------------------------------------------------------------------------------

/** [auth] Meta writes the body itself: the template only chooses whether to add the security line. */
const readAuthBody = (report: Report, path: string, raw: Json): WaAuthBody | undefined => {
  if (raw.text !== undefined || raw.example !== undefined) {
    report.errors.push(`${path}: an authentication body has no text of its own (Meta writes "{{1}} is your verification code."); use add_security_recommendation`)
    return undefined
  }
  warnIgnored(report, path, raw, ["type", "add_security_recommendation"])
  const add = raw.add_security_recommendation
  if (add !== undefined && typeof add !== "boolean") {
    report.errors.push(`${path}.add_security_recommendation: must be true or false`)
    return undefined
  }
  return { type: "BODY", ...(add !== undefined ? { add_security_recommendation: add } : {}) }
}

const readAuthFooter = (report: Report, path: string, raw: Json): WaAuthFooter | undefined => {
  if (raw.text !== undefined) {
    report.errors.push(`${path}.text: an authentication footer has no text of its own; use code_expiration_minutes`)
    return undefined
  }
  warnIgnored(report, path, raw, ["type", "code_expiration_minutes"])
  const minutes = raw.code_expiration_minutes
  if (minutes === undefined) return { type: "FOOTER" }
  if (!Number.isInteger(minutes) || (minutes as number) < CODE_EXPIRATION_MINUTES_MIN || (minutes as number) > CODE_EXPIRATION_MINUTES_MAX) {
    report.errors.push(
      `${path}.code_expiration_minutes: must be a whole number from ${CODE_EXPIRATION_MINUTES_MIN} to ${CODE_EXPIRATION_MINUTES_MAX} (got ${shown(minutes)})`
    )
    return undefined
  }
  return { type: "FOOTER", code_expiration_minutes: minutes as number }
}

// ---------------------------------------------------------------------------------------------
// Components: structure per category
// ---------------------------------------------------------------------------------------------

const COMPONENT_TYPES = ["HEADER", "BODY", "FOOTER", "BUTTONS", "CAROUSEL"] as const
type ComponentType = (typeof COMPONENT_TYPES)[number]

interface Raw {
  readonly path: string
  readonly type: ComponentType
  readonly raw: Json
}

/** Which components a template of this shape may hold, and how many of each (min, max). */
const STRUCTURE: Record<"standard" | "carousel" | "auth", Record<ComponentType, readonly [number, number]>> = {
  standard: { HEADER: [0, 1], BODY: [1, 1], FOOTER: [0, 1], BUTTONS: [0, 1], CAROUSEL: [0, 0] },
  // [carousel] the message body above the cards, nothing else outside them.
  carousel: { HEADER: [0, 0], BODY: [1, 1], FOOTER: [0, 0], BUTTONS: [0, 0], CAROUSEL: [1, 1] },
  // [auth] no header; the OTP button is required.
  auth: { HEADER: [0, 0], BODY: [1, 1], FOOTER: [0, 1], BUTTONS: [1, 1], CAROUSEL: [0, 0] }
}

const checkStructure = (report: Report, shape: keyof typeof STRUCTURE, raws: ReadonlyArray<Raw>) => {
  const what = shape === "carousel" ? "a carousel template" : shape === "auth" ? "an authentication template" : "a template"
  for (const type of COMPONENT_TYPES) {
    const [min, max] = STRUCTURE[shape][type]
    const count = raws.filter((r) => r.type === type).length
    if (max === 0 && count > 0) report.errors.push(`components: ${what} cannot have a ${type} component`)
    else if (count < min || count > max) {
      report.errors.push(`components: ${what} needs ${min === max ? `exactly ${min}` : `at most ${max}`} ${type} component${max === 1 ? "" : "s"} (got ${count})`)
    }
  }
}

const listComponents = (report: Report, value: unknown): Array<Raw> | undefined => {
  if (!Array.isArray(value) || value.length === 0) {
    report.errors.push("components: must be a non-empty list of components")
    return undefined
  }
  const raws = value.map((raw, i): Raw | undefined => {
    const path = `components[${i}]`
    const type = COMPONENT_TYPES.find((t) => t === upperCase(isRecord(raw) ? raw.type : undefined))
    if (type === undefined || !isRecord(raw)) {
      report.errors.push(`${path}.type: must be HEADER, BODY, FOOTER, BUTTONS or CAROUSEL (got ${shown(isRecord(raw) ? raw.type : raw)})`)
      return undefined
    }
    return { path, type, raw }
  })
  return raws.every((r) => r !== undefined) ? (raws as Array<Raw>) : undefined
}

const readStandard = (report: Report, { path, type, raw }: Raw, category: TemplateCategory | undefined): WaComponent | undefined => {
  switch (type) {
    case "HEADER":
      return readHeader(report, path, raw)
    case "BODY":
      return readBody(report, path, raw, BODY_MAX)
    case "FOOTER":
      return readFooter(report, path, raw)
    case "BUTTONS":
      return readButtonList(report, path, raw, { where: "template", category })
    case "CAROUSEL":
      return readCarousel(report, path, raw)
  }
}

const readAuth = (report: Report, { path, type, raw }: Raw): WaComponent | undefined => {
  switch (type) {
    case "BODY":
      return readAuthBody(report, path, raw)
    case "FOOTER":
      return readAuthFooter(report, path, raw)
    case "BUTTONS":
      return readButtonList(report, path, raw, { where: "template", category: "AUTHENTICATION" })
    default:
      return undefined // refused by checkStructure
  }
}

const readComponents = (report: Report, value: unknown, category: TemplateCategory | undefined): Array<WaComponent> | undefined => {
  const raws = listComponents(report, value)
  if (raws === undefined) return undefined
  const shape = category === "AUTHENTICATION" ? "auth" : raws.some((r) => r.type === "CAROUSEL") ? "carousel" : "standard"
  const before = report.errors.length
  checkStructure(report, shape, raws)
  if (shape === "carousel" && category !== undefined && category !== "MARKETING") {
    report.errors.push(`category: a carousel template must be MARKETING (Meta offers media card carousels for marketing templates only)`)
  }
  // Every component is read even when the structure is wrong, so one answer names every problem.
  const components = raws.map((r) => (shape === "auth" ? readAuth(report, r) : readStandard(report, r, category)))
  return report.errors.length > before || components.some((c) => c === undefined) ? undefined : (components as Array<WaComponent>)
}

// ---------------------------------------------------------------------------------------------
// The template as a whole
// ---------------------------------------------------------------------------------------------

export const buttonsOf = (components: ReadonlyArray<{ readonly type: string }>): ReadonlyArray<WaButton> =>
  components.flatMap((c) => (c.type === "BUTTONS" ? (c as WaButtons).buttons : []))

export const isMediaHeader = (component: { readonly type: string }): component is WaMediaHeader =>
  component.type === "HEADER" && (component as WaHeader).format !== "TEXT"

/** The kind the contract names, by what sets a template apart first: its carousel, category, checkout, dynamic URL, media. */
export const templateKindOf = (template: WaTemplateDefinition): TemplateKind => {
  const buttons = buttonsOf(template.components)
  if (template.components.some((c) => c.type === "CAROUSEL")) return "carousel"
  if (template.category === "AUTHENTICATION") return "auth"
  if (buttons.some((b) => b.type === "ORDER_DETAILS")) return "order_details"
  if (buttons.some((b) => b.type === "URL" && isDynamicUrl(b.url))) return "dynamic_cta"
  if (template.components.some(isMediaHeader)) return "media"
  return "text"
}

/** Words that make Meta's review recategorise a UTILITY template as MARKETING (its category guidelines). */
const MARKETING_WORDS = /\b(offer|offers|discount|sale|promo|promotion|coupon|deal|deals|cashback|shop now|buy now|limited time|exclusive|free gift|\d+\s?% off)\b/gi

const warnMarketingUtility = (report: Report, template: WaTemplateDefinition) => {
  if (template.category !== "UTILITY") return
  const text = template.components.map((c) => ("text" in c ? c.text : "")).join(" ")
  const found = [...new Set([...text.matchAll(MARKETING_WORDS)].map((m) => m[0].toLowerCase()))]
  if (found.length > 0) {
    report.warnings.push(`category: this UTILITY template reads like marketing (${found.map((w) => `"${w}"`).join(", ")}); Meta may recategorise it as MARKETING, which is billed as marketing`)
  }
}

/** Every limit a template creation body breaks (errors block it; warnings inform), and the template to store when none does. */
export const checkTemplate = (body: unknown): TemplateCheck => {
  const report: Report = { errors: [], warnings: [] }
  if (!isRecord(body)) return { errors: ["body: must be an object with name, language, category and components"], warnings: [] }
  warnIgnored(report, "", body, ["name", "language", "category", "components"])
  const name = readName(report, body.name)
  const language = readLanguage(report, body.language)
  const category = readCategory(report, body.category)
  const components = readComponents(report, body.components, category)
  if (report.errors.length > 0 || name === undefined || language === undefined || category === undefined || components === undefined) {
    return { errors: report.errors, warnings: report.warnings }
  }
  const template: WaTemplateDefinition = { name, language, category, components }
  warnMarketingUtility(report, template)
  return { errors: [], warnings: report.warnings, kind: templateKindOf(template), template }
}
