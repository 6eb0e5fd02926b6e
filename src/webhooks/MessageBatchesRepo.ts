import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { BroadcastListener } from "./Subscriptions.ts"

/** A staged event's place in line: its group and how long it has waited. */
export interface PendingItem {
  readonly itemId: string
  readonly webhookId: string
  readonly broadcastId: string
  readonly ageMs: number
}

/** A staged event taken for a batch. */
export interface StagedItem {
  readonly itemId: string
  readonly webhookId: string
  readonly accountId: string
  readonly broadcastId: string
  readonly botId: string
  readonly eventId: string
  readonly type: string
  readonly data: unknown
  readonly occurredAt: Date
}

/** The `(endpoint, type)` pairs of the listeners, as two parallel arrays for `unnest`. */
export const listenerPairs = (listeners: ReadonlyArray<BroadcastListener>) => ({
  hooks: listeners.flatMap((l) => l.types.map(() => l.webhookId)),
  types: listeners.flatMap((l) => l.types)
})

/**
 * The one writer of `webhook_batch_items`, the staged per-recipient events of broadcasts
 * (MessageBatches). Its statements run in the caller's transaction (a delivery report's, a
 * batcher round's) and keep their SqlError, as the statements they were part of did.
 */
export class MessageBatchesRepo extends Effect.Service<MessageBatchesRepo>()("herald/webhooks/MessageBatchesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Stages events given as parallel arrays (endpoint, type, data), in that order. */
    const stage = Effect.fn("MessageBatchesRepo.stage")((input: {
      readonly accountId: string
      readonly broadcastId: string
      readonly botId: string
      readonly occurredAt: Date
      readonly hooks: ReadonlyArray<string>
      readonly types: ReadonlyArray<string>
      readonly data: ReadonlyArray<string>
    }) =>
      sql`
        INSERT INTO webhook_batch_items (webhook_id, account_id, broadcast_id, bot_id, type, data, occurred_at)
        SELECT h, ${input.accountId}::uuid, ${input.broadcastId}::uuid, ${input.botId}::uuid, t, d, ${input.occurredAt.toISOString()}::timestamptz
        FROM unnest(${input.hooks}::uuid[], ${input.types}::text[], ${input.data}::jsonb[]) WITH ORDINALITY AS e(h, t, d, n) ORDER BY n`.pipe(Effect.asVoid))

    /** The batcher's lock for the rest of the transaction, if no other round holds it. */
    const lockRound = Effect.fn("MessageBatchesRepo.lockRound")(() =>
      Effect.map(
        sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(hashtext('herald.webhook_batches')) AS locked`,
        ([lock]) => lock?.locked === true
      ))

    /** The oldest staged events' ids and ages. */
    const pending = Effect.fn("MessageBatchesRepo.pending")((limit: number) =>
      sql<PendingItem>`
        SELECT item_id::text, webhook_id::text, broadcast_id::text, (extract(epoch FROM now() - staged_at) * 1000)::float8 AS age_ms
        FROM webhook_batch_items ORDER BY item_id LIMIT ${limit}`)

    /** Takes these staged events out, in staging order. */
    const take = Effect.fn("MessageBatchesRepo.take")((itemIds: ReadonlyArray<string>) =>
      Effect.map(
        sql<StagedItem>`
          DELETE FROM webhook_batch_items WHERE item_id = ANY(${itemIds}::bigint[])
          RETURNING item_id::text, webhook_id::text, account_id::text, broadcast_id::text, bot_id::text, event_id::text, type, data, occurred_at`,
        (rows) => [...rows].sort((a, b) => Number(a.itemId) - Number(b.itemId))
      ))

    return { stage, lockRound, pending, take } as const
  }),
  // Only the SqlClient, the node's (provided at the root).
  dependencies: []
}) {}

/**
 * For a broadcast statement (BroadcastsRepo's): a CTE, after its `changed` CTE (the targets moved,
 * with their message_id, phone, status and error), staging one event per target moved to sent or
 * failed and per endpoint that asked for it, in the statement that moved them: `message.sent` with
 * the data a single send's carries, `message.failed` with the Gateway error record too;
 * `broadcast_id` added. Nothing when nobody listens.
 */
export const stagedBatchItems = (sql: SqlClient.SqlClient) =>
(input: {
  readonly broadcastId: string
  readonly accountId: string
  readonly listening?: { readonly botId: string; readonly listeners: ReadonlyArray<BroadcastListener> } | undefined
}) => {
  if (input.listening === undefined || input.listening.listeners.length === 0) return sql``
  const { hooks, types } = listenerPairs(input.listening.listeners)
  const botId = input.listening.botId
  return sql`, staged AS (
          INSERT INTO webhook_batch_items (webhook_id, account_id, broadcast_id, bot_id, type, data, occurred_at)
          SELECT l.webhook_id, ${input.accountId}::uuid, ${input.broadcastId}::uuid, ${botId}::uuid, l.type,
                 CASE WHEN c.status = 'failed' THEN coalesce(c.error, '{}'::jsonb) ELSE '{}'::jsonb END
                   || jsonb_build_object('message_id', c.message_id, 'bot_id', ${botId}::text, 'to', c.phone, 'status', c.status,
                                         'broadcast_id', ${input.broadcastId}::text),
                 now()
          FROM changed c JOIN unnest(${hooks}::uuid[], ${types}::text[]) AS l(webhook_id, type) ON l.type = 'message.' || c.status
        )`
}
