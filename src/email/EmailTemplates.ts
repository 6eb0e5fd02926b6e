import { Effect } from "effect"
import { Conflict, describeIssues, FieldIssue, InvalidRequest, NotFound } from "../domain/errors.ts"
import type { PagePosition } from "../storage/pageCursor.ts"
import { CursorPages } from "./cursorPage.ts"
import { EmailTemplatesRepo } from "./EmailTemplatesRepo.ts"
import type { TemplateParts } from "./renderTemplate.ts"

/** A template's name (the contract's SetName): 1 to 64 letters, digits, `_` and `-`. */
export const TEMPLATE_NAME = /^[A-Za-z0-9_-]{1,64}$/
/** RFC 5322's line limit, which a subject header must fit. */
export const SUBJECT_MAX = 998
export const PART_MAX = 512_000

export interface TemplateBody {
  readonly subject: string
  readonly html?: string | undefined
  readonly text?: string | undefined
}

interface PageQuery {
  readonly limit?: number | undefined
  readonly next_cursor?: string | undefined
}

const notFound = (name: string) => new NotFound({ message: `no template named ${name}` })

/** A part as stored: an empty one is no part (null). */
const partOf = (value: string | undefined) => (value === undefined || value === "" ? null : value)

const bodyIssues = (body: TemplateBody) => {
  const issues: Array<FieldIssue> = []
  if (body.subject.trim() === "") issues.push(new FieldIssue({ path: "subject", message: "must not be empty" }))
  if (body.subject.length > SUBJECT_MAX) issues.push(new FieldIssue({ path: "subject", message: `must be at most ${SUBJECT_MAX} characters` }))
  if ((body.html?.length ?? 0) > PART_MAX) issues.push(new FieldIssue({ path: "html", message: `must be at most ${PART_MAX} characters` }))
  if ((body.text?.length ?? 0) > PART_MAX) issues.push(new FieldIssue({ path: "text", message: `must be at most ${PART_MAX} characters` }))
  if (partOf(body.html) === null && partOf(body.text) === null) issues.push(new FieldIssue({ path: "html", message: "a template needs html or text (or both)" }))
  return issues
}

const invalid = (issues: ReadonlyArray<FieldIssue>) => new InvalidRequest({ message: describeIssues(issues), errors: issues })

/**
 * E-mail templates (SES v2's): a subject and html and/or text parts with `{{var}}` placeholders,
 * filled from a send's `template.data` by `render` (renderTemplate.ts). Names are unique per
 * partner; PUT replaces the three parts.
 */
export class EmailTemplates extends Effect.Service<EmailTemplates>()("herald/email/EmailTemplates", {
  effect: Effect.gen(function*() {
    const repo = yield* EmailTemplatesRepo
    const pages = yield* CursorPages

    const create = Effect.fn("EmailTemplates.create")(function*(partnerId: string, input: TemplateBody & { readonly name: string }) {
      const issues = [
        ...(TEMPLATE_NAME.test(input.name) ? [] : [new FieldIssue({ path: "name", message: "must be 1 to 64 letters, digits, _ and -" })]),
        ...bodyIssues(input)
      ]
      if (issues.length > 0) return yield* invalid(issues)
      const row = yield* repo.insert(partnerId, input.name, { subject: input.subject, html: partOf(input.html), text: partOf(input.text) })
      if (row === undefined) return yield* new Conflict({ key: "name", message: `a template named ${input.name} exists` })
      return row
    })

    const list = Effect.fn("EmailTemplates.list")(function*(partnerId: string, query: PageQuery) {
      return yield* pages.page(
        { list: "templates", partnerId },
        query,
        (after: PagePosition | undefined, take: number) => repo.page(partnerId, after, take),
        (row) => ({ createdAt: row.position, id: row.templateId })
      )
    })

    const findRow = (partnerId: string, name: string) =>
      TEMPLATE_NAME.test(name) ? repo.findByName(partnerId, name) : Effect.succeed(undefined)

    const get = Effect.fn("EmailTemplates.get")(function*(partnerId: string, name: string) {
      const row = yield* findRow(partnerId, name)
      if (row === undefined) return yield* notFound(name)
      return row
    })

    /** PUT: the subject and both parts are replaced (a part left out is removed). */
    const update = Effect.fn("EmailTemplates.update")(function*(partnerId: string, name: string, input: TemplateBody) {
      if (!TEMPLATE_NAME.test(name)) return yield* notFound(name)
      const issues = bodyIssues(input)
      if (issues.length > 0) return yield* invalid(issues)
      const row = yield* repo.update(partnerId, name, { subject: input.subject, html: partOf(input.html), text: partOf(input.text) })
      if (row === undefined) return yield* notFound(name)
      return row
    })

    const remove = Effect.fn("EmailTemplates.remove")(function*(partnerId: string, name: string) {
      if (!TEMPLATE_NAME.test(name)) return yield* notFound(name)
      if (!(yield* repo.remove(partnerId, name))) return yield* notFound(name)
    })

    /** The parts of the partner's template of that name, for rendering a send; undefined when there is none. */
    const find = Effect.fn("EmailTemplates.find")(function*(partnerId: string, name: string) {
      const row = yield* findRow(partnerId, name)
      return row === undefined ? undefined : ({ subject: row.subject, html: row.html, text: row.text } satisfies TemplateParts)
    })

    return { create, list, get, update, remove, find } as const
  }),
  dependencies: [EmailTemplatesRepo.Default, CursorPages.Default]
}) {}
