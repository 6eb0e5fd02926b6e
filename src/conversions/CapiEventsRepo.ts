import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { ActorContext } from "../actors/runtime/ActorKind.ts"
import { isUuid } from "../domain/ids.ts"

export type CapiEventStatus = "queued" | "sent" | "failed"

/** A conversion event as stored (GET /api/v1/app/meta-ads/capi/events/{id}). */
export interface CapiEventRow {
  readonly eventUid: string
  readonly eventName: string
  readonly eventId: string
  readonly status: CapiEventStatus
  readonly attempts: number
  readonly error: string | null
  readonly createdAt: Date
  readonly sentAt: Date | null
}

/** An event waiting to go, as a flush reads it (its payload in Meta's format). */
export interface QueuedCapiEvent {
  readonly eventUid: string
  readonly payload: { readonly event_time: number }
}

/**
 * `capi_events`: every statement of the table, in one module. The `capi` actor (CapiKind.ts) owns
 * the rows and writes them in its commits through the statement builders below (`insert`,
 * `settle`, `requeueFailed`, each handed to the actor's context); the API node only reads them
 * through the service.
 */
export class CapiEventsRepo extends Effect.Service<CapiEventsRepo>()("herald/conversions/CapiEventsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const find = Effect.fn("CapiEventsRepo.find")(function*(accountId: string, eventUid: string) {
      if (!isUuid(eventUid)) return undefined
      const [row] = yield* sql<CapiEventRow>`
        SELECT event_uid::text, event_name, event_id, status, attempts, error, created_at, sent_at
        FROM capi_events WHERE event_uid = ${eventUid} AND account_id = ${accountId}`.pipe(Effect.orDie)
      return row
    })

    /** How many of the account's events failed (what a redrive queues again). */
    const countFailed = Effect.fn("CapiEventsRepo.countFailed")(function*(accountId: string) {
      const [counted] = yield* sql<{ failed: number }>`
        SELECT count(*)::int AS failed FROM capi_events WHERE account_id = ${accountId} AND status = 'failed'`.pipe(Effect.orDie)
      return counted?.failed ?? 0
    })

    return { find, countFailed } as const
  })
}) {
  /** The actor's commit inserts an accepted event (skipped when applied again: the uid is the key). */
  static readonly insert = (
    ctx: Pick<ActorContext<never>, "insert">,
    accountId: string,
    event: { readonly uid: string; readonly eventName: string; readonly eventId: string; readonly payload: unknown }
  ) =>
    ctx.insert("capi_events", {
      event_uid: event.uid,
      account_id: accountId,
      event_name: event.eventName,
      event_id: event.eventId,
      payload: JSON.stringify(event.payload)
    })

  /** The account's oldest queued events, in the order they came (read by the actor, in its command). */
  static readonly queued = (accountId: string, limit: number) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<QueuedCapiEvent>`
        SELECT event_uid::text, payload FROM capi_events
        WHERE account_id = ${accountId} AND status = 'queued' ORDER BY seq LIMIT ${limit}`)

  /** Settles queued events (a statement for the actor's commit: `ctx.persist`). */
  static readonly settle = (uids: ReadonlyArray<string>, status: CapiEventStatus, attempts: number, error: string | null) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.asVoid(sql`
        UPDATE capi_events SET status = ${status}, attempts = ${attempts}, error = ${error},
          sent_at = CASE WHEN ${status} = 'sent' THEN now() END
        WHERE event_uid = ANY(${uids}::uuid[]) AND status = 'queued'`))

  /** Queues the account's failed events again (a statement for the actor's commit: `ctx.persist`). */
  static readonly requeueFailed = (accountId: string) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.asVoid(sql`
        UPDATE capi_events SET status = 'queued', error = NULL WHERE account_id = ${accountId} AND status = 'failed'`))
}
