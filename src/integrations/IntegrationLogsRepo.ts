import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import type { ActorContext } from "../actors/runtime/ActorKind.ts"
import { type PagePosition, positionOf } from "../storage/pageCursor.ts"

export type IntegrationOutcome = "delivered" | "retrying" | "failed"

/** One call Herald made to an integration, as stored. */
export interface IntegrationLogRow {
  readonly logId: string
  readonly integration: string
  readonly statusCode: number | null
  readonly outcome: IntegrationOutcome
  readonly attempt: number
  readonly tookMs: number
  readonly events: number
  readonly responseSnippet: string | null
  readonly createdAt: Date
  readonly position: string
}

/**
 * `integration_logs`: every statement of the table, in one module. The rows are written by the
 * actor that made the call, in its commit (`IntegrationLogsRepo.insert`, through the actor's
 * context); the service reads them for GET /api/v1/app/integrations/logs.
 */
export class IntegrationLogsRepo extends Effect.Service<IntegrationLogsRepo>()("herald/integrations/IntegrationLogsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const position = sql.literal(positionOf("created_at"))

    /** One page of the account's calls, newest first, after `after` (one row more than `limit` when there are more). */
    const page = Effect.fn("IntegrationLogsRepo.page")(function*(
      accountId: string,
      input: { readonly integration: string | undefined; readonly after: PagePosition | undefined; readonly limit: number }
    ) {
      return yield* sql<IntegrationLogRow>`
        SELECT log_id::text, integration, status_code, outcome, attempt, took_ms, events, response_snippet, created_at, ${position} AS position
        FROM integration_logs
        WHERE account_id = ${accountId}
          ${input.integration === undefined ? sql`` : sql`AND integration = ${input.integration}`}
          ${input.after === undefined ? sql`` : sql`AND (created_at, log_id) < (${input.after.createdAt}::timestamptz, ${input.after.id}::uuid)`}
        ORDER BY created_at DESC, log_id DESC LIMIT ${input.limit + 1}`.pipe(Effect.orDie)
    })

    return { page } as const
  })
}) {
  /** A call's row, inserted in the commit of the actor that made it. */
  static readonly insert = (
    ctx: Pick<ActorContext<never>, "insert">,
    accountId: string,
    log: Omit<IntegrationLogRow, "logId" | "createdAt" | "position">
  ) =>
    ctx.insert("integration_logs", {
      log_id: randomUUID(),
      account_id: accountId,
      integration: log.integration,
      status_code: log.statusCode,
      outcome: log.outcome,
      attempt: log.attempt,
      took_ms: log.tookMs,
      events: log.events,
      response_snippet: log.responseSnippet
    })
}
