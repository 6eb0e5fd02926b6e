import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { GatewayErrorRecord } from "../domain/gatewayError.ts"
import { LOCK_NOT_AVAILABLE, sqlState } from "../storage/sqlState.ts"
import { NAME_PLACEHOLDER } from "../templates/placeholders.ts"
import { stagedBatchItems } from "../webhooks/MessageBatchesRepo.ts"
import type { BroadcastListener } from "../webhooks/Subscriptions.ts"
import { bookSelected } from "../wallet/ledgerWrites.ts"
import type { Audience, TargetStatus } from "./BroadcastsRepo.ts"
import { customerCondition } from "../customers/filterSql.ts"
import { OPTED_OUT_TRAIT } from "../customers/optOut.ts"
import { type CustomerQuery, parseCustomerQuery } from "../customers/traitFilters.ts"

/** Counter rows per broadcast (see the migration): more spreads concurrent reports further. */
export const COUNTER_SHARDS = 16
/** Adds counts to one counter row of a broadcast (SQL for an INSERT's ON CONFLICT). */
const ADD_ON_CONFLICT = `ON CONFLICT (broadcast_id, shard) DO UPDATE SET
  sent_count = broadcast_counters.sent_count + excluded.sent_count,
  delivered_count = broadcast_counters.delivered_count + excluded.delivered_count,
  read_count = broadcast_counters.read_count + excluded.read_count,
  failed_count = broadcast_counters.failed_count + excluded.failed_count,
  cancelled_count = broadcast_counters.cancelled_count + excluded.cancelled_count,
  skipped_count = broadcast_counters.skipped_count + excluded.skipped_count`

const shardOf = (targetNo: number) => targetNo % COUNTER_SHARDS

/**
 * A target's outcome as the sender's node writes it: `unconfirmed` is a send the gateway did not
 * confirm, in doubt until its delivery report or the report window.
 */
export interface TargetOutcome {
  readonly targetNo: number
  readonly status: "sent" | "unconfirmed" | "failed" | "cancelled"
  readonly error: GatewayErrorRecord | null
}

/** A target still to send: its contact's placeholder values come with it (null: not personalised). */
export interface PendingTarget {
  readonly targetNo: number
  readonly phone: string
  readonly messageId: string
  readonly vars: Readonly<Record<string, unknown>> | null
}

/**
 * Who hears of a statement's targets: the broadcast's bot and the endpoints that opted in to its
 * messages' `message.*` events (docs/webhooks.md, Broadcast messages). None (the usual case): the
 * statement stages nothing and is the one it always was.
 */
export interface Listening {
  readonly botId: string
  readonly listeners: ReadonlyArray<BroadcastListener>
}

/** Rank of a target status along sent → delivered → read; failed and cancelled are final. */
const RANK_SQL = (column: string) => `CASE ${column} WHEN 'pending' THEN 0 WHEN 'unconfirmed' THEN 0 WHEN 'sent' THEN 1 WHEN 'delivered' THEN 2 WHEN 'read' THEN 3 ELSE 9 END`

/** The audience a campaign's targets are written from (BroadcastsRepo's Audience, its query read). */
export type AudienceCondition =
  | { readonly kind: "query"; readonly query: CustomerQuery }
  | { readonly kind: "customers"; readonly ids: ReadonlyArray<string> }

/**
 * The failures a retry sends again: the gateway's own (a 5xx, a timeout before the request left)
 * and its throughput refusals. Not `recipient` or `content` (the same message would fail the same
 * way), not `config`, and not `unknown`: a send that was never confirmed may have reached the
 * customer, and WhatsApp would deliver it twice.
 */
export const RETRY_CATEGORIES = ["gateway", "quota"] as const

/** A stored audience as the condition its targets are counted and written with (its query was checked when the campaign was created). */
export const audienceCondition = (audience: Exclude<Audience, { kind: "retry" }>): AudienceCondition => {
  if (audience.kind === "customers") return { kind: "customers", ids: audience.ids }
  const query = parseCustomerQuery({ filters: audience.filters, tags: audience.tags })
  return { kind: "query", query: "issues" in query ? { filters: [], tags: [] } : query }
}

/**
 * The chunk runner's write path: a broadcast's targets (written from its list, sent, reported on,
 * cancelled), its counters and its chunks' claims; the one writer of `broadcast_targets`,
 * `broadcast_counters` and `broadcast_chunks`. Every statement that changes targets moves the
 * broadcast's counters by the rows it actually changed, in the same statement: a statement applied
 * again (after a crash, or a duplicated callback) changes no row and so moves no counter.
 */
export class BroadcastTargets extends Effect.Service<BroadcastTargets>()("herald/broadcasts/BroadcastTargets", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The CTE staging the moved targets' message events (the webhooks' one writer of webhook_batch_items builds it). */
    const stagedEvents = stagedBatchItems(sql)

    /**
     * The list as the broadcast will send to it: how many contacts, up to which contact_id.
     * "Busy" while an import into the list runs (its rows are not all visible yet).
     */
    const snapshotList = (listId: string) =>
      sql<{ readonly total: number; readonly upto: string }>`
        WITH free AS (SELECT list_id FROM contact_lists WHERE list_id = ${listId}::uuid FOR KEY SHARE NOWAIT)
        SELECT count(c.contact_id)::int AS total, coalesce(max(c.contact_id), 0)::text AS upto
        FROM free LEFT JOIN contacts c ON c.list_id = free.list_id`.pipe(
        Effect.map((rows) => rows[0] ?? { total: 0, upto: "0" }),
        Effect.catchTag("SqlError", (error) => sqlState(error) === LOCK_NOT_AVAILABLE ? Effect.succeed("Busy" as const) : Effect.fail(error))
      )

    /**
     * Writes the next targets: up to `limit` contacts of the list after contact `after` and up to
     * `upto`, numbered from `firstNo` in list order. Deterministic, so a repeat writes nothing
     * new. Answers how many contacts it read and the last one's id. A personalised broadcast
     * (variables not null: its keys are the template's placeholders) copies with each phone the
     * contact's values for those placeholders only (`vars`: `name` from the contact's name, any
     * other from its params, a dotted one by path), leaving out the ones the contact lacks.
     */
    const expand = (input: { broadcastId: string; listId: string; after: string; upto: string; firstNo: number; limit: number }) =>
      Effect.gen(function*() {
        // Read apart, not joined: the batch's plan stays the list's primary-key range in order.
        const [keys] = yield* sql<{ readonly paths: ReadonlyArray<string> | null }>`
          SELECT CASE WHEN variables IS NULL THEN NULL ELSE ARRAY(SELECT jsonb_object_keys(variables)) END AS paths
          FROM broadcasts WHERE broadcast_id = ${input.broadcastId}::uuid`
        const paths = keys?.paths ?? null
        const vars = paths === null ? sql`NULL::jsonb` : sql`(
          SELECT jsonb_strip_nulls(coalesce(jsonb_object_agg(p, CASE WHEN p = ${NAME_PLACEHOLDER} THEN to_jsonb(c.name) ELSE c.params #> string_to_array(p, '.') END), '{}'))
          FROM unnest(${paths}::text[]) AS p)`
        const [batch] = yield* sql<{ readonly read: number; readonly last: string | null }>`
          WITH source AS (
            SELECT c.contact_id, c.phone, row_number() OVER (ORDER BY c.contact_id) - 1 AS n, ${vars} AS vars
            FROM contacts c
            WHERE c.list_id = ${input.listId}::uuid AND c.contact_id > ${input.after}::bigint AND c.contact_id <= ${input.upto}::bigint
            ORDER BY c.contact_id
            LIMIT ${input.limit}
          ), written AS (
            INSERT INTO broadcast_targets (broadcast_id, target_no, phone, message_id, vars)
            SELECT ${input.broadcastId}::uuid, ${input.firstNo} + n, phone, gen_random_uuid(), vars FROM source
            ON CONFLICT DO NOTHING
          )
          SELECT count(*)::int AS read, max(contact_id)::text AS last FROM source`
        return batch!
      })

    /**
     * The CTEs that write a batch of a campaign's targets from \`source\` (phone, vars, customer_id,
     * opted_out, and n numbering them from \`firstNo\`) and count the skipped ones; a repeat writes
     * nothing new and counts nothing (ON CONFLICT).
     */
    const writeCustomerTargets = (broadcastId: string, firstNo: number) =>
      sql`, written AS (
            INSERT INTO broadcast_targets (broadcast_id, target_no, phone, message_id, vars, customer_id, status)
            SELECT ${broadcastId}::uuid, ${firstNo} + n, phone, gen_random_uuid(), vars, customer_id,
                   CASE WHEN opted_out THEN 'skipped' ELSE 'pending' END
            FROM source
            ON CONFLICT DO NOTHING
            RETURNING status
          ), counted AS (
            INSERT INTO broadcast_counters (broadcast_id, shard, skipped_count)
            SELECT ${broadcastId}::uuid, ${shardOf(firstNo)}, count(*)::int FROM written WHERE status = 'skipped' HAVING count(*) > 0
            ${sql.literal(ADD_ON_CONFLICT)}
          )`

    const audienceWhere = (accountId: string, audience: AudienceCondition) =>
      audience.kind === "customers"
        ? sql`c.account_id = ${accountId}::uuid AND c.customer_id = ANY(${audience.ids}::uuid[])`
        : sql`c.account_id = ${accountId}::uuid AND ${customerCondition(sql, audience.query)}`

    /**
     * A campaign's audience as it starts: how many customers, and the instant that freezes it
     * (customers recorded later are not sent to).
     */
    const snapshotAudience = (accountId: string, audience: AudienceCondition) =>
      sql<{ readonly total: number; readonly upto: string }>`
        SELECT count(*)::int AS total, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS upto
        FROM customers c WHERE ${audienceWhere(accountId, audience)} AND c.created_at <= now()`.pipe(Effect.map((rows) => rows[0]!))

    /**
     * Writes a campaign's next targets: up to `limit` customers of the audience after customer
     * `after` (in customer_id order), recorded by `upto`, numbered from `firstNo`. A customer who
     * opted out is written `skipped` (counted, never sent); the others carry their values of the
     * traits the template's values name (`vars`, a trait they lack left out). Deterministic for a
     * given state of the customers, and a repeat writes nothing new (ON CONFLICT): a batch applied
     * again after a crash moves no counter.
     */
    const expandAudience = (input: {
      broadcastId: string
      accountId: string
      audience: AudienceCondition
      traits: ReadonlyArray<string> | null
      after: string
      upto: string
      firstNo: number
      limit: number
    }) =>
      Effect.gen(function*() {
        const vars = input.traits === null ? sql`NULL::jsonb` : sql`(
          SELECT jsonb_strip_nulls(coalesce(jsonb_object_agg(p, c.traits -> p), '{}')) FROM unnest(${input.traits}::text[]) AS p)`
        const [batch] = yield* sql<{ readonly read: number; readonly last: string | null }>`
          WITH source AS (
            SELECT c.customer_id, c.phone, row_number() OVER (ORDER BY c.customer_id) - 1 AS n, ${vars} AS vars,
                   coalesce(c.traits -> ${OPTED_OUT_TRAIT} = 'true'::jsonb, false) AS opted_out
            FROM customers c
            WHERE ${audienceWhere(input.accountId, input.audience)} AND c.customer_id > ${input.after}::uuid
              AND c.created_at <= ${input.upto}::timestamptz
            ORDER BY c.customer_id
            LIMIT ${input.limit}
          )${writeCustomerTargets(input.broadcastId, input.firstNo)}
          SELECT count(*)::int AS read, max(customer_id::text) AS last FROM source`
        return batch!
      })

    /** A retry's source as it starts: how many of its targets failed with a category worth retrying, up to which target_no. */
    const snapshotRetry = (sourceId: string) =>
      sql<{ readonly total: number; readonly upto: string }>`
        SELECT count(*)::int AS total, coalesce(max(target_no), -1)::text AS upto FROM broadcast_targets
        WHERE broadcast_id = ${sourceId}::uuid AND status = 'failed' AND error->>'category' IN ${sql.in(RETRY_CATEGORIES)}`.pipe(
        Effect.map((rows) => rows[0]!)
      )

    /**
     * Writes a retry's next targets: the source's targets after target `after` that failed with a
     * retry category, with their phone, customer and values, each a new message id. A campaign's
     * customer who opted out since is written `skipped`.
     */
    const expandRetry = (input: { broadcastId: string; sourceId: string; after: string; upto: string; firstNo: number; limit: number }) =>
      Effect.gen(function*() {
        const [batch] = yield* sql<{ readonly read: number; readonly last: string | null }>`
          WITH source AS (
            SELECT s.target_no, s.phone, s.vars, s.customer_id, row_number() OVER (ORDER BY s.target_no) - 1 AS n,
                   coalesce(c.traits -> ${OPTED_OUT_TRAIT} = 'true'::jsonb, false) AS opted_out
            FROM broadcast_targets s LEFT JOIN customers c ON c.customer_id = s.customer_id
            WHERE s.broadcast_id = ${input.sourceId}::uuid AND s.target_no > ${input.after}::int AND s.target_no <= ${input.upto}::int
              AND s.status = 'failed' AND s.error->>'category' IN ${sql.in(RETRY_CATEGORIES)}
            ORDER BY s.target_no
            LIMIT ${input.limit}
          )${writeCustomerTargets(input.broadcastId, input.firstNo)}
          SELECT count(*)::int AS read, max(target_no)::text AS last FROM source`
        return batch!
      })

    /**
     * A campaign's targets a stopped node claimed and left without an outcome: WhatsApp has no
     * idempotency key, so they are never sent again. They become unconfirmed (a status webhook
     * still moves them on; the expiry fails them).
     */
    const markUnconfirmed = (broadcastId: string, first: number, upto: number, error: GatewayErrorRecord) =>
      sql`
        UPDATE broadcast_targets SET status = 'unconfirmed', unconfirmed_at = now(),
          error = ${JSON.stringify(error)}::jsonb || jsonb_build_object('message_id', message_id::text), failure_reason = ${error.message}
        WHERE broadcast_id = ${broadcastId}::uuid AND target_no BETWEEN ${first} AND ${upto} AND status = 'pending'`.pipe(Effect.asVoid)

    /** Where a chunk's sending stands: the last target that may have left, and since when. */
    const chunkClaim = (broadcastId: string, chunkNo: number) =>
      sql<{ readonly claimedUpto: number; readonly ageMs: number }>`
        SELECT claimed_upto, (extract(epoch FROM now() - claimed_at) * 1000)::float8 AS age_ms
        FROM broadcast_chunks WHERE broadcast_id = ${broadcastId}::uuid AND chunk_no = ${chunkNo}`.pipe(Effect.map((rows) => rows[0]))

    /** Marks targets up to `upto` of the chunk as possibly sent, before they are, by the run `runId`. */
    const claim = (broadcastId: string, chunkNo: number, upto: number, runId: string) =>
      sql`
        INSERT INTO broadcast_chunks (broadcast_id, chunk_no, claimed_upto, claimed_by) VALUES (${broadcastId}::uuid, ${chunkNo}, ${upto}, ${runId})
        ON CONFLICT (broadcast_id, chunk_no) DO UPDATE
          SET claimed_upto = greatest(broadcast_chunks.claimed_upto, excluded.claimed_upto), claimed_at = now(), claimed_by = excluded.claimed_by`

    /**
     * A run that stops without having sent what it claimed beyond `sentUpto` gives its claim up,
     * if it is still its own: stale at once, and no higher than what may have left.
     */
    const releaseClaim = (broadcastId: string, chunkNo: number, sentUpto: number, runId: string) =>
      sql`
        UPDATE broadcast_chunks SET claimed_upto = least(claimed_upto, ${sentUpto}), claimed_at = 'epoch'
        WHERE broadcast_id = ${broadcastId}::uuid AND chunk_no = ${chunkNo} AND claimed_by = ${runId}`

    const pendingTargets = (broadcastId: string, first: number, last: number) =>
      sql<PendingTarget>`
        SELECT target_no, phone, message_id, vars FROM broadcast_targets
        WHERE broadcast_id = ${broadcastId}::uuid AND target_no BETWEEN ${first} AND ${last} AND status = 'pending'
        ORDER BY target_no`

    /**
     * Records send outcomes of pending targets, moves the counters by the rows changed and books
     * one charge for the ones sent (its reference names the statement's first target and a
     * random part, so it is never confused with another; a repeat changes no row, books nothing).
     * With `listening`, the same statement stages the sent and failed targets' `message.*` events.
     */
    const recordOutcomes = (input: {
      broadcastId: string
      accountId: string
      price: string
      /** RCS charges a message when the gateway takes it; WhatsApp when Meta reports it delivered (applyReport). */
      chargeSent?: boolean | undefined
      outcomes: ReadonlyArray<TargetOutcome>
      listening?: Listening | undefined
    }) => {
      if (input.outcomes.length === 0) return Effect.void
      const numbers = input.outcomes.map((o) => o.targetNo)
      const first = Math.min(...numbers)
      const last = Math.max(...numbers)
      return sql`
        WITH o AS (
          SELECT * FROM unnest(${input.outcomes.map((o) => o.targetNo)}::int[], ${input.outcomes.map((o) => o.status)}::text[],
                               ${input.outcomes.map((o) => o.error === null ? null : JSON.stringify(o.error))}::jsonb[]) AS o(target_no, status, error)
        ), changed AS (
          UPDATE broadcast_targets t SET
            status = o.status,
            error = o.error,
            failure_reason = o.error->>'message',
            sent_at = CASE WHEN o.status = 'sent' THEN now() END,
            failed_at = CASE WHEN o.status = 'failed' THEN now() END,
            unconfirmed_at = CASE WHEN o.status = 'unconfirmed' THEN now() END
          FROM o
          -- The range keeps the plan on the primary key: a bare join scans the whole broadcast.
          WHERE t.broadcast_id = ${input.broadcastId}::uuid AND t.target_no BETWEEN ${first} AND ${last}
            AND t.target_no = o.target_no AND t.status = 'pending'
          RETURNING t.status, t.message_id, t.phone, t.error
        )${stagedEvents(input)}, counts AS (
          SELECT count(*) FILTER (WHERE status = 'sent')::int AS sent,
                 count(*) FILTER (WHERE status = 'failed')::int AS failed,
                 count(*) FILTER (WHERE status = 'cancelled')::int AS cancelled
          FROM changed
        ), charged AS (
          ${bookSelected(sql, sql`
            SELECT ${input.accountId}::uuid, 'charge', counts.sent * ${input.price}::numeric,
                   'broadcast:' || ${input.broadcastId} || ':' || ${first} || ':' || gen_random_uuid()
            FROM counts WHERE counts.sent > 0 AND ${input.chargeSent !== false}`)}
        )
        INSERT INTO broadcast_counters (broadcast_id, shard, sent_count, failed_count, cancelled_count)
        SELECT ${input.broadcastId}::uuid, ${shardOf(first)}, counts.sent, counts.failed, counts.cancelled FROM counts
        ${sql.literal(ADD_ON_CONFLICT)}`.pipe(Effect.asVoid)
    }

    /**
     * Cancels the pending targets from `first` on (to `last` when given), counted as cancelled
     * with `unwritten` more: contacts a cancelled expansion never wrote as targets.
     */
    const cancelPending = (broadcastId: string, first: number, last: number | null, unwritten = 0) =>
      sql`
        WITH changed AS (
          UPDATE broadcast_targets SET status = 'cancelled'
          WHERE broadcast_id = ${broadcastId}::uuid AND target_no >= ${first} ${last === null ? sql`` : sql`AND target_no <= ${last}`}
            AND status = 'pending'
          RETURNING 1
        )
        INSERT INTO broadcast_counters (broadcast_id, shard, cancelled_count)
        SELECT ${broadcastId}::uuid, ${shardOf(first)}, ${unwritten} + (SELECT count(*) FROM changed)::int
        ${sql.literal(ADD_ON_CONFLICT)}`.pipe(Effect.asVoid)

    /**
     * A gateway report about a broadcast's message: what the gateway says happened to it, with the
     * counters and the charge. A target in doubt (pending after a stopped node claimed it,
     * unconfirmed, or failed as unconfirmed) takes the reported status, counted as sent and charged
     * once if it reached the recipient; a target already sent only moves forward (sent → delivered
     * → read; failed from sent or delivered, refunded). "unknown" when no target has the
     * message_id; "unchanged" for a duplicate or a late report.
     */
    const applyReport = (report: { messageId: string; status: "sent" | "delivered" | "read" | "failed"; at: Date; error: GatewayErrorRecord | undefined }) =>
      sql<{
        readonly before: TargetStatus
        readonly after: TargetStatus
        readonly broadcastId: string
        readonly accountId: string
        readonly botId: string | null
        readonly phone: string
      }>`
        WITH prev AS (
          SELECT t.broadcast_id, t.target_no, t.status, t.error, b.channel, b.account_id, b.price
          FROM broadcast_targets t JOIN broadcasts b USING (broadcast_id)
          WHERE t.message_id = ${report.messageId}::uuid FOR UPDATE OF t
        ), moved AS (
          UPDATE broadcast_targets t SET
            status = ${report.status},
            sent_at = CASE WHEN ${report.status} IN ('sent', 'delivered', 'read') THEN coalesce(t.sent_at, ${report.at.toISOString()}::timestamptz) ELSE t.sent_at END,
            delivered_at = CASE WHEN ${report.status} IN ('delivered', 'read') THEN coalesce(t.delivered_at, ${report.at.toISOString()}::timestamptz) END,
            read_at = CASE WHEN ${report.status} = 'read' THEN ${report.at.toISOString()}::timestamptz END,
            failed_at = CASE WHEN ${report.status} = 'failed' THEN ${report.at.toISOString()}::timestamptz END,
            error = ${report.error === undefined ? null : JSON.stringify(report.error)}::jsonb,
            failure_reason = ${report.error?.message ?? null}
          FROM prev
          WHERE t.broadcast_id = prev.broadcast_id AND t.target_no = prev.target_no
            AND (
              prev.status IN ('pending', 'unconfirmed')
              OR (prev.status IN ('sent', 'delivered')
                  AND (${report.status} = 'failed' OR ${sql.literal(RANK_SQL(`'${report.status}'`))} > ${sql.literal(RANK_SQL("prev.status"))}))
              OR (prev.status = 'failed' AND prev.error->>'message_id' IS NOT NULL AND ${report.status} IN ('sent', 'delivered', 'read'))
            )
          RETURNING prev.status AS before, t.status AS after, t.broadcast_id, t.message_id, t.target_no, t.phone, prev.channel, prev.account_id, prev.price
        ), charged AS (
          -- An RCS message is charged when the gateway takes it: one that reached the recipient and
          -- was not charged when recorded (it was in doubt) is charged now, once. A WhatsApp
          -- message is charged when Meta reports it delivered (or read), once.
          ${bookSelected(sql, sql`
            SELECT m.account_id, 'charge', m.price, m.message_id::text FROM moved m
            WHERE (m.channel = 'rcs' AND m.after IN ('sent', 'delivered', 'read') AND m.before IN ('pending', 'unconfirmed', 'failed'))
               OR (m.channel = 'whatsapp' AND m.after IN ('delivered', 'read') AND m.before NOT IN ('delivered', 'read'))`)}
        ), refunded AS (
          -- Rejected after it was charged: the charge is given back.
          ${bookSelected(sql, sql`
            SELECT m.account_id, 'refund', m.price, m.message_id::text FROM moved m
            WHERE m.after = 'failed' AND ((m.channel = 'rcs' AND m.before IN ('sent', 'delivered')) OR (m.channel = 'whatsapp' AND m.before = 'delivered'))`)}
        ), counted AS (
          INSERT INTO broadcast_counters (broadcast_id, shard, sent_count, delivered_count, read_count, failed_count)
          SELECT m.broadcast_id, m.target_no % ${COUNTER_SHARDS},
                 (m.after IN ('sent', 'delivered', 'read') AND m.before IN ('pending', 'unconfirmed', 'failed'))::int
                   - (m.after = 'failed' AND m.before IN ('sent', 'delivered'))::int,
                 (m.after IN ('delivered', 'read') AND m.before NOT IN ('delivered', 'read'))::int - (m.after = 'failed' AND m.before = 'delivered')::int,
                 (m.after = 'read')::int,
                 (m.after = 'failed' AND m.before <> 'failed')::int - (m.before = 'failed' AND m.after <> 'failed')::int
          FROM moved m
          ${sql.literal(ADD_ON_CONFLICT)}
        )
        SELECT m.before, m.after, m.broadcast_id::text, m.account_id::text, b.bot_id::text, m.phone FROM moved m JOIN broadcasts b USING (broadcast_id)
        UNION ALL
        SELECT status AS before, status AS after, NULL, NULL, NULL, NULL FROM prev WHERE NOT EXISTS (SELECT 1 FROM moved)`.pipe(
        Effect.map((rows) => {
          const row = rows[0]
          if (row === undefined) return { outcome: "unknown" as const }
          return row.before !== row.after
            ? {
              outcome: "applied" as const,
              broadcastId: row.broadcastId,
              accountId: row.accountId,
              botId: row.botId,
              phone: row.phone,
              status: row.after,
              // Counted sent by this report (the counters' rule above): it had not been.
              countedSent: (row.after === "sent" || row.after === "delivered" || row.after === "read") &&
                (row.before === "pending" || row.before === "unconfirmed" || row.before === "failed")
            }
            : { outcome: "unchanged" as const }
        })
      )

    /**
     * The chunk's unconfirmed targets: how many, and how long until the oldest has waited out the
     * report window (0 when it has).
     */
    const unconfirmedIn = (broadcastId: string, first: number, last: number, windowMs: number) =>
      sql<{ readonly count: number; readonly waitMs: number }>`
        SELECT count(*)::int AS count,
               coalesce(greatest(0, extract(epoch FROM min(unconfirmed_at) + ${windowMs} * interval '1 millisecond' - now()) * 1000), 0)::float8 AS wait_ms
        FROM broadcast_targets
        WHERE broadcast_id = ${broadcastId}::uuid AND target_no BETWEEN ${first} AND ${last} AND status = 'unconfirmed'`.pipe(Effect.map((rows) => rows[0]!))

    /**
     * Fails the chunk's unconfirmed targets that waited out the report window with no report: they
     * keep their "send not confirmed" record (a report arriving later still gives them their real
     * status, see applyReport).
     */
    const failUnconfirmed = (broadcastId: string, first: number, last: number, windowMs: number, listening?: { accountId: string } & Listening) =>
      sql`
        WITH changed AS (
          UPDATE broadcast_targets SET status = 'failed', failed_at = now()
          WHERE broadcast_id = ${broadcastId}::uuid AND target_no BETWEEN ${first} AND ${last} AND status = 'unconfirmed'
            AND unconfirmed_at <= now() - ${windowMs} * interval '1 millisecond'
          RETURNING status, message_id, phone, error
        )${stagedEvents({ broadcastId, accountId: listening?.accountId ?? "", listening })}
        INSERT INTO broadcast_counters (broadcast_id, shard, failed_count)
        SELECT ${broadcastId}::uuid, ${shardOf(first)}, (SELECT count(*) FROM changed)::int
        ${sql.literal(ADD_ON_CONFLICT)}`.pipe(Effect.asVoid)


    return {
      snapshotList,
      expand,
      snapshotAudience,
      expandAudience,
      snapshotRetry,
      expandRetry,
      markUnconfirmed,
      chunkClaim,
      releaseClaim,
      claim,
      pendingTargets,
      recordOutcomes,
      cancelPending,
      applyReport,
      unconfirmedIn,
      failUnconfirmed
    } as const
  })
}) {}
