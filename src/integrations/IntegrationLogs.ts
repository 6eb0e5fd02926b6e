import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { SecretKeyAccount } from "../security/SecretKeys.ts"
import { positionOf } from "../storage/pageCursor.ts"
import { ListCursors } from "../storage/ListCursors.ts"

export const INTEGRATIONS = ["meta_capi"] as const
export const LOGS_LIMIT_DEFAULT = 50
export const LOGS_LIMIT_MAX = 1_000

interface LogRow {
  readonly logId: string
  readonly integration: string
  readonly statusCode: number | null
  readonly outcome: "delivered" | "retrying" | "failed"
  readonly attempt: number
  readonly tookMs: number
  readonly events: number
  readonly responseSnippet: string | null
  readonly createdAt: Date
  readonly position: string
}

/** GET /api/v1/app/integrations/logs: every call Herald made to an integration, newest first. */
export class IntegrationLogs extends Effect.Service<IntegrationLogs>()("herald/integrations/IntegrationLogs", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cursors = yield* ListCursors
    const position = sql.literal(positionOf("created_at"))

    const list = (account: SecretKeyAccount, query: { readonly integration?: string | undefined; readonly limit?: number | undefined; readonly cursor?: string | undefined }) =>
      Effect.gen(function*() {
        const scope = { list: "integration-logs", accountId: account.accountId }
        const after = yield* cursors.readPosition(scope, query.cursor)
        const limit = query.limit ?? LOGS_LIMIT_DEFAULT
        const rows = yield* sql<LogRow>`
          SELECT log_id::text, integration, status_code, outcome, attempt, took_ms, events, response_snippet, created_at, ${position} AS position
          FROM integration_logs
          WHERE account_id = ${account.accountId}
            ${query.integration === undefined ? sql`` : sql`AND integration = ${query.integration}`}
            ${after === undefined ? sql`` : sql`AND (created_at, log_id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`}
          ORDER BY created_at DESC, log_id DESC LIMIT ${limit + 1}`.pipe(Effect.orDie)
        const page = cursors.positionPage(scope, rows, limit, (row) => ({ createdAt: row.position, id: row.logId }))
        return {
          success: true as const,
          logs: page.rows.map((row) => ({
            id: row.logId,
            integration: row.integration,
            status_code: row.statusCode,
            outcome: row.outcome,
            attempt: row.attempt,
            took_ms: row.tookMs,
            events: row.events,
            response_snippet: row.responseSnippet,
            created_at: row.createdAt.toISOString()
          })),
          next_cursor: page.nextCursor ?? ""
        }
      })

    return { list } as const
  }),
  dependencies: [ListCursors.Default]
}) {}
