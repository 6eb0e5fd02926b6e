import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Deferred, Effect, Metric, Queue, Schema } from "effect"
import { labelled } from "../../observability/labelled.ts"
import { commitBatchSize } from "./metrics.ts"

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
  readonly command: unknown
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

interface Pending {
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
 * Group commit for one owned partition. Actors submit their writes; the committer takes whatever
 * has queued up (no artificial linger: while one transaction runs the next batch accumulates) and
 * writes it in one transaction that first checks the fence:
 *
 *   SELECT 1 FROM partition_epochs WHERE kind, partition AND epoch = <ours> FOR SHARE
 *
 * A newer owner has raised the epoch before it started, so a paused old owner finds no row and
 * cannot commit, whatever the clocks say; the share lock also orders it against the raise. When a
 * batch fails for another reason, each submission (a partition batch, or a retrying actor's write) is
 * retried alone, so one bad submission fails only itself.
 */
export const makeCommitter = (options: {
  readonly kind: string
  readonly table: string
  readonly partition: number
  readonly epoch: number
  readonly maxBatch?: number
}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const queue = yield* Queue.unbounded<Pending>()
    const batchMetric = labelled(commitBatchSize, { kind: options.kind })

    const fence = Effect.flatMap(
      sql<{ one: number }>`
        SELECT 1 AS one FROM partition_epochs
        WHERE kind = ${options.kind} AND partition = ${options.partition} AND epoch = ${options.epoch}
        FOR SHARE`,
      (rows) =>
        rows.length === 1
          ? Effect.void
          : Effect.fail(
            new FencedOut({
              kind: options.kind,
              partition: options.partition,
              epoch: options.epoch,
              message: `epoch ${options.epoch} of ${options.kind}/${options.partition} is no longer current`
            })
          )
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

    const write = (writes: ReadonlyArray<StateWrite>) =>
      Effect.gen(function*() {
        yield* fence
        const states = writes.filter((w) => w.state !== undefined)
        if (states.length > 0) {
          yield* sql`
            INSERT INTO ${sql(options.table)} (actor_key, partition, state, last_seq)
            SELECT k, ${options.partition}, s, q
            FROM unnest(${states.map((w) => w.key)}::text[], ${states.map((w) => JSON.stringify(w.state))}::jsonb[], ${states.map((w) => w.lastSeq)}::bigint[]) AS t(k, s, q)
            ON CONFLICT (actor_key) DO UPDATE SET state = excluded.state, last_seq = excluded.last_seq, updated_at = now()
            WHERE ${sql(options.table)}.last_seq < excluded.last_seq`
        }
        const outbox = writes.flatMap((w) => w.outbox)
        if (outbox.length > 0) {
          yield* sql`
            INSERT INTO actor_outbox (subject, msg_id, payload, headers)
            SELECT * FROM unnest(${outbox.map((o) => o.subject)}::text[], ${outbox.map((o) => o.msgId)}::text[],
              ${outbox.map((o) => JSON.stringify(o.payload))}::jsonb[], ${outbox.map((o) => (o.headers ? JSON.stringify(o.headers) : null))}::jsonb[])`
        }
        const timersRemove = writes.flatMap((w) => w.timersRemove)
        if (timersRemove.length > 0) {
          yield* sql`DELETE FROM actor_timers WHERE timer_id = ANY(${timersRemove}::text[])`
        }
        const timers = writes.flatMap((w) => w.timersAdd)
        if (timers.length > 0) {
          yield* sql`
            INSERT INTO actor_timers (timer_id, kind, partition, actor_key, fire_at, command)
            SELECT id, ${options.kind}, ${options.partition}, k, f, c
            FROM unnest(${timers.map((t) => t.timerId)}::text[], ${timers.map((t) => t.key)}::text[],
              ${timers.map((t) => t.fireAt.toISOString())}::timestamptz[], ${timers.map((t) => JSON.stringify(t.command))}::jsonb[]) AS t(id, k, f, c)
            ON CONFLICT (timer_id) DO UPDATE SET fire_at = excluded.fire_at, command = excluded.command`
        }
        const poison = writes.flatMap((w) => w.poison)
        for (const p of poison) {
          yield* sql`
            INSERT INTO actor_poison (kind, partition, actor_key, seq, command, error, attempts)
            VALUES (${options.kind}, ${options.partition}, ${p.key}, ${p.seq}, ${JSON.stringify(p.command)}::jsonb, ${p.error}, ${p.attempts})
            ON CONFLICT (kind, seq) DO NOTHING`
        }
        yield* insertRows(writes.flatMap((w) => w.inserts))
        for (const w of writes) for (const persist of w.persist) yield* persist
      }).pipe(sql.withTransaction, Effect.provideService(SqlClient.SqlClient, sql))

    const run = (batch: ReadonlyArray<Pending>): Effect.Effect<void> =>
      write(batch.flatMap((p) => p.writes)).pipe(
        Effect.matchCauseEffect({
          onSuccess: () => Effect.forEach(batch, (p) => Deferred.succeed(p.done, undefined), { discard: true }),
          onFailure: (cause) => {
            const error = cause._tag === "Fail" ? cause.error : undefined
            if (error === undefined) return Effect.forEach(batch, (p) => Deferred.failCause(p.done, cause as any), { discard: true })
            if (error._tag === "FencedOut" || batch.length === 1) {
              return Effect.forEach(batch, (p) => Deferred.fail(p.done, error), { discard: true })
            }
            return Effect.forEach(batch, (p) => run([p]), { discard: true })
          }
        })
      )

    yield* Effect.gen(function*() {
      for (;;) {
        const batch = yield* Queue.takeBetween(queue, 1, options.maxBatch ?? 500)
        yield* Metric.update(batchMetric, batch.length)
        yield* run(Array.from(batch))
      }
    }).pipe(Effect.forkScoped)

    /** Waits until the writes are durable (or fail together: fenced out, or the database failed). */
    const commit = (writes: ReadonlyArray<StateWrite>) =>
      Effect.flatMap(Deferred.make<void, FencedOut | SqlError>(), (done) =>
        Effect.zipRight(Queue.offer(queue, { writes, done }), Deferred.await(done)))

    return { commit } as const
  })

const lastPerKey = (rows: ReadonlyArray<Readonly<Record<string, unknown>>>, key: ReadonlyArray<string>) => {
  const byKey = new Map<string, Readonly<Record<string, unknown>>>()
  for (const row of rows) byKey.set(JSON.stringify(key.map((c) => row[c])), row)
  return [...byKey.values()]
}
