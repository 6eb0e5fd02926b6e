import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { type PagePosition, positionOf } from "../storage/pageCursor.ts"
import { isUniqueViolation } from "../storage/sqlState.ts"
import type { TemplateParts } from "./renderTemplate.ts"

/** A partner's template: a subject and html and/or text parts with `{{var}}` placeholders. */
export interface EmailTemplate {
  readonly templateId: string
  readonly name: string
  readonly subject: string
  readonly html: string | null
  readonly text: string | null
  readonly createdAt: Date
  /** created_at to the microsecond, as a cursor carries it. */
  readonly position: string
}

const COLUMNS = `template_id::text, name, subject, html, text, created_at, ${positionOf("created_at")} AS position`

/** The one writer of `email_templates`. */
export class EmailTemplatesRepo extends Effect.Service<EmailTemplatesRepo>()("herald/email/EmailTemplatesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The new template; undefined when the partner has one of that name. */
    const insert = Effect.fn("EmailTemplatesRepo.insert")(function*(partnerId: string, name: string, parts: TemplateParts) {
      const rows = yield* sql<EmailTemplate>`
        INSERT INTO email_templates (partner_id, name, subject, html, text)
        VALUES (${partnerId}::uuid, ${name}, ${parts.subject}, ${parts.html}, ${parts.text})
        RETURNING ${sql.literal(COLUMNS)}`.pipe(
        Effect.catchIf(isUniqueViolation, () => Effect.succeed([] as ReadonlyArray<EmailTemplate>))
      )
      return rows[0]
    }, Effect.orDie)

    const page = Effect.fn("EmailTemplatesRepo.page")(function*(partnerId: string, after: PagePosition | undefined, take: number) {
      return yield* sql<EmailTemplate>`
            SELECT ${sql.literal(COLUMNS)} FROM email_templates t
            WHERE ${
        sql.and([
          sql`partner_id = ${partnerId}::uuid`,
          ...(after === undefined ? [] : [sql`(created_at, template_id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`])
        ])
      }
            ORDER BY t.created_at DESC, t.template_id DESC
            LIMIT ${take}`
    }, Effect.orDie)

    const findByName = Effect.fn("EmailTemplatesRepo.findByName")(function*(partnerId: string, name: string) {
      const [row] = yield* sql<EmailTemplate>`
            SELECT ${sql.literal(COLUMNS)} FROM email_templates t
            WHERE partner_id = ${partnerId}::uuid AND name = ${name}`
      return row
    }, Effect.orDie)

    /** The template with its parts replaced; undefined when there is none of that name. */
    const update = Effect.fn("EmailTemplatesRepo.update")(function*(partnerId: string, name: string, parts: TemplateParts) {
      const [row] = yield* sql<EmailTemplate>`
        UPDATE email_templates SET subject = ${parts.subject}, html = ${parts.html}, text = ${parts.text}, updated_at = now()
        WHERE partner_id = ${partnerId}::uuid AND name = ${name}
        RETURNING ${sql.literal(COLUMNS)}`
      return row
    }, Effect.orDie)

    /** Whether there was one to delete. */
    const remove = Effect.fn("EmailTemplatesRepo.remove")(function*(partnerId: string, name: string) {
      const deleted = yield* sql`
        DELETE FROM email_templates WHERE partner_id = ${partnerId}::uuid AND name = ${name}
        RETURNING template_id`
      return deleted.length > 0
    }, Effect.orDie)

    return { insert, page, findByName, update, remove } as const
  })
}) {}
