import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { isFragment } from "@effect/sql/Statement"
import { Deferred, Effect, Metric, Queue, Schema } from "effect"
import { labelled } from "../../observability/labelled.ts"
import { firstUnstorable, storableText } from "../../domain/storable.ts"
import { queryNames } from "../../storage/Database.ts"
import { makePreparedStatements, type Prepared } from "../../storage/PreparedStatements.ts"
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
  /** The trace the fired command continues (W3C traceparent), when tracing is on. */
  readonly traceparent?: string | undefined
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

    // Every commit runs these: prepared statements, on the commit's transaction connection. Their
    // texts are fixed for the committer's life (the kind's table is part of them, the rows are not:
    // they travel as arrays). Poison rows stay on `sql`: rare.
    const prepared = yield* makePreparedStatements
    const stateTable = prepared.identifier(options.table)
    const fenceCheck = prepared.prepare<{ partition: number; epoch: string }>(`
          SELECT partition, epoch FROM partition_epochs
          WHERE kind = $1 AND partition = ANY($2::int[])
          FOR SHARE`)
    const stateUpsert = prepared.prepare(`
            INSERT INTO ${stateTable} (actor_key, partition, state, last_seq)
            SELECT k, p, s, q
            FROM unnest($1::text[], $2::int[], $3::jsonb[], $4::bigint[]) AS t(k, p, s, q)
            ON CONFLICT (actor_key) DO UPDATE SET state = excluded.state, last_seq = excluded.last_seq, updated_at = now()
            WHERE ${stateTable}.last_seq < excluded.last_seq`)
    const outboxInsert = prepared.prepare(`
            INSERT INTO actor_outbox (subject, msg_id, payload, headers)
            SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::jsonb[])`)
    const timersDelete = prepared.prepare("DELETE FROM actor_timers WHERE timer_id = ANY($1::text[])")
    const timersInsert = prepared.prepare(`
            INSERT INTO actor_timers (timer_id, kind, partition, actor_key, fire_at, command, traceparent)
            SELECT id, $1, p, k, f, c, tp
            FROM unnest($2::text[], $3::int[], $4::text[], $5::timestamptz[], $6::jsonb[], $7::text[]) AS t(id, p, k, f, c, tp)
            ON CONFLICT (timer_id) DO UPDATE SET fire_at = excluded.fire_at, command = excluded.command, traceparent = excluded.traceparent`)

    /** The partitions of the batch whose epoch is not the one they write with. */
    const fencedOut = (fences: ReadonlyArray<Fence>) =>
      Effect.map(
        fenceCheck([options.kind, [...new Set(fences.map((f) => f.partition))]]),
        (rows) => {
          const current = new Map(rows.map((r) => [r.partition, Number(r.epoch)]))
          return fences.filter((f) => current.get(f.partition) !== f.epoch)
        }
      )

    /**
     * The array type of each column of a table, for `unnest($n::type[])` (null for a column that is
     * itself an array: unnest would flatten it). Read from the catalog once per table; again when a
     * row names a column not seen (a migration added it while the node ran).
     */
    const columnTypes = new Map<string, ReadonlyMap<string, string | null>>()
    const columnTypesOf = (name: string, columns: ReadonlyArray<string>) => {
      const known = columnTypes.get(name)
      if (known !== undefined && columns.every((c) => known.has(c))) return Effect.succeed(known)
      return Effect.map(
        sql<{ name: string; arrayType: string; isArray: boolean }>`
          SELECT a.attname AS name, quote_ident(n.nspname) || '.' || quote_ident(t.typname) || '[]' AS array_type, t.typcategory = 'A' AS is_array
          FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid JOIN pg_namespace n ON n.oid = t.typnamespace
          WHERE a.attrelid = to_regclass(${prepared.identifier(name)}) AND a.attnum > 0 AND NOT a.attisdropped`,
        (rows) => {
          const types = new Map(rows.map((r) => [r.name, r.isArray ? null : r.arrayType]))
          columnTypes.set(name, types)
          return types
        }
      )
    }

    /** What `pg` writes into an array parameter exactly as it would bind the value alone. */
    const arrayable = (value: unknown) =>
      value === null || value === undefined || typeof value !== "object" || value instanceof Date || Buffer.isBuffer(value) ||
      (Object.getPrototypeOf(value) === Object.prototype && !isFragment(value))

    /**
     * One group of rows (one table, the same columns) as one prepared statement whatever the number
     * of rows: each column travels as one array, typed with the column's own type (the message of
     * a send, its attempt rows...). Undefined when the group cannot (a column that is an array, a
     * value `pg` would not put in an array as it binds it alone): then it goes through `sql.insert`.
     */
    const insertPrepared = new Map<string, Prepared<object>>()
    const preparedInsert = (name: string, columns: ReadonlyArray<string>, rows: ReadonlyArray<Readonly<Record<string, unknown>>>) =>
      Effect.gen(function*() {
        if (!rows.every((row) => columns.every((c) => arrayable(row[c])))) return undefined
        const names = columns.map((c) => queryNames(c))
        const types = yield* columnTypesOf(name, names)
        const arrayTypes = names.map((c) => types.get(c))
        if (!arrayTypes.every((t) => typeof t === "string")) return undefined
        const id = `${name}(${columns.join(",")})`
        let insert = insertPrepared.get(id)
        if (insert === undefined) {
          insert = prepared.prepare(`
            INSERT INTO ${prepared.identifier(name)} (${columns.map((c) => prepared.identifier(c)).join(", ")})
            SELECT * FROM unnest(${arrayTypes.map((t, i) => `$${i + 1}::${t}`).join(", ")})
            ON CONFLICT DO NOTHING`)
          insertPrepared.set(id, insert)
        }
        return insert(columns.map((c) => rows.map((row) => row[c] ?? null)))
      })

    /** Rows grouped by table and columns, one INSERT per group (through `sql.insert`: bounded by Postgres' 65,535 parameters). */
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
          const insert = yield* preparedInsert(table, Object.keys(all[0]!), all)
          if (insert !== undefined) {
            yield* insert
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
    const updatePrepared = new Map<string, Prepared<object>>()
    const updateRows = (name: string, key: ReadonlyArray<string>, rows: ReadonlyArray<Readonly<Record<string, unknown>>>) => {
      const set = Object.keys(rows[0]!).filter((c) => !key.includes(c))
      // One prepared statement per table, columns set and key (a kind updates a few shapes).
      const id = `${name}(${set.join(",")})where(${key.join(",")})`
      let update = updatePrepared.get(id)
      if (update === undefined) {
        const t = prepared.identifier(name)
        const column = (c: string) => prepared.identifier(c)
        update = prepared.prepare(`
        UPDATE ${t} AS t SET ${set.map((c) => `${column(c)} = v.${column(c)}`).join(", ")}
        FROM jsonb_populate_recordset(null::${t}, $1::jsonb) AS v
        WHERE ${key.map((c) => `t.${column(c)} = v.${column(c)}`).join(" AND ")}`)
        updatePrepared.set(id, update)
      }
      return update([JSON.stringify(rows)])
    }

    const write = (batch: ReadonlyArray<Pending>) =>
      Effect.gen(function*() {
        const stale = yield* fencedOut(batch.map((p) => p.fence))
        if (stale.length > 0) return yield* new StaleFences({ fences: stale })
        const tagged = batch.flatMap((p) => p.writes.map((w) => ({ partition: p.fence.partition, w })))
        const states = tagged.filter(({ w }) => w.state !== undefined)
        if (states.length > 0) {
          yield* stateUpsert([
            states.map(({ w }) => w.key),
            states.map(({ partition }) => partition),
            states.map(({ w }) => JSON.stringify(w.state)),
            states.map(({ w }) => w.lastSeq)
          ])
        }
        const outbox = tagged.flatMap(({ w }) => w.outbox)
        if (outbox.length > 0) {
          yield* outboxInsert([
            outbox.map((o) => o.subject),
            outbox.map((o) => o.msgId),
            outbox.map((o) => JSON.stringify(o.payload)),
            outbox.map((o) => (o.headers ? JSON.stringify(o.headers) : null))
          ])
        }
        const timersRemove = tagged.flatMap(({ w }) => w.timersRemove)
        if (timersRemove.length > 0) {
          yield* timersDelete([timersRemove])
        }
        const timers = tagged.flatMap(({ partition, w }) => w.timersAdd.map((t) => ({ partition, t })))
        if (timers.length > 0) {
          yield* timersInsert([
            options.kind,
            timers.map(({ t }) => t.timerId),
            timers.map(({ partition }) => partition),
            timers.map(({ t }) => t.key),
            timers.map(({ t }) => t.fireAt.toISOString()),
            timers.map(({ t }) => JSON.stringify(t.command)),
            timers.map(({ t }) => t.traceparent ?? null)
          ])
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
