import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { isUuid } from "../../domain/ids.ts"
import { type PagePosition, positionOf } from "../../storage/pageCursor.ts"
import type { TemplateCategory, WaTemplateDefinition } from "./templateRules.ts"

export type WaTemplateStatus = "PENDING" | "APPROVED" | "REJECTED"

export interface WaTemplateRow {
  readonly templateId: string
  readonly accountId: string
  readonly wabaId: string
  readonly name: string
  readonly language: string
  readonly category: TemplateCategory
  readonly kind: string
  readonly definition: WaTemplateDefinition
  readonly status: WaTemplateStatus
  readonly rejectedReason: string | null
  readonly upstreamId: string | null
  readonly warnings: ReadonlyArray<string>
  readonly createdAt: Date
  readonly updatedAt: Date
  readonly position: string
}

const COLUMNS = `template_id::text, account_id::text, waba_id, name, language, category, kind,
  jsonb_build_object('name', name, 'language', language, 'category', category, 'components', components) AS definition,
  status, rejected_reason, upstream_id, warnings, created_at, updated_at, ${positionOf("created_at")} AS position`

/** WhatsApp templates of an account (soft-deleted, so a send in flight can still read its row). */
export class WaTemplatesRepo extends Effect.Service<WaTemplatesRepo>()("herald/whatsapp/WaTemplatesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const lock = (upstreamId: string) => sql`SELECT pg_advisory_xact_lock(hashtext(${`wa_template:${upstreamId}`}))`

    /** A template Meta took, with Meta's review applied if it came first. */
    const insert = (input: { accountId: string; wabaId: string; upstreamId: string; definition: WaTemplateDefinition; kind: string; warnings: ReadonlyArray<string> }) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* lock(input.upstreamId)
        const [row] = yield* sql<WaTemplateRow>`
          INSERT INTO wa_templates (account_id, waba_id, name, language, category, kind, components, warnings, upstream_id, status, rejected_reason)
          SELECT ${input.accountId}::uuid, ${input.wabaId}, ${input.definition.name}, ${input.definition.language}, ${input.definition.category},
                 ${input.kind}, ${JSON.stringify(input.definition.components)}::jsonb, ${JSON.stringify(input.warnings)}::jsonb, ${input.upstreamId},
                 coalesce(r.status, 'PENDING'), r.reason
          FROM (SELECT 1) AS one LEFT JOIN wa_template_reviews r ON r.upstream_id = ${input.upstreamId}
          RETURNING ${sql.literal(COLUMNS)}`
        return row!
      }))

    /** Whether a live template of that name and language exists (checked before submitting to Meta). */
    const exists = (accountId: string, name: string, language: string) =>
      Effect.map(
        sql`SELECT 1 FROM wa_templates WHERE account_id = ${accountId}::uuid AND name = ${name} AND language = ${language} AND deleted_at IS NULL`,
        (rows) => rows.length > 0
      ).pipe(Effect.orDie)

    /** Every live language version of a template name. */
    const byName = (accountId: string, name: string) =>
      sql<WaTemplateRow>`
        SELECT ${sql.literal(COLUMNS)} FROM wa_templates
        WHERE account_id = ${accountId}::uuid AND name = ${name} AND deleted_at IS NULL ORDER BY language`.pipe(Effect.orDie)

    const find = (accountId: string, templateId: string) =>
      !isUuid(templateId) ? Effect.succeed(undefined) : sql<WaTemplateRow>`
        SELECT ${sql.literal(COLUMNS)} FROM wa_templates
        WHERE account_id = ${accountId}::uuid AND template_id = ${templateId}::uuid AND deleted_at IS NULL`.pipe(
        Effect.map((rows) => rows[0]),
        Effect.orDie
      )

    const page = (input: {
      readonly accountId: string
      readonly status: WaTemplateStatus | undefined
      readonly category: TemplateCategory | undefined
      readonly after: PagePosition | undefined
      readonly limit: number
    }) =>
      sql<WaTemplateRow>`
        SELECT ${sql.literal(COLUMNS)} FROM wa_templates
        WHERE ${
        sql.and([
          sql`account_id = ${input.accountId}::uuid`,
          sql`deleted_at IS NULL`,
          ...(input.status === undefined ? [] : [sql`status = ${input.status}`]),
          ...(input.category === undefined ? [] : [sql`category = ${input.category}`]),
          ...(input.after === undefined ? [] : [sql`(created_at, template_id) < (${input.after.createdAt}::timestamptz, ${input.after.id}::uuid)`])
        ])
      }
        ORDER BY created_at DESC, template_id DESC
        LIMIT ${input.limit + 1}`.pipe(Effect.orDie)

    /** Meta's review of a template, kept by Meta's id and applied to the template if it is recorded yet. */
    const review = (input: { upstreamId: string; status: WaTemplateStatus; reason: string | null }) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* lock(input.upstreamId)
        yield* sql`
          INSERT INTO wa_template_reviews (upstream_id, status, reason) VALUES (${input.upstreamId}, ${input.status}, ${input.reason})
          ON CONFLICT (upstream_id) DO UPDATE SET status = excluded.status, reason = excluded.reason, reviewed_at = now()`
        yield* sql`
          UPDATE wa_templates SET status = ${input.status}, rejected_reason = ${input.reason}, updated_at = now()
          WHERE upstream_id = ${input.upstreamId} AND deleted_at IS NULL`
      })).pipe(Effect.orDie)

    const remove = (templateId: string) =>
      sql`UPDATE wa_templates SET deleted_at = now() WHERE template_id = ${templateId}::uuid AND deleted_at IS NULL`.pipe(Effect.asVoid, Effect.orDie)

    return { insert, exists, byName, find, page, review, remove } as const
  })
}) {}
