import { Either } from "effect"
import type { Carousel, MessageContent, RichCard, Suggestion } from "../domain/content.ts"
import { describeIssues, FieldIssue, InvalidRequest } from "../domain/errors.ts"

export const TEMPLATE_TYPES = ["text", "rich_card", "carousel"] as const
export type TemplateType = (typeof TEMPLATE_TYPES)[number]

/** The content fields of a POST /api/v1/rcs/templates body (DESIGN.md, Templates). */
export interface TemplateFields {
  readonly type: TemplateType
  readonly text?: string | undefined
  readonly rich_card?: RichCard | undefined
  readonly carousel?: Carousel | undefined
  readonly suggestions: ReadonlyArray<Suggestion>
}

/**
 * The message content a body describes: the field named by `type` must be there and the other two
 * absent, so a template never carries content it would not send. Every misplaced field is named.
 */
export const contentOf = (fields: TemplateFields): Either.Either<MessageContent, InvalidRequest> => {
  const issues = TEMPLATE_TYPES.flatMap((field) => {
    const given = fields[field] !== undefined
    if (field === fields.type && !given) return [new FieldIssue({ path: field, message: `is required when type is ${fields.type}` })]
    if (field !== fields.type && given) return [new FieldIssue({ path: field, message: `must be absent when type is ${fields.type}` })]
    return []
  })
  if (issues.length > 0) return Either.left(new InvalidRequest({ message: describeIssues(issues), errors: issues }))
  const suggestions = fields.suggestions
  switch (fields.type) {
    case "text":
      return Either.right({ type: "text", text: fields.text!, suggestions })
    case "rich_card":
      return Either.right({ type: "rich_card", rich_card: fields.rich_card!, suggestions })
    case "carousel":
      return Either.right({ type: "carousel", carousel: fields.carousel!, suggestions })
  }
}
