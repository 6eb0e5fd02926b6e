/** A stored template's parts (an absent part is null). */
export interface TemplateParts {
  readonly subject: string
  readonly html: string | null
  readonly text: string | null
}

/** What a send carries after rendering, or why it cannot be rendered (the caller answers 400). */
export type Rendered = TemplateParts | { readonly problem: string }

/** `{{var}}`, `{{ var }}`, `{{user.name}}`: names of letters, digits, `_` and `-`, joined by dots. */
const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\s*\}\}/g

const HTML_ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" }
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!)

type Lookup = { readonly found: true; readonly value: string } | { readonly found: false; readonly problem: string }

/**
 * The value a dotted path names in the send's data: own properties only (`{{constructor}}` is
 * missing, not a function's source). null reads as an empty string; a string, number, boolean or
 * bigint as its text; an object or array is refused rather than shown as `[object Object]`.
 */
const lookup = (data: unknown, path: string): Lookup => {
  let value: unknown = data
  for (const key of path.split(".")) {
    if (value === null || typeof value !== "object" || !Object.prototype.hasOwnProperty.call(value, key)) {
      return { found: false, problem: `template.data is missing ${path}` }
    }
    value = (value as Record<string, unknown>)[key]
  }
  if (value === undefined) return { found: false, problem: `template.data is missing ${path}` }
  if (value === null) return { found: true, value: "" }
  if (typeof value === "string") return { found: true, value }
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return { found: true, value: String(value) }
  return { found: false, problem: `template.data.${path} must be a string, number or boolean` }
}

/**
 * Fills a template's `{{var}}` placeholders from a send's `template.data`, in one pass (a value
 * that itself reads `{{x}}` is not filled again). Values are HTML-escaped in the html part only;
 * the subject loses CR and LF (a value must not start a new header line). As in SES, a
 * placeholder the data does not fill fails the send: `{ problem }` names the first one.
 */
export const render = (template: TemplateParts, data: Readonly<Record<string, unknown>>): Rendered => {
  let problem: string | undefined
  const fill = (part: string, escape: boolean) =>
    part.replace(PLACEHOLDER, (whole, path: string) => {
      const found = lookup(data, path)
      if (!found.found) {
        problem ??= found.problem
        return whole
      }
      return escape ? escapeHtml(found.value) : found.value
    })
  const subject = fill(template.subject, false).replace(/[\r\n]+/g, " ")
  const html = template.html === null ? null : fill(template.html, true)
  const text = template.text === null ? null : fill(template.text, false)
  return problem === undefined ? { subject, html, text } : { problem }
}
