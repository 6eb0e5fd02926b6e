import { Effect } from "effect"
import type { SecretKeyAccount } from "../security/SecretKeys.ts"
import { ListCursors } from "../storage/ListCursors.ts"
import { IntegrationLogsRepo } from "./IntegrationLogsRepo.ts"

export const INTEGRATIONS = ["meta_capi"] as const
export const LOGS_LIMIT_DEFAULT = 50
export const LOGS_LIMIT_MAX = 1_000

/** GET /api/v1/app/integrations/logs: every call Herald made to an integration, newest first. */
export class IntegrationLogs extends Effect.Service<IntegrationLogs>()("herald/integrations/IntegrationLogs", {
  effect: Effect.gen(function*() {
    const repo = yield* IntegrationLogsRepo
    const cursors = yield* ListCursors

    const list = (account: SecretKeyAccount, query: { readonly integration?: string | undefined; readonly limit?: number | undefined; readonly cursor?: string | undefined }) =>
      Effect.gen(function*() {
        const scope = { list: "integration-logs", accountId: account.accountId }
        const after = yield* cursors.readPosition(scope, query.cursor)
        const limit = query.limit ?? LOGS_LIMIT_DEFAULT
        const rows = yield* repo.page(account.accountId, { integration: query.integration, after, limit })
        const page = cursors.positionPage(scope, rows, limit, (row) => ({ createdAt: row.position, id: row.logId }))
        return { items: page.rows, nextCursor: page.nextCursor }
      })

    return { list } as const
  }),
  dependencies: [IntegrationLogsRepo.Default, ListCursors.Default]
}) {}
