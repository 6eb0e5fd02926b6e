import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ChangeFeed } from "../storage/ChangeFeed.ts"
import { makeReadCache } from "../storage/ReadCache.ts"

/** What sending to an endpoint needs. */
export interface Endpoint {
  readonly webhookId: string
  readonly accountId: string
  readonly url: string
  readonly secret: string
  /** Not deleted and active: deliveries to it go ahead. */
  readonly live: boolean
}

/**
 * Endpoints as delivery workers read them for every attempt, kept in memory and dropped by the
 * change feed when the endpoint changes (URL, secret, active, deleted), so an attempt always goes
 * where the endpoint points now.
 */
export class Endpoints extends Effect.Service<Endpoints>()("herald/webhooks/Endpoints", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cache = yield* makeReadCache<Endpoint>({ tables: ["webhooks", "accounts"], capacity: 100_000 })
    const find = (webhookId: string) =>
      cache.get(
        webhookId,
        () => Effect.map(
          sql<Endpoint>`
            SELECT webhook_id, account_id, url, secret, (deleted_at IS NULL AND active) AS live
            FROM webhooks WHERE webhook_id = ${webhookId}::uuid`,
          (rows) => rows[0] && { accountId: rows[0].accountId, value: rows[0] }
        )
      )
    return { find } as const
  }),
  dependencies: [ChangeFeed.Default]
}) {}
