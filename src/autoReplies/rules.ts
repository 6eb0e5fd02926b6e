import { checkContent } from "../domain/contentLimits.ts"
import { FieldIssue } from "../domain/errors.ts"

/**
 * Auto-reply rules (DESIGN.md, "Content shapes": `{match: exact|contains, keyword, reply: {text} |
 * {template_id}, cooldown_seconds?, active}`): the pure part — which rule an inbound text fires,
 * and what a rule's reply may be. Unit-tested without I/O (test/autoReplies/rules.test.ts).
 */

export const MATCH_KINDS = ["exact", "contains"] as const
export type MatchKind = (typeof MATCH_KINDS)[number]

export const KEYWORD_MAX = 200
/** One hour: a user repeating "hi" gets one answer, not one per message. */
export const COOLDOWN_DEFAULT_SECONDS = 3_600
/** 30 days. 0 means no cooldown: every matching message is answered. */
export const COOLDOWN_MAX_SECONDS = 30 * 86_400

/** A rule's reply: literal text (sent as a text message), or a template of the same bot. */
export type Reply = { readonly text: string } | { readonly template_id: string }

/** A stored rule's reply: its template when it has one, else its text. */
export const replyOfRow = (row: { readonly replyTemplateId: string | null; readonly replyText: string | null }): Reply =>
  row.replyTemplateId !== null ? { template_id: row.replyTemplateId } : { text: row.replyText ?? "" }

/** What matching needs of a rule. */
export interface MatchableRule {
  readonly ruleId: string
  readonly match: MatchKind
  readonly keyword: string
  readonly active: boolean
  /** When the rule was created: ties within a match kind go to the oldest. */
  readonly createdAt: Date | string
}

/**
 * The form texts and keywords are compared in: Unicode-normalized (NFKC, so a full-width "ＨＩ" or a
 * decomposed "é" compares equal to what a keyboard types), case-folded, and trimmed. Upper- then
 * lower-casing folds what lower-casing alone misses ("ß" and "SS", final "ς" and "Σ"). Inner
 * whitespace is kept: "opening hours" is not "openinghours".
 */
export const normalize = (text: string): string => text.normalize("NFKC").toUpperCase().toLowerCase().trim()

/** Whether `text` (a user's message) fires a rule of `match` kind with `keyword`. */
export const matches = (match: MatchKind, keyword: string, text: string): boolean => {
  const k = normalize(keyword)
  if (k === "") return false
  const t = normalize(text)
  return match === "exact" ? t === k : t.includes(k)
}

const RANK: Record<MatchKind, number> = { exact: 0, contains: 1 }
const time = (at: Date | string) => (at instanceof Date ? at.getTime() : Date.parse(at))

/**
 * The evaluation order: every `exact` rule before any `contains` rule (an exact keyword is the
 * more specific answer: "price" should not be answered by a "pri" catch-all created earlier),
 * then oldest first, then by rule id so the order is total.
 */
export const byPrecedence = (a: MatchableRule, b: MatchableRule): number =>
  RANK[a.match] - RANK[b.match] || time(a.createdAt) - time(b.createdAt) || (a.ruleId < b.ruleId ? -1 : a.ruleId > b.ruleId ? 1 : 0)

/**
 * The rule `text` fires, if any: the first active matching rule in precedence order. Only that
 * one is tried: when it is in its cooldown for the sender, nothing is sent, rather than a lower
 * rule answering instead (a user repeating "hi" should not get a different answer the second time).
 */
export const pickRule = <R extends MatchableRule>(rules: ReadonlyArray<R>, text: string): R | undefined =>
  rules.filter((r) => r.active && matches(r.match, r.keyword, text)).sort(byPrecedence)[0]

/** The reply a request gives: exactly one of `text` or `template_id`, the text within the RBM limits. */
export const replyOf = (input: { readonly text?: string | undefined; readonly template_id?: string | undefined }): Reply | Array<FieldIssue> => {
  const given = (input.text !== undefined ? 1 : 0) + (input.template_id !== undefined ? 1 : 0)
  if (given !== 1) {
    return [new FieldIssue({ path: "reply", message: given === 0 ? "give text or template_id" : "give text or template_id, not both" })]
  }
  if (input.template_id !== undefined) return { template_id: input.template_id }
  const text = input.text!
  // Checked as the text message it will be sent as; checkContent names the field `text`.
  const check = checkContent({ type: "text", text, suggestions: [] })
  if (check.errors.length > 0) {
    return check.errors.map((e) => {
      const at = e.indexOf(": ")
      return at > 0 ? new FieldIssue({ path: `reply.${e.slice(0, at)}`, message: e.slice(at + 2) }) : new FieldIssue({ path: "reply", message: e })
    })
  }
  return { text }
}
