import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Deferred, Effect, Metric, Queue, Schema } from "effect"
import { labelled } from "../../observability/labelled.ts"
import { firstUnstorable, storableText } from "../../domain/storable.ts"
import { commitBatchSize } from "./metrics.ts"
import { encodeJson } from "./transport.ts"

export class FencedOut extends Schema.TaggedError<FencedOut>()("FencedOut", {
  kind: Schema.String,
  partition: Schema.Number,
  epoch: Schema.Number,
  message: Schema.String
}) {}

export interface OutboxRow {
  readonly subject: string
  readonly msgId: string
  readonly payload: unknown
  readonly headers: Record<string, string> | null
}

export interface TimerRow {
  readonly timerId: string
  readonly key: string
  readonly fireAt: Date
  readonly command: unknown
}

/** A row for one of an actor kind's own tables (ActorContext.insert). */
export interface InsertRow {
  readonly table: string
  readonly row: Readonly<Record<string, unknown>>
  /** An update instead: of the row whose `updateOn` columns match, set the row's other columns. */
  readonly updateOn?: ReadonlyArray<string>
}

export interface PoisonRow {
  readonly key: string
  readonly seq: number
  /** The command as JSON; undefined when its bytes are not JSON. */
  readonly command: unknown
  /** The command's bytes as it travelled, when it came from the stream. */
  readonly raw?: Uint8Array | undefined
  readonly error: string
  readonly attempts: number
}

/** Everything one actor's processed commands change, written in one transaction. */
export interface StateWrite {
  readonly key: string
  /** Encoded state, or undefined when only side rows change (e.g. a parked first command). */
  state: unknown
  lastSeq: number
  readonly outbox: Array<OutboxRow>
  readonly timersAdd: Array<TimerRow>
  readonly timersRemove: Array<string>
  readonly poison: Array<PoisonRow>
  readonly inserts: Array<InsertRow>
  readonly persist: Array<Effect.Effect<void, SqlError, SqlClient.SqlClient>>
}

export const emptyWrite = (key: string, lastSeq: number): StateWrite => ({
  key,
  state: undefined,
  lastSeq,
  outbox: [],
  timersAdd: [],
  timersRemove: [],
  poison: [],
  inserts: [],
  persist: []
})

/** Which owned partition a write comes from, and the epoch it holds it at (its fencing token). */
export interface Fence {
  readonly partition: number
  readonly epoch: number
}

interface Pending {
  readonly fence: Fence
  readonly writes: ReadonlyArray<StateWrite>
  readonly done: Deferred.Deferred<void, FencedOut | SqlError>
}

/** Creates an actor kind's state table when absent (two nodes may race: both succeed). */
export const ensureStateTable = (table: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      CREATE TABLE IF NOT EXISTS ${sql(table)} (
        actor_key text PRIMARY KEY,
        partition integer NOT NULL,
        state jsonb NOT NULL,
        last_seq bigint NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`.pipe(
      Effect.catchTag("SqlError", (e) => {
        const code = (e.cause as { code?: string } | undefined)?.code
        // Racing creators: unique violation on the catalog, relation or type already exists.
        return code === "23505" || code === "42P07" || code === "42710" ? Effect.void : Effect.fail(e)
      })
    )
  })

/**
 * Group commit for every owned partition of one kind on this node. Partitions submit their writes;
 * the committer takes whatever has queued up (no artificial linger: while a transaction runs the
 * next batch accumulates) and writes it in one transaction that first checks the fence of every
 * partition in it:
 *
 *   SELECT partition, epoch FROM partition_epochs WHERE kind AND partition = ANY(<ours>) FOR SHARE
 *
 * A newer owner has raised the epoch before it started, so a paused old owner finds another epoch
 * and cannot commit, whatever the clocks say; the share lock also orders it against the raise. A
 * partition fenced out fails alone (its submissions get FencedOut, the others are written). When a
 * batch fails for another reason, each submission (a partition's batch, or a retrying actor's
 * write) is retried alone, so one bad submission fails only itself. One transaction for many
 * partitions, rather than one per partition, saves most of the round trips and fsyncs; a few run
 * at once so one slow commit does not stall the kind.
 */
export const makeKindCommitter = (options: { readonly kind: string; readonly table: string; readonly maxBatch?: number; readonly concurrency?: number }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const queue = yield* Queue.unbounded<Pending>()
    const batchMetric = labelled(commitBatchSize, { kind: options.kind })

    /** The partitions of the batch whose epoch is not the one they write with. */
    const fencedOut = (fences: ReadonlyArray<Fence>) =>
      Effect.map(
        sql<{ partition: number; epoch: string }>`
          SELECT partition, epoch FROM partition_epochs
          WHERE kind = ${options.kind} AND partition = ANY(${[...new Set(fences.map((f) => f.partition))]}::int[])
          FOR SHARE`,
        (rows) => {
          const current = new Map(rows.map((r) => [r.partition, Number(r.epoch)]))
          return fences.filter((f) => current.get(f.partition) !== f.epoch)
        }
      )

    /** Rows grouped by table and columns, one INSERT per group (bounded by Postgres' 65,535 parameters). */
    const insertRows = (rows: ReadonlyArray<InsertRow>) =>
      Effect.gen(function*() {
        const groups = new Map<string, { table: string; updateOn: ReadonlyArray<string> | undefined; rows: Array<Readonly<Record<string, unknown>>> }>()
        for (const { table, row, updateOn } of rows) {
          const id = `${table}(${Object.keys(row).join(",")})${updateOn ? `where(${updateOn.join(",")})` : ""}`
          const group = groups.get(id)
          if (group === undefined) groups.set(id, { table, updateOn, rows: [row] })
          else group.rows.push(row)
        }
        for (const { table, updateOn, rows: all } of groups.values()) {
          if (updateOn !== undefined) {
            yield* updateRows(table, updateOn, lastPerKey(all, updateOn))
            continue
          }
          const perStatement = Math.max(1, Math.floor(60_000 / Math.max(1, Object.keys(all[0]!).length)))
          for (let i = 0; i < all.length; i += perStatement) {
            yield* sql`INSERT INTO ${sql(table)} ${sql.insert(all.slice(i, i + perStatement) as Array<Record<string, unknown>>)} ON CONFLICT DO NOTHING`
          }
        }
      })

    /**
     * Rows of one table updated by one statement: the values travel as one JSON array that
     * `jsonb_populate_recordset` turns into rows of the table's own type, so every column gets its
     * type without the committer knowing it.
     */
    const updateRows = (table: string, key: ReadonlyArray<string>, rows: ReadonlyArray<Readonly<Record<string, unknown>>>) => {
      const set = Object.keys(rows[0]!).filter((c) => !key.includes(c))
      return sql`
        UPDATE ${sql(table)} AS t SET ${sql.join(", ", false)(set.map((c) => sql`${sql(c)} = v.${sql(c)}`))}
        FROM jsonb_populate_recordset(null::${sql(table)}, ${JSON.stringify(rows)}::jsonb) AS v
        WHERE ${sql.join(" AND ", false)(key.map((c) => sql`t.${sql(c)} = v.${sql(c)}`))}`
    }

    const write = (batch: ReadonlyArray<Pending>) =>
      Effect.gen(function*() {
        const stale = yield* fencedOut(batch.map((p) => p.fence))
        if (stale.length > 0) return yield* new StaleFences({ fences: stale })
        const tagged = batch.flatMap((p) => p.writes.map((w) => ({ partition: p.fence.partition, w })))
        const states = tagged.filter(({ w }) => w.state !== undefined)
        if (states.length > 0) {
          yield* sql`
            INSERT INTO ${sql(options.table)} (actor_key, partition, state, last_seq)
            SELECT k, p, s, q
            FROM unnest(${states.map(({ w }) => w.key)}::text[], ${states.map(({ partition }) => partition)}::int[],
              ${states.map(({ w }) => JSON.stringify(w.state))}::jsonb[], ${states.map(({ w }) => w.lastSeq)}::bigint[]) AS t(k, p, s, q)
            ON CONFLICT (actor_key) DO UPDATE SET state = excluded.state, last_seq = excluded.last_seq, updated_at = now()
            WHERE ${sql(options.table)}.last_seq < excluded.last_seq`
        }
        const outbox = tagged.flatMap(({ w }) => w.outbox)
        if (outbox.length > 0) {
          yield* sql`
            INSERT INTO actor_outbox (subject, msg_id, payload, headers)
            SELECT * FROM unnest(${outbox.map((o) => o.subject)}::text[], ${outbox.map((o) => o.msgId)}::text[],
              ${outbox.map((o) => JSON.stringify(o.payload))}::jsonb[], ${outbox.map((o) => (o.headers ? JSON.stringify(o.headers) : null))}::jsonb[])`
        }
        const timersRemove = tagged.flatMap(({ w }) => w.timersRemove)
        if (timersRemove.length > 0) {
          yield* sql`DELETE FROM actor_timers WHERE timer_id = ANY(${timersRemove}::text[])`
        }
        const timers = tagged.flatMap(({ partition, w }) => w.timersAdd.map((t) => ({ partition, t })))
        if (timers.length > 0) {
          yield* sql`
            INSERT INTO actor_timers (timer_id, kind, partition, actor_key, fire_at, command)
            SELECT id, ${options.kind}, p, k, f, c
            FROM unnest(${timers.map(({ t }) => t.timerId)}::text[], ${timers.map(({ partition }) => partition)}::int[], ${timers.map(({ t }) => t.key)}::text[],
              ${timers.map(({ t }) => t.fireAt.toISOString())}::timestamptz[], ${timers.map(({ t }) => JSON.stringify(t.command))}::jsonb[]) AS t(id, p, k, f, c)
            ON CONFLICT (timer_id) DO UPDATE SET fire_at = excluded.fire_at, command = excluded.command`
        }
        for (const { partition, w } of tagged) {
          for (const p of w.poison) {
            // Parking works for any payload: what jsonb cannot hold is kept as bytes.
            const storable = p.command !== undefined && firstUnstorable(p.command, Number.MAX_SAFE_INTEGER) === undefined
            const bytes = storable ? null : Buffer.from(p.raw ?? encodeJson(p.command))
            yield* sql`
              INSERT INTO actor_poison (kind, partition, actor_key, seq, command, command_bytes, error, attempts)
              VALUES (${options.kind}, ${partition}, ${p.key}, ${p.seq}, ${storable ? JSON.stringify(p.command) : null}::jsonb, ${bytes},
                      ${storableText(p.error)}, ${p.attempts})
              ON CONFLICT (kind, seq) DO NOTHING`
          }
        }
        yield* insertRows(tagged.flatMap(({ w }) => w.inserts))
        for (const { w } of tagged) for (const persist of w.persist) yield* persist
      }).pipe(sql.withTransaction, Effect.provideService(SqlClient.SqlClient, sql))

    const fenced = (p: Pending) =>
      new FencedOut({
        kind: options.kind,
        partition: p.fence.partition,
        epoch: p.fence.epoch,
        message: `epoch ${p.fence.epoch} of ${options.kind}/${p.fence.partition} is no longer current`
      })

    const run = (batch: ReadonlyArray<Pending>): Effect.Effect<void> =>
      batch.length === 0 ? Effect.void : write(batch).pipe(
        Effect.matchCauseEffect({
          onSuccess: () => Effect.forEach(batch, (p) => Deferred.succeed(p.done, undefined), { discard: true }),
          onFailure: (cause) => {
            const error = cause._tag === "Fail" ? cause.error : undefined
            if (error === undefined) return Effect.forEach(batch, (p) => Deferred.failCause(p.done, cause as any), { discard: true })
            if (error._tag === "StaleFences") {
              const stale = (p: Pending) => error.fences.some((f) => f.partition === p.fence.partition && f.epoch === p.fence.epoch)
              return Effect.zipRight(
                Effect.forEach(batch.filter(stale), (p) => Deferred.fail(p.done, fenced(p)), { discard: true }),
                run(batch.filter((p) => !stale(p)))
              )
            }
            if (batch.length === 1) return Deferred.fail(batch[0]!.done, error)
            return Effect.forEach(batch, (p) => run([p]), { discard: true })
          }
        })
      )

    const committerFiber = Effect.gen(function*() {
      for (;;) {
        const batch = yield* Queue.takeBetween(queue, 1, options.maxBatch ?? 500)
        yield* Metric.update(batchMetric, batch.length)
        yield* run(Array.from(batch))
      }
    })
    yield* Effect.forEach(Array.from({ length: options.concurrency ?? 4 }), () => Effect.forkScoped(committerFiber), { discard: true })

    /** Waits until the writes are durable (or fail together: fenced out, or the database failed). */
    const commit = (fence: Fence, writes: ReadonlyArray<StateWrite>) =>
      Effect.flatMap(Deferred.make<void, FencedOut | SqlError>(), (done) =>
        Effect.zipRight(Queue.offer(queue, { fence, writes, done }), Deferred.await(done)))

    return { commit } as const
  })

export type KindCommitter = Effect.Effect.Success<ReturnType<typeof makeKindCommitter>>

/** The partitions a batch wrote for whose epoch has moved on (internal to a commit). */
class StaleFences extends Schema.TaggedError<StaleFences>()("StaleFences", {
  fences: Schema.Array(Schema.Struct({ partition: Schema.Number, epoch: Schema.Number }))
}) {}

/** A committer for one partition at one epoch (tests, and anything that owns a single partition). */
export const makeCommitter = (options: { readonly kind: string; readonly table: string; readonly partition: number; readonly epoch: number; readonly maxBatch?: number }) =>
  Effect.map(makeKindCommitter({ ...options, concurrency: 1 }), (shared) => ({
    commit: (writes: ReadonlyArray<StateWrite>) => shared.commit({ partition: options.partition, epoch: options.epoch }, writes)
  }))

const lastPerKey = (rows: ReadonlyArray<Readonly<Record<string, unknown>>>, key: ReadonlyArray<string>) => {
  const byKey = new Map<string, Readonly<Record<string, unknown>>>()
  for (const row of rows) byKey.set(JSON.stringify(key.map((c) => row[c])), row)
  return [...byKey.values()]
}
