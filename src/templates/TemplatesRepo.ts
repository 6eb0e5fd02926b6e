import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { MessageContent } from "../domain/content.ts"
import type { PagePosition } from "../storage/pageCursor.ts"
import type { TemplateType } from "./templateInput.ts"
import { isUniqueViolation } from "../storage/sqlState.ts"

export type TemplateStatus = "pending" | "approved" | "rejected"
export const TEMPLATE_STATUSES = ["pending", "approved", "rejected"] as const

export interface TemplateRow {
  readonly templateId: string
  readonly accountId: string
  readonly botId: string
  readonly name: string
  readonly type: TemplateType
  /** Written by `insert` from checked content only, so read back as it was written. */
  readonly content: MessageContent
  readonly status: TemplateStatus
  readonly warnings: ReadonlyArray<string>
  readonly createdAt: Date
  /** created_at to the microsecond, as a list cursor carries it. */
  readonly position: string
}

/** What the send path needs of a template it may use. */
export interface UsableTemplate {
  readonly botId: string
  readonly content: MessageContent
}

const COLUMNS = `template_id, account_id, bot_id, name, type, content, status, warnings, created_at,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS position`


export class TemplatesRepo extends Effect.Service<TemplatesRepo>()("herald/templates/TemplatesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Stores a template; "NameTaken" when the bot has a live template of that name (nothing written). */
    const insert = (input: {
      readonly accountId: string
      readonly botId: string
      readonly name: string
      readonly content: MessageContent
      readonly status: TemplateStatus
      readonly warnings: ReadonlyArray<string>
    }) =>
      sql<TemplateRow>`
        INSERT INTO templates (account_id, bot_id, name, type, content, status, warnings)
        VALUES (${input.accountId}, ${input.botId}, ${input.name}, ${input.content.type}, ${JSON.stringify(input.content)}::jsonb,
                ${input.status}, ${input.warnings}::text[])
        RETURNING ${sql.literal(COLUMNS)}`.pipe(
        Effect.map((rows) => rows[0]!),
        Effect.catchTag("SqlError", (error) => isUniqueViolation(error) ? Effect.succeed("NameTaken" as const) : Effect.die(error))
      )

    /** Whether the bot has a live template of that name (a cheap early answer; the index decides). */
    const nameTaken = (botId: string, name: string) =>
      sql`SELECT 1 FROM templates WHERE bot_id = ${botId}::uuid AND name = ${name} AND deleted_at IS NULL`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    /**
     * One page of an account's live templates, newest first, after `after` when given. `bots`
     * limits it to those bots (a scoped member); `limit + 1` rows are read so the caller knows
     * whether another page follows.
     */
    const page = (input: {
      readonly accountId: string
      readonly bots: ReadonlyArray<string> | "all"
      readonly botId: string | undefined
      readonly status: TemplateStatus | undefined
      readonly after: PagePosition | undefined
      readonly limit: number
    }) =>
      sql<TemplateRow>`
        SELECT ${sql.literal(COLUMNS)} FROM templates
        WHERE ${
        sql.and([
          sql`account_id = ${input.accountId}::uuid`,
          sql`deleted_at IS NULL`,
          ...(input.bots === "all" ? [] : [sql`bot_id::text = ANY(${input.bots}::text[])`]),
          ...(input.botId === undefined ? [] : [sql`bot_id = ${input.botId}::uuid`]),
          ...(input.status === undefined ? [] : [sql`status = ${input.status}`]),
          ...(input.after === undefined ? [] : [sql`(created_at, template_id) < (${input.after.createdAt}::timestamptz, ${input.after.id}::uuid)`])
        ])
      }
        ORDER BY created_at DESC, template_id DESC
        LIMIT ${input.limit + 1}`.pipe(Effect.orDie)

    /** A live template of the account; another account's, a deleted one or a malformed id is as good as unknown. */
    const find = (accountId: string, templateId: string) =>
      sql<TemplateRow>`
        SELECT ${sql.literal(COLUMNS)} FROM templates
        WHERE account_id = ${accountId}::uuid AND template_id::text = ${templateId} AND deleted_at IS NULL`.pipe(
        Effect.map((rows) => rows[0]),
        Effect.orDie
      )

    /** Soft delete: false when there was no live template to delete. */
    const remove = (accountId: string, templateId: string) =>
      sql`
        UPDATE templates SET deleted_at = now()
        WHERE account_id = ${accountId}::uuid AND template_id::text = ${templateId} AND deleted_at IS NULL
        RETURNING template_id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

    /**
     * The template a send may use: live (not deleted) and approved, with its bot and content;
     * undefined otherwise. Whether the bot may send now (active, in the caller's scope) is the
     * send path's check.
     */
    const usable = (accountId: string, templateId: string) =>
      sql<UsableTemplate>`
        SELECT bot_id, content FROM templates
        WHERE account_id = ${accountId}::uuid AND template_id::text = ${templateId}
          AND deleted_at IS NULL AND status = 'approved'`.pipe(
        Effect.map((rows): UsableTemplate | undefined => rows[0]),
        Effect.orDie
      )

    return { insert, nameTaken, page, find, remove, usable } as const
  })
}) {}
