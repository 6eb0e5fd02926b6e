import { describeIssues, FieldIssue, InvalidRequest } from "../domain/errors.ts"
import { unstorableText } from "../domain/storable.ts"
import { TEXT_MAX } from "../whatsapp/message/publicMessage.ts"

/** Bounds of an agent's definition (docs/app-api.md, AI agents). */
export const AGENT_NAME_MAX = 100
export const INSTRUCTIONS_MAX = 4_000
export const FAQ_MAX = 100
export const QUESTION_MAX = 500
export const KEYWORDS_MAX = 50
export const KEYWORD_MAX = 100

export interface FaqEntry {
  readonly question: string
  readonly answer: string
}

export interface AgentDefinition {
  readonly name: string
  readonly instructions: string
  readonly faq: ReadonlyArray<FaqEntry>
  readonly handoffKeywords: ReadonlyArray<string>
  readonly active: boolean
}

export interface AgentInput {
  readonly name?: string | undefined
  readonly instructions?: string | undefined
  readonly faq?: ReadonlyArray<{ readonly question: string; readonly answer: string }> | undefined
  readonly handoff_keywords?: ReadonlyArray<string> | undefined
  readonly active?: boolean | undefined
}

const text = (value: string, path: string, min: number, max: number, issues: Array<FieldIssue>) => {
  const trimmed = value.trim()
  if (trimmed.length < min || value.length > max) issues.push(new FieldIssue({ path, message: min === 0 ? `must be at most ${max} characters` : `must be ${min} to ${max} characters` }))
  else {
    const problem = unstorableText(trimmed)
    if (problem !== undefined) issues.push(new FieldIssue({ path, message: problem }))
  }
  return trimmed
}

/**
 * An agent's definition over `base` (the stored one for PATCH, defaults for POST), every problem
 * named at once. A keyword or question is kept as written (trimmed); matching ignores case.
 */
export const checkAgent = (input: AgentInput, base: AgentDefinition): AgentDefinition | InvalidRequest => {
  const issues: Array<FieldIssue> = []
  const name = input.name === undefined ? base.name : text(input.name, "name", 1, AGENT_NAME_MAX, issues)
  const instructions = input.instructions === undefined ? base.instructions : text(input.instructions, "instructions", 0, INSTRUCTIONS_MAX, issues)
  let faq = base.faq
  if (input.faq !== undefined) {
    if (input.faq.length > FAQ_MAX) issues.push(new FieldIssue({ path: "faq", message: `must hold at most ${FAQ_MAX} entries` }))
    faq = input.faq.map((entry, i) => ({
      question: text(entry.question, `faq[${i}].question`, 1, QUESTION_MAX, issues),
      answer: text(entry.answer, `faq[${i}].answer`, 1, TEXT_MAX, issues)
    }))
  }
  let handoffKeywords = base.handoffKeywords
  if (input.handoff_keywords !== undefined) {
    if (input.handoff_keywords.length > KEYWORDS_MAX) issues.push(new FieldIssue({ path: "handoff_keywords", message: `must hold at most ${KEYWORDS_MAX} keywords` }))
    handoffKeywords = [...new Set(input.handoff_keywords.map((keyword, i) => text(keyword, `handoff_keywords[${i}]`, 1, KEYWORD_MAX, issues)))]
  }
  if (issues.length > 0) return new InvalidRequest({ message: describeIssues(issues), errors: issues })
  return { name, instructions, faq, handoffKeywords, active: input.active ?? base.active }
}

export type AgentDecision =
  | { readonly _tag: "Answer"; readonly answer: string }
  | { readonly _tag: "Handoff"; readonly reason: "keyword" | "no_match" }

/** Lower case with runs of white space as one space: how texts and questions are compared. */
const normalise = (value: string) => value.toLowerCase().replace(/\s+/g, " ").trim()

/** Whether `keyword` stands in `text` as a whole word or phrase ("human" is not in "inhuman"). */
const hasKeyword = (text: string, keyword: string) => {
  const needle = normalise(keyword)
  let at = text.indexOf(needle)
  while (at >= 0) {
    const before = at === 0 ? "" : text[at - 1]!
    const after = text[at + needle.length] ?? ""
    if (!/[\p{L}\p{N}]/u.test(before) && !/[\p{L}\p{N}]/u.test(after)) return true
    at = text.indexOf(needle, at + 1)
  }
  return false
}

/**
 * What an agent does with a customer's message: a handoff keyword hands the conversation to a
 * person; otherwise a text containing one of its questions (case-insensitive; the longest such
 * question when several are) gets that answer; anything else (no question matched, or a message
 * without text: an image, a location) is handed off too. No model runs: this is all of it.
 */
export const decide = (agent: Pick<AgentDefinition, "faq" | "handoffKeywords">, message: string | null): AgentDecision => {
  if (message === null) return { _tag: "Handoff", reason: "no_match" }
  const said = normalise(message)
  if (agent.handoffKeywords.some((keyword) => hasKeyword(said, keyword))) return { _tag: "Handoff", reason: "keyword" }
  let best: FaqEntry | undefined
  for (const entry of agent.faq) {
    const question = normalise(entry.question)
    if (said.includes(question) && (best === undefined || question.length > normalise(best.question).length)) best = entry
  }
  return best === undefined ? { _tag: "Handoff", reason: "no_match" } : { _tag: "Answer", answer: best.answer }
}
