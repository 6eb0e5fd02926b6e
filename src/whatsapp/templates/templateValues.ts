import { FieldIssue } from "../../domain/errors.ts"
import {
  BODY_MAX,
  buttonsOf,
  CARD_BODY_MAX,
  CODE_MAX,
  HEADER_TEXT_MAX,
  isDynamicUrl,
  placeholderCount,
  renderPlaceholders,
  templateKindOf,
  type TemplateKind,
  URL_MAX,
  type WaAuthBody,
  type WaBody,
  type WaButton,
  type WaButtonType,
  type WaCarousel,
  type WaHeader,
  type WaTemplateDefinition
} from "./templateRules.ts"

/**
 * What a send of an APPROVED template needs (shared/design/whatsapp.md, POST /api/v1/public/message,
 * type Template) and the Cloud API `template` object built from it. The send's data follows
 * Interakt's shape; the built object follows Meta's send format (Meta, "Send message templates",
 * the TemplateObject of vendor/meta/whatsapp-business-messaging-api_v23.0.yaml, and for each kind:
 * authentication, coupon code, media card carousel and checkout button templates).
 *
 * Bracketed tags ([carousel], [checkout]) name the sources listed at the top of templateRules.ts.
 *
 * Value limits: Meta's parameter text has no limit of its own but counts against its component's
 * (body 1024, card body 160, header 60, URL 2000: the text as it will read must fit), and may hold
 * no new line, tab or more than 4 consecutive spaces (Meta error 132018). Codes, coupon and
 * one-time alike, are at most 15 characters.
 */

export type HeaderPlaceholder =
  | { readonly type: "none" }
  | { readonly type: "text"; readonly count: number }
  | { readonly type: "media"; readonly format: "image" | "video" | "document" }

export interface ButtonPlaceholder {
  /** The button's position, the key of its values in `buttonValues`. */
  readonly index: number
  readonly type: WaButtonType
  /**
   * How many values a send gives it: none (phone, static URL, order details, whose values come in
   * `orderDetails`), optional (a quick reply's payload; an OTP button's code, the body's code by
   * default), or exactly one (a URL ending in `{{1}}`, a copy-code coupon).
   */
  readonly values: "none" | "optional" | "one"
}

export interface SectionPlaceholders {
  readonly header: HeaderPlaceholder
  /** Body values asked for: an authentication template's one is the code. */
  readonly body: number
  readonly buttons: ReadonlyArray<ButtonPlaceholder>
}

export interface TemplatePlaceholders extends SectionPlaceholders {
  readonly kind: TemplateKind
  /** One entry per carousel card, in order; empty for any other kind. */
  readonly cards: ReadonlyArray<SectionPlaceholders>
  /** The template has an ORDER_DETAILS button, so a send needs `orderDetails`. */
  readonly orderDetails: boolean
}

export interface TemplateSendOptions {
  readonly allowHttpMedia: boolean
}

export type TemplateSend = { readonly object: Record<string, unknown> } | { readonly issues: ReadonlyArray<FieldIssue> }

// ---------------------------------------------------------------------------------------------
// Placeholders of a stored definition
// ---------------------------------------------------------------------------------------------

/** A header, body and buttons: the template's own, or one carousel card's. */
interface Section {
  readonly header: WaHeader | undefined
  readonly body: WaBody | WaAuthBody | undefined
  readonly buttons: ReadonlyArray<WaButton>
  readonly bodyMax: number
  readonly auth: boolean
}

const sectionOf = (components: ReadonlyArray<{ readonly type: string }>, bodyMax: number, auth: boolean): Section => ({
  header: components.find((c): c is WaHeader => c.type === "HEADER"),
  body: components.find((c): c is WaBody | WaAuthBody => c.type === "BODY"),
  buttons: buttonsOf(components),
  bodyMax,
  auth
})

const carouselOf = (template: WaTemplateDefinition) => template.components.find((c): c is WaCarousel => c.type === "CAROUSEL")

const bodyText = (section: Section): string | undefined => (section.body !== undefined && "text" in section.body ? section.body.text : undefined)

const headerPlaceholder = (header: WaHeader | undefined): HeaderPlaceholder => {
  if (header === undefined) return { type: "none" }
  if (header.format === "TEXT") return { type: "text", count: placeholderCount(header.text) }
  return { type: "media", format: header.format === "IMAGE" ? "image" : header.format === "VIDEO" ? "video" : "document" }
}

const buttonValues = (button: WaButton): ButtonPlaceholder["values"] => {
  switch (button.type) {
    case "QUICK_REPLY":
    case "OTP":
      return "optional"
    case "URL":
      return isDynamicUrl(button.url) ? "one" : "none"
    case "COPY_CODE":
      return "one"
    case "PHONE_NUMBER":
    case "ORDER_DETAILS":
      return "none"
  }
}

const sectionPlaceholders = (section: Section): SectionPlaceholders => {
  const text = bodyText(section)
  return {
    header: headerPlaceholder(section.header),
    body: section.auth ? 1 : text === undefined ? 0 : placeholderCount(text),
    buttons: section.buttons.map((button, index) => ({ index, type: button.type, values: buttonValues(button) }))
  }
}

const topSection = (template: WaTemplateDefinition): Section =>
  sectionOf(template.components, BODY_MAX, template.category === "AUTHENTICATION")

const cardSections = (template: WaTemplateDefinition): ReadonlyArray<Section> =>
  carouselOf(template)?.cards.map((card) => sectionOf(card.components, CARD_BODY_MAX, false)) ?? []

/** The placeholders a template asks for, counted from its stored definition. */
export const placeholdersOf = (template: WaTemplateDefinition): TemplatePlaceholders => ({
  kind: templateKindOf(template),
  ...sectionPlaceholders(topSection(template)),
  cards: cardSections(template).map(sectionPlaceholders),
  orderDetails: buttonsOf(template.components).some((b) => b.type === "ORDER_DETAILS")
})

// ---------------------------------------------------------------------------------------------
// Reading values
// ---------------------------------------------------------------------------------------------

type Json = Record<string, unknown>
type Issues = Array<FieldIssue>

const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

const characters = (value: string): number => [...value].length

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

const flag = (issues: Issues, path: string, message: string) => {
  issues.push(new FieldIssue({ path, message }))
}

/** A value list as given: absent is empty; anything but a list is an issue (undefined). */
const readList = (issues: Issues, path: string, value: unknown): ReadonlyArray<unknown> | undefined => {
  if (value === undefined || value === null) return []
  if (Array.isArray(value)) return value
  flag(issues, path, "must be a list of strings")
  return undefined
}

/** Meta refuses parameter text with new lines, tabs or more than 4 consecutive spaces (132018). */
const textProblem = (value: unknown): string | undefined => {
  if (typeof value !== "string") return "must be a string"
  if (value.trim() === "") return "must not be empty"
  if (/[\n\r\t]/.test(value)) return "must not contain new lines or tabs"
  if (/ {5,}/.test(value)) return "must not contain more than 4 consecutive spaces"
  return undefined
}

const readTexts = (issues: Issues, path: string, values: ReadonlyArray<unknown>): ReadonlyArray<string> | undefined => {
  const problems = values.map(textProblem)
  problems.forEach((problem, i) => problem !== undefined && flag(issues, `${path}[${i}]`, problem))
  return problems.every((p) => p === undefined) ? (values as ReadonlyArray<string>) : undefined
}

const readText = (issues: Issues, path: string, value: unknown, max?: number): string | undefined => {
  const problem = textProblem(value) ?? (max !== undefined && characters(value as string) > max ? `must be at most ${max} characters (got ${characters(value as string)})` : undefined)
  if (problem !== undefined) flag(issues, path, problem)
  return problem === undefined ? (value as string) : undefined
}

const readMediaUrl = (issues: Issues, path: string, value: unknown, options: TemplateSendOptions): string | undefined => {
  const wanted = options.allowHttpMedia ? "must be an http or https URL" : "must be an https URL"
  let url: URL | undefined
  try {
    url = typeof value === "string" ? new URL(value) : undefined
  } catch {
    url = undefined
  }
  const ok = url !== undefined && (url.protocol === "https:" || (options.allowHttpMedia && url.protocol === "http:"))
  if (!ok) flag(issues, path, wanted)
  return ok ? (value as string) : undefined
}

/** What the recipient will read must fit the component's own limit. */
const checkRendered = (issues: Issues, path: string, what: string, text: string, values: ReadonlyArray<string>, max: number) => {
  const length = characters(renderPlaceholders(text, values))
  if (length > max) flag(issues, path, `the ${what} with these values is ${length} characters; Meta allows at most ${max}`)
}

const textParameters = (texts: ReadonlyArray<string>) => texts.map((text) => ({ type: "text", text }))

// ---------------------------------------------------------------------------------------------
// Header, body, buttons of one section
// ---------------------------------------------------------------------------------------------

interface Given {
  /** `data`, or `data.carouselCards[i]`: where the values were read, for the issues' paths. */
  readonly path: string
  readonly raw: Json
}

const headerComponents = (issues: Issues, given: Given, header: WaHeader | undefined, options: TemplateSendOptions): Array<Json> => {
  const path = `${given.path}.headerValues`
  const values = readList(issues, path, given.raw.headerValues)
  if (values === undefined) return []
  if (header === undefined) {
    if (values.length > 0) flag(issues, path, `the template has no header; got ${plural(values.length, "value")}`)
    return []
  }
  if (header.format !== "TEXT") {
    const format = header.format.toLowerCase()
    if (values.length !== 1) {
      flag(issues, path, `the template's ${format} header takes one value, the media URL; got ${values.length}`)
      return []
    }
    const link = readMediaUrl(issues, `${path}[0]`, values[0], options)
    return link === undefined ? [] : [{ type: "header", parameters: [{ type: format, [format]: { link } }] }]
  }
  const count = placeholderCount(header.text)
  if (values.length !== count) {
    flag(issues, path, `the template's header has ${plural(count, "placeholder")}; got ${values.length}`)
    return []
  }
  const texts = readTexts(issues, path, values)
  if (texts === undefined || count === 0) return []
  checkRendered(issues, path, "header", header.text, texts, HEADER_TEXT_MAX)
  return [{ type: "header", parameters: textParameters(texts) }]
}

/** The body's components, and the texts given (an authentication template's one is the code). */
const bodyComponents = (issues: Issues, given: Given, section: Section): { readonly components: Array<Json>; readonly texts: ReadonlyArray<string> } => {
  const path = `${given.path}.bodyValues`
  const values = readList(issues, path, given.raw.bodyValues)
  const text = bodyText(section)
  const count = section.auth ? 1 : text === undefined ? 0 : placeholderCount(text)
  if (values === undefined) return { components: [], texts: [] }
  if (values.length !== count) {
    const expected = section.auth ? "an authentication template takes the code as its one body value" : `the template's body has ${plural(count, "placeholder")}`
    flag(issues, path, `${expected}; got ${values.length}`)
    return { components: [], texts: [] }
  }
  const texts = section.auth ? [readText(issues, `${path}[0]`, values[0], CODE_MAX)] : readTexts(issues, path, values)
  if (texts === undefined || texts.some((t) => t === undefined) || count === 0) return { components: [], texts: [] }
  const read = texts as ReadonlyArray<string>
  if (text !== undefined) checkRendered(issues, path, "body", text, read, section.bodyMax)
  return { components: [{ type: "body", parameters: textParameters(read) }], texts: read }
}

/**
 * `buttonValues` as given: index → values. Keys that are no index, and lists that are no list, are
 * issues; the latter are kept as "invalid" so their button is not also told it lacks values.
 */
const readButtonValues = (issues: Issues, path: string, value: unknown, buttons: number): Map<number, ReadonlyArray<unknown> | "invalid"> => {
  const given = new Map<number, ReadonlyArray<unknown> | "invalid">()
  if (value === undefined || value === null) return given
  if (!isRecord(value)) {
    flag(issues, path, `must be an object from button index to its values, such as {"0": ["ABC123"]}`)
    return given
  }
  for (const [key, values] of Object.entries(value)) {
    const index = /^(0|[1-9][0-9]*)$/.test(key) ? Number(key) : undefined
    if (index === undefined || index >= buttons) {
      flag(issues, `${path}.${key}`, index === undefined ? "button indexes are 0, 1, 2, …" : `the template has no button at index ${key}`)
    } else if (!Array.isArray(values)) {
      flag(issues, `${path}.${key}`, "must be a list of strings")
      given.set(index, "invalid")
    } else given.set(index, values)
  }
  return given
}

interface ButtonContext {
  readonly code: string | undefined
  readonly orderDetails: Json | undefined
}

const buttonComponent = (index: number, subType: string, parameters: ReadonlyArray<Json>): Json => ({
  type: "button",
  sub_type: subType,
  index: String(index),
  parameters
})

const countProblem = (button: WaButton, index: number, values: ReadonlyArray<unknown>): string | undefined => {
  const wanted = buttonValues(button)
  const what = `the ${button.type} button at index ${index}`
  if (wanted === "none" && values.length > 0) {
    const where = button.type === "ORDER_DETAILS" ? "; its order goes in data.orderDetails" : ""
    return `${what} takes no values${where}; got ${values.length}`
  }
  if (wanted === "one" && values.length !== 1) return `${what} takes one value; got ${values.length}`
  if (wanted === "optional" && values.length > 1) return `${what} takes at most one value; got ${values.length}`
  return undefined
}

const urlButton = (issues: Issues, path: string, button: Extract<WaButton, { type: "URL" }>, index: number, value: unknown): Array<Json> => {
  const suffix = readText(issues, `${path}[0]`, value)
  if (suffix === undefined) return []
  checkRendered(issues, path, "URL", button.url, [suffix], URL_MAX)
  return [buttonComponent(index, "url", [{ type: "text", text: suffix }])]
}

const buildButton = (issues: Issues, path: string, button: WaButton, index: number, values: ReadonlyArray<unknown>, context: ButtonContext): Array<Json> => {
  switch (button.type) {
    case "QUICK_REPLY": {
      if (values.length === 0) return []
      const payload = typeof values[0] === "string" && values[0] !== "" ? values[0] : undefined
      if (payload === undefined) flag(issues, `${path}[0]`, "must be a non-empty string")
      return payload === undefined ? [] : [buttonComponent(index, "quick_reply", [{ type: "payload", payload }])]
    }
    case "URL":
      return isDynamicUrl(button.url) ? urlButton(issues, path, button, index, values[0]) : []
    case "COPY_CODE": {
      const coupon = readText(issues, `${path}[0]`, values[0], CODE_MAX)
      return coupon === undefined ? [] : [buttonComponent(index, "copy_code", [{ type: "coupon_code", coupon_code: coupon }])]
    }
    case "OTP": {
      // Meta's authentication send repeats the code in the OTP button, which it turned into a URL button.
      const code = values.length > 0 ? readText(issues, `${path}[0]`, values[0], CODE_MAX) : context.code
      return code === undefined ? [] : [buttonComponent(index, "url", [{ type: "text", text: code }])]
    }
    case "ORDER_DETAILS":
      return context.orderDetails === undefined ? [] : [buttonComponent(index, "order_details", [{ type: "action", action: { order_details: context.orderDetails } }])]
    case "PHONE_NUMBER":
      return []
  }
}

const buttonComponents = (issues: Issues, given: Given, section: Section, context: ButtonContext): Array<Json> => {
  const path = `${given.path}.buttonValues`
  const values = readButtonValues(issues, path, given.raw.buttonValues, section.buttons.length)
  return section.buttons.flatMap((button, index) => {
    const own = values.get(index) ?? []
    if (own === "invalid") return []
    const problem = countProblem(button, index, own)
    if (problem !== undefined) flag(issues, `${path}.${index}`, problem)
    return problem === undefined ? buildButton(issues, `${path}.${index}`, button, index, own, context) : []
  })
}

const sectionComponents = (issues: Issues, given: Given, section: Section, options: TemplateSendOptions, orderDetails: Json | undefined) => {
  const header = headerComponents(issues, given, section.header, options)
  const body = bodyComponents(issues, given, section)
  const buttons = buttonComponents(issues, given, section, { code: section.auth ? body.texts[0] : undefined, orderDetails })
  return { header, body: body.components, buttons }
}

// ---------------------------------------------------------------------------------------------
// Carousel
// ---------------------------------------------------------------------------------------------

/** [carousel] A send carries exactly the template's cards, each with its own media and values. */
const carouselComponents = (issues: Issues, template: WaTemplateDefinition, data: Json, options: TemplateSendOptions): Array<Json> => {
  const path = "data.carouselCards"
  const carousel = carouselOf(template)
  const raw = data.carouselCards
  if (carousel === undefined) {
    if (raw !== undefined && raw !== null && !(Array.isArray(raw) && raw.length === 0)) flag(issues, path, "the template has no carousel")
    return []
  }
  const sections = cardSections(template)
  if (!Array.isArray(raw) || raw.length !== sections.length) {
    flag(issues, path, `the template has ${plural(sections.length, "card")}; got ${Array.isArray(raw) ? raw.length : 0}`)
    return []
  }
  const cards = sections.map((section, i) => {
    const cardPath = `${path}[${i}]`
    const given = raw[i]
    if (!isRecord(given)) {
      flag(issues, cardPath, "must be an object with headerValues, bodyValues and buttonValues")
      return { card_index: i, components: [] }
    }
    const parts = sectionComponents(issues, { path: cardPath, raw: given }, section, options, undefined)
    return { card_index: i, components: [...parts.header, ...parts.body, ...parts.buttons] }
  })
  return [{ type: "carousel", cards }]
}

// ---------------------------------------------------------------------------------------------
// Order details
// ---------------------------------------------------------------------------------------------

/**
 * [checkout] Meta's order_details object (payments-in "Send order details template message" and
 * "Checkout button templates"). Herald checks what a payment cannot go without and what must add up;
 * the rest (type, payment_settings, shipping_info, importer fields…) passes through to Meta as given.
 */
const REFERENCE_ID = /^[A-Za-z0-9_.-]{1,35}$/
const PRODUCT_TYPES = ["digital-goods", "physical-goods"]
const ITEM_NAME_MAX = 60
const ITEM_QUANTITY_MAX = 100

interface Amount {
  readonly value: number
  readonly offset: number
}

/** An amount is `value / offset` (₹12.99 = {value: 1299, offset: 100}); compared exactly, as fractions. */
type Fraction = readonly [bigint, bigint]
const fraction = (amount: Amount): Fraction => [BigInt(amount.value), BigInt(amount.offset)]
const sum = (fractions: ReadonlyArray<Fraction>): Fraction =>
  fractions.reduce<Fraction>(([an, ad], [bn, bd]) => [an * bd + bn * ad, ad * bd], [0n, 1n])
const equal = ([an, ad]: Fraction, [bn, bd]: Fraction) => an * bd === bn * ad
const shownFraction = ([n, d]: Fraction) => (Number(n) / Number(d)).toFixed(2)

const readAmount = (issues: Issues, path: string, value: unknown, required: boolean): Amount | undefined => {
  if (value === undefined && !required) return undefined
  const amount = isRecord(value) ? value : {}
  const ok = Number.isInteger(amount.value) && (amount.value as number) >= 0 && Number.isInteger(amount.offset) && (amount.offset as number) > 0
  if (!ok) flag(issues, path, "must be {value, offset}: whole numbers, value ≥ 0 and offset > 0 (₹12.99 is {value: 1299, offset: 100})")
  return ok ? { value: amount.value as number, offset: amount.offset as number } : undefined
}

const readItem = (issues: Issues, path: string, value: unknown): Fraction | undefined => {
  const item = isRecord(value) ? value : {}
  const before = issues.length
  if (typeof item.name !== "string" || item.name.trim() === "" || characters(item.name) > ITEM_NAME_MAX) {
    flag(issues, `${path}.name`, `must be 1 to ${ITEM_NAME_MAX} characters`)
  }
  const amount = readAmount(issues, `${path}.amount`, item.amount, true)
  const sale = readAmount(issues, `${path}.sale_amount`, item.sale_amount, false)
  const quantity = item.quantity
  if (!Number.isInteger(quantity) || (quantity as number) < 1 || (quantity as number) > ITEM_QUANTITY_MAX) {
    flag(issues, `${path}.quantity`, `must be a whole number from 1 to ${ITEM_QUANTITY_MAX}`)
  }
  if (issues.length > before || amount === undefined) return undefined
  // Meta's subtotal counts the sale price where there is one (its example: amount 2000, sale 1500, subtotal 1500).
  const [n, d] = fraction(sale ?? amount)
  return [n * BigInt(quantity as number), d]
}

const readOrder = (issues: Issues, path: string, value: unknown): Fraction | undefined => {
  if (!isRecord(value)) {
    flag(issues, path, "is required: {status, items, subtotal, shipping?, tax?, discount?}")
    return undefined
  }
  if (value.status !== "pending") flag(issues, `${path}.status`, `must be "pending": a new order starts pending`)
  const items = Array.isArray(value.items) ? value.items : []
  if (items.length === 0) flag(issues, `${path}.items`, "must be a non-empty list of {name, amount, quantity}")
  const prices = items.map((item, i) => readItem(issues, `${path}.items[${i}]`, item))
  const subtotal = readAmount(issues, `${path}.subtotal`, value.subtotal, true)
  const extras = (["shipping", "tax"] as const).map((key) => readAmount(issues, `${path}.${key}`, value[key], false))
  const discount = readAmount(issues, `${path}.discount`, value.discount, false)
  if (subtotal === undefined || items.length === 0 || prices.some((p) => p === undefined)) return undefined
  const expected = sum(prices as ReadonlyArray<Fraction>)
  if (!equal(expected, fraction(subtotal))) {
    flag(issues, `${path}.subtotal`, `must be the items' prices times their quantities (${shownFraction(expected)}); got ${shownFraction(fraction(subtotal))}`)
    return undefined
  }
  const [dn, dd] = discount === undefined ? [0n, 1n] : fraction(discount)
  return sum([fraction(subtotal), ...extras.flatMap((e) => (e === undefined ? [] : [fraction(e)])), [-dn, dd]])
}

const checkOrderDetails = (issues: Issues, path: string, value: unknown): Json | undefined => {
  if (!isRecord(value)) {
    flag(issues, path, "is required: the template has an ORDER_DETAILS button ({reference_id, currency, total_amount, order})")
    return undefined
  }
  const before = issues.length
  if (typeof value.reference_id !== "string" || !REFERENCE_ID.test(value.reference_id)) {
    flag(issues, `${path}.reference_id`, "must be 1 to 35 English letters, digits, underscores, dashes or dots, unique per order")
  }
  if (value.currency !== "INR") flag(issues, `${path}.currency`, `must be "INR": WhatsApp order details are India payments`)
  if (value.type !== undefined && !PRODUCT_TYPES.includes(value.type as string)) flag(issues, `${path}.type`, `must be ${PRODUCT_TYPES.join(" or ")}`)
  const total = readAmount(issues, `${path}.total_amount`, value.total_amount, true)
  const expected = readOrder(issues, `${path}.order`, value.order)
  if (total !== undefined && expected !== undefined && !equal(expected, fraction(total))) {
    flag(issues, `${path}.total_amount`, `must be subtotal + shipping + tax - discount (${shownFraction(expected)}); got ${shownFraction(fraction(total))}`)
  }
  return issues.length > before ? undefined : structuredClone(value)
}

const readOrderDetails = (issues: Issues, template: WaTemplateDefinition, data: Json): Json | undefined => {
  const path = "data.orderDetails"
  if (buttonsOf(template.components).some((b) => b.type === "ORDER_DETAILS")) return checkOrderDetails(issues, path, data.orderDetails)
  if (data.orderDetails !== undefined && data.orderDetails !== null) flag(issues, path, "the template has no ORDER_DETAILS button")
  return undefined
}

// ---------------------------------------------------------------------------------------------
// The send
// ---------------------------------------------------------------------------------------------

/** The caller found the template by these; a mismatch means the wrong definition was handed in. */
const checkIdentity = (issues: Issues, template: WaTemplateDefinition, data: Json) => {
  if (data.name !== template.name) flag(issues, "data.name", `must be the template's name, ${template.name}`)
  if (data.languageCode !== template.language) flag(issues, "data.languageCode", `must be the template's language, ${template.language}`)
}

/**
 * Checks a send's values against the template (every missing or extra value an issue naming its path
 * under `data.`) and builds Meta's `template` send object
 * `{name, language:{code, policy:"deterministic"}, components:[…]}` (components left out when the
 * template takes no values: Meta's TemplateObject makes them optional).
 */
export const buildTemplateSend = (template: WaTemplateDefinition, data: unknown, options: TemplateSendOptions): TemplateSend => {
  if (!isRecord(data)) return { issues: [new FieldIssue({ path: "data", message: "must be an object with name, languageCode and the template's values" })] }
  const issues: Issues = []
  checkIdentity(issues, template, data)
  const orderDetails = readOrderDetails(issues, template, data)
  const top = sectionComponents(issues, { path: "data", raw: data }, topSection(template), options, orderDetails)
  const carousel = carouselComponents(issues, template, data, options)
  if (issues.length > 0) return { issues }
  const components = [...top.header, ...top.body, ...carousel, ...top.buttons]
  return {
    object: {
      name: template.name,
      language: { code: template.language, policy: "deterministic" },
      ...(components.length > 0 ? { components } : {})
    }
  }
}
