import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export interface StatusCount {
  readonly status: string
  readonly n: number
}

export interface HourCount {
  readonly hour: Date
  readonly sent: number
  readonly failed: number
}

/** Whose messages count: the account's, of every bot or of these bots only (a member's assignment). */
export interface OverviewScope {
  readonly accountId: string
  /** Undefined for every bot of the account (WhatsApp's messages count then too). */
  readonly bots: ReadonlyArray<string> | undefined
}

/** The counts behind the overview (reads only: messages, broadcast targets, WhatsApp messages, the account). */
export class OverviewRepo extends Effect.Service<OverviewRepo>()("herald/overview/OverviewRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // A row is a send in the hour of its sent_at and a failure in the hour of its failed_at (a
    // message taken and rejected later is both).
    const SENT_OR_FAILED = (alias: string) => sql.literal(`CROSS JOIN LATERAL (VALUES ('sent', ${alias}.sent_at), ('failed', ${alias}.failed_at)) AS e(kind, at)`)
    const HOUR_OF_EVENT = sql.literal(
      "date_trunc('hour', e.at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour, count(*) FILTER (WHERE e.kind = 'sent')::int AS sent, count(*) FILTER (WHERE e.kind = 'failed')::int AS failed"
    )

    const botFilter = (scope: OverviewScope, column: string) =>
      scope.bots === undefined ? sql`` : sql`AND ${sql(column)} = ANY(${scope.bots}::uuid[])`

    /**
     * The account's plan and label, the counts by status of what was created since `today`, and
     * the sends and failures per hour since `from`.
     */
    const counts = (scope: OverviewScope, today: Date, from: Date) => {
      const account = scope.accountId
      // The window a row must fall in to count anywhere here.
      const since = new Date(Math.min(today.getTime(), from.getTime()))
      const singleByStatus = sql<StatusCount>`
        SELECT status, count(*)::int AS n FROM messages
        WHERE account_id = ${account}::uuid AND created_at >= ${today} ${botFilter(scope, "bot_id")}
        GROUP BY status`
      const singleHours = sql<HourCount>`
        SELECT ${HOUR_OF_EVENT} FROM messages m ${SENT_OR_FAILED("m")}
        WHERE m.account_id = ${account}::uuid AND m.created_at >= ${from}::timestamptz - interval '1 hour' AND e.at >= ${from}
          ${botFilter(scope, "m.bot_id")}
        GROUP BY 1`
      // Broadcasts active in the window, then their targets sent or failed in it.
      const active = sql`
        SELECT broadcast_id FROM broadcasts
        WHERE account_id = ${account}::uuid AND started_at IS NOT NULL AND coalesce(completed_at, cancelled_at, now()) >= ${since}
          ${botFilter(scope, "bot_id")}`
      const targetsByStatus = sql<StatusCount>`
        SELECT t.status, count(*)::int AS n FROM broadcast_targets t
        WHERE t.broadcast_id IN (${active}) AND coalesce(t.sent_at, t.failed_at) >= ${today} AND t.status <> 'cancelled'
        GROUP BY t.status`
      const targetHours = sql<HourCount>`
        SELECT ${HOUR_OF_EVENT} FROM broadcast_targets t ${SENT_OR_FAILED("t")}
        WHERE t.broadcast_id IN (${active}) AND coalesce(t.sent_at, t.failed_at) >= ${from} AND e.at >= ${from}
        GROUP BY 1`
      const whatsapp = scope.bots === undefined
      const waByStatus = whatsapp
        ? sql<StatusCount>`
          SELECT status, count(*)::int AS n FROM wa_messages WHERE account_id = ${account}::uuid AND created_at >= ${today} GROUP BY status`
        : Effect.succeed<ReadonlyArray<StatusCount>>([])
      const waHours = whatsapp
        ? sql<HourCount>`
          SELECT ${HOUR_OF_EVENT} FROM wa_messages w ${SENT_OR_FAILED("w")}
          WHERE w.account_id = ${account}::uuid AND w.created_at >= ${from}::timestamptz - interval '1 hour' AND e.at >= ${from}
          GROUP BY 1`
        : Effect.succeed<ReadonlyArray<HourCount>>([])
      return Effect.all([
        sql<{ plan: string; label: string }>`SELECT plan, label FROM accounts WHERE account_id = ${account}::uuid`,
        Effect.all([singleByStatus, targetsByStatus, waByStatus], { concurrency: "unbounded" }),
        Effect.all([singleHours, targetHours, waHours], { concurrency: "unbounded" })
      ], { concurrency: "unbounded" }).pipe(
        Effect.map(([account, statuses, hours]) => ({ account: account[0], statuses: statuses.flat(), hours: hours.flat() })),
        Effect.orDie
      )
    }

    return { counts } as const
  })
}) {}
