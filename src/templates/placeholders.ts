import type { MessageContent, RichCard, Suggestion } from "../domain/content.ts"

/**
 * Per-recipient placeholders of RCS templates (docs/templates.md, Placeholders): `{{name}}`,
 * `{{ city }}`, `{{order.id}}`, the syntax of Herald's e-mail templates (src/email/renderTemplate.ts):
 * a name of letters, digits, `_` and `-`, or several joined by dots, between double braces, spaces
 * allowed inside. `name` is the contact's name; any other name is a key of the contact's params, a
 * dotted name a path into nested params.
 */
const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\s*\}\}/g

/** The placeholder that reads the contact's name rather than its params. */
export const NAME_PLACEHOLDER = "name"

/** At most this many distinct placeholders in one template, and this long a default value. */
export const PLACEHOLDERS_MAX = 50
export const DEFAULT_VALUE_MAX = 1_000

/**
 * The parts of a content that are filled: every text the recipient reads (the text, card titles
 * and descriptions, suggestion labels) and the postback data of suggestions. URLs, phone numbers
 * and media are sent as written.
 */
const mapSuggestion = (s: Suggestion, fill: (text: string) => string): Suggestion => ({
  ...s,
  text: fill(s.text),
  ...(s.postback_data !== undefined ? { postback_data: fill(s.postback_data) } : {})
})

const mapCard = (card: RichCard, fill: (text: string) => string): RichCard => ({
  ...card,
  ...(card.title !== undefined ? { title: fill(card.title) } : {}),
  ...(card.description !== undefined ? { description: fill(card.description) } : {}),
  ...(card.suggestions !== undefined ? { suggestions: card.suggestions.map((s) => mapSuggestion(s, fill)) } : {})
})

/** The content with `fill` applied to each filled part, in reading order (the body, then the message's suggestions). */
const mapContent = (content: MessageContent, fill: (text: string) => string): MessageContent => {
  switch (content.type) {
    case "text": {
      const text = fill(content.text)
      return { ...content, text, suggestions: content.suggestions.map((s) => mapSuggestion(s, fill)) }
    }
    case "rich_card": {
      const card = mapCard(content.rich_card, fill)
      return { ...content, rich_card: card, suggestions: content.suggestions.map((s) => mapSuggestion(s, fill)) }
    }
    case "carousel": {
      const cards = content.carousel.cards.map((c) => mapCard(c, fill))
      return { ...content, carousel: { ...content.carousel, cards }, suggestions: content.suggestions.map((s) => mapSuggestion(s, fill)) }
    }
  }
}

/** The distinct placeholders of a content's filled parts, in order of first appearance. */
export const placeholdersOf = (content: MessageContent): ReadonlyArray<string> => {
  const found = new Set<string>()
  mapContent(content, (text) => {
    for (const match of text.matchAll(PLACEHOLDER)) found.add(match[1]!)
    return text
  })
  return [...found]
}

/**
 * A contact's value for a placeholder as the recipient should read it, or undefined when the
 * contact has none: a string with something besides spaces is taken as given, a number or boolean
 * as its text; absent, null, an empty or blank string, an object or an array count as missing.
 */
export const contactValue = (value: unknown): string | undefined => {
  if (typeof value === "string") return value.trim() === "" ? undefined : value
  if (typeof value === "number" || typeof value === "boolean") return String(value)
  return undefined
}

/**
 * The content one recipient gets: each placeholder filled, in one pass (a value that itself reads
 * `{{x}}` is not filled again), with the contact's value (`values`, keyed by placeholder) or else
 * the broadcast's default. A placeholder with neither stays as written (a broadcast is refused at
 * creation unless every placeholder has a default, so this does not happen).
 */
export const personalise = (
  content: MessageContent,
  values: Readonly<Record<string, unknown>> | null,
  defaults: Readonly<Record<string, string>>
): MessageContent =>
  mapContent(content, (text) =>
    text.includes("{{")
      ? text.replace(PLACEHOLDER, (whole, key: string) => {
        const own = values === null ? undefined : contactValue(values[key])
        if (own !== undefined) return own
        return Object.prototype.hasOwnProperty.call(defaults, key) ? defaults[key]! : whole
      })
      : text)

/**
 * Checks a broadcast's default values against its template's placeholders: every placeholder needs
 * one (it is what a contact without a value of its own gets: Herald never sends a placeholder
 * blank or as written), and every default must name a placeholder (a misspelt name would
 * otherwise go unnoticed). Answers the problems, each with its place.
 */
export const checkDefaults = (placeholders: ReadonlyArray<string>, defaults: Readonly<Record<string, string>>): Array<{ path: string; message: string }> => {
  const problems: Array<{ path: string; message: string }> = []
  if (placeholders.length > PLACEHOLDERS_MAX) {
    problems.push({ path: "template_id", message: `the template has ${placeholders.length} placeholders; at most ${PLACEHOLDERS_MAX}` })
  }
  for (const key of placeholders) {
    if (!Object.prototype.hasOwnProperty.call(defaults, key)) {
      problems.push({
        path: `variables.${key}`,
        message: `the template's {{${key}}} needs a default value, sent to contacts without a ${
          key === NAME_PLACEHOLDER ? "name" : `"${key}" param`
        } (e.g. "variables": {"${key}": "…"})`
      })
    }
  }
  const wanted = new Set(placeholders)
  for (const key of Object.keys(defaults)) {
    if (!wanted.has(key)) problems.push({ path: `variables.${key}`, message: `names no placeholder of the template (it has ${placeholders.length === 0 ? "none" : placeholders.map((p) => `{{${p}}}`).join(", ")})` })
  }
  return problems
}
