import { FieldIssue } from "../domain/errors.ts"
import { MAX_TRAIT_NAME } from "../customers/traitFilters.ts"

/**
 * A campaign's per-recipient values (docs/campaigns.md, Personalisation): any string among the
 * template's values may hold `{{trait.<name>}}`, filled for each customer from that trait when the
 * message is sent, or from the campaign's fallback for the trait when the customer lacks it. Pure:
 * the service checks a campaign with it, the chunk runner fills each target with it.
 */

/** `{{trait.city}}`, spaces inside the braces allowed; a trait name as traits allow it (no braces). */
const TRAIT_PLACEHOLDER = /\{\{\s*trait\.([^{}\s]+)\s*\}\}/g

/** The most distinct traits one campaign's values may name. */
export const MAX_CAMPAIGN_TRAITS = 20
/** The longest fallback value. */
export const MAX_FALLBACK_LENGTH = 1_000

const stringsOf = (value: unknown, into: Array<string>): Array<string> => {
  if (typeof value === "string") into.push(value)
  else if (Array.isArray(value)) for (const item of value) stringsOf(item, into)
  else if (typeof value === "object" && value !== null) for (const item of Object.values(value)) stringsOf(item, into)
  return into
}

/** The traits the values name, in order of first appearance, each once. */
export const traitsIn = (data: unknown): ReadonlyArray<string> => {
  const found = new Set<string>()
  for (const text of stringsOf(data, [])) for (const match of text.matchAll(TRAIT_PLACEHOLDER)) found.add(match[1]!)
  return [...found]
}

/**
 * Every trait named needs a fallback, and every fallback a trait named (a misspelt one would go
 * unnoticed otherwise), as RCS broadcasts ask a default of every placeholder: a customer who lacks
 * the trait would otherwise read "Hi ,".
 */
export const checkFallbacks = (traits: ReadonlyArray<string>, fallbacks: Readonly<Record<string, unknown>>): ReadonlyArray<FieldIssue> => {
  const issues: Array<FieldIssue> = []
  if (traits.length > MAX_CAMPAIGN_TRAITS) {
    issues.push(new FieldIssue({ path: "template", message: `names ${traits.length} traits; a campaign's values may name at most ${MAX_CAMPAIGN_TRAITS}` }))
  }
  for (const trait of traits) {
    if (trait.length > MAX_TRAIT_NAME) issues.push(new FieldIssue({ path: "template", message: `{{trait.${trait.slice(0, 20)}…}} names a trait longer than ${MAX_TRAIT_NAME} characters` }))
    else if (!(trait in fallbacks)) {
      issues.push(new FieldIssue({
        path: `fallbackValues.${trait}`,
        message: `{{trait.${trait}}} needs a fallback value, sent to customers without the trait ${trait}`
      }))
    }
  }
  for (const [name, value] of Object.entries(fallbacks)) {
    if (!traits.includes(name)) issues.push(new FieldIssue({ path: `fallbackValues.${name}`, message: `names no {{trait.${name}}} of the template's values` }))
    else if (typeof value !== "string" || value.trim() === "" || value.length > MAX_FALLBACK_LENGTH) {
      issues.push(new FieldIssue({ path: `fallbackValues.${name}`, message: `must be a text of 1 to ${MAX_FALLBACK_LENGTH} characters (Meta refuses an empty parameter)` }))
    }
  }
  return issues
}

/** A trait's value as text: a string as written, a number or boolean as its text; anything else (absent, blank, a list) is missing. */
const textOf = (value: unknown): string | undefined => {
  if (typeof value === "string") return value.trim() === "" ? undefined : value
  if (typeof value === "number" || typeof value === "boolean") return String(value)
  return undefined
}

/** The values with every `{{trait.x}}` filled from `vars` (the customer's traits) or the fallbacks, in one pass. */
export const fillTraits = <A>(data: A, vars: Readonly<Record<string, unknown>> | null, fallbacks: Readonly<Record<string, string>>): A => {
  const fill = (value: unknown): unknown => {
    if (typeof value === "string") {
      return value.replace(TRAIT_PLACEHOLDER, (_, trait: string) => textOf(vars?.[trait]) ?? fallbacks[trait] ?? "")
    }
    if (Array.isArray(value)) return value.map(fill)
    if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v)]))
    return value
  }
  return fill(data) as A
}
