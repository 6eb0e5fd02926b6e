import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ChangeFeed } from "../storage/ChangeFeed.ts"
import { makeReadCache } from "../storage/ReadCache.ts"

interface Subscription {
  readonly events: ReadonlyArray<string>
  readonly botId: string | null
  readonly channel: string
}

/**
 * Whether anyone listens for an event, answered from memory: the live subscriptions of each
 * account, dropped by the change feed when any of its webhooks is created, changed or deleted.
 * Hot paths that emit an event per message (the sender actor) ask first and skip the fan-out —
 * two statements per message — for the many accounts without a matching subscription.
 */
export class Subscriptions extends Effect.Service<Subscriptions>()("herald/webhooks/Subscriptions", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cache = yield* makeReadCache<ReadonlyArray<Subscription>>({ tables: ["webhooks", "accounts"], capacity: 100_000 })

    const of = (accountId: string) =>
      cache.get(
        accountId,
        () => Effect.map(
          sql<Subscription>`
            SELECT events, bot_id::text, channel FROM webhooks
            WHERE account_id = ${accountId}::uuid AND deleted_at IS NULL AND active`,
          (rows) => ({ accountId, value: rows })
        )
      )

    /** Whether an endpoint of the account's channel (RCS endpoints, or the WhatsApp developer webhook) wants the event. */
    const wants = (accountId: string, type: string, botId: string | null, channel: "rcs" | "whatsapp" = "rcs") =>
      Effect.map(of(accountId), (subscriptions) =>
        (subscriptions ?? []).some((s) => s.channel === channel && s.events.includes(type) && (s.botId === null || s.botId === botId)))

    return { wants } as const
  }),
  dependencies: [ChangeFeed.Default]
}) {}
