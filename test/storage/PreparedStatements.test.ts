import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Redacted } from "effect"
import { clientLayer, PgPool, SqlLive } from "../../src/storage/Database.ts"
import { Storage } from "../../src/storage/Migrations.ts"
import { makePreparedStatements, PreparedStatements } from "../../src/storage/PreparedStatements.ts"
import { IsolationLive, TestConfig } from "../support/isolation.ts"

const Env = Layer.mergeAll(PreparedStatements.Default, Storage.Default).pipe(
  Layer.provideMerge(SqlLive),
  Layer.provideMerge(TestConfig()),
  Layer.provideMerge(IsolationLive)
)

const COLUMNS = "probe_id, display_name, created_at, amount, tag_list, payload_json, big_count"

const setUp = Effect.gen(function*() {
  yield* (yield* Storage).awaitReady
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE IF NOT EXISTS prepared_probe (
      probe_id integer PRIMARY KEY, display_name text, created_at timestamptz NOT NULL DEFAULT now(),
      amount numeric(20, 4), tag_list text[], payload_json jsonb, big_count bigint
    )`
  yield* sql`
    INSERT INTO prepared_probe (probe_id, display_name, amount, tag_list, payload_json, big_count)
    VALUES (1, 'First', 12.5, ARRAY['a', 'b'], '{"nested_key": 1}', 9007199254740993)
    ON CONFLICT DO NOTHING`
  return sql
})

/** The same effect, outside any transaction of its caller. */
const outsideTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.mapInputContext(effect, (context: Context.Context<R>) => Context.omit(SqlClient.TransactionConnection)(context) as Context.Context<R>)

layer(Env, { timeout: 60_000, excludeTestServices: true })("prepared statements", (it) => {
  it.effect("answers as the sql template does, camelCase names and types included, and is prepared once per connection", () =>
    Effect.gen(function*() {
      const sql = yield* setUp
      const prepared = yield* PreparedStatements
      expect(prepared.named).toBe(true)
      const text = `SELECT ${COLUMNS} FROM prepared_probe WHERE probe_id = $1`
      const byId = prepared.prepare<{ probeId: number; displayName: string }>(text)
      const viaSql = yield* sql`SELECT ${sql.literal(COLUMNS)} FROM prepared_probe WHERE probe_id = ${1}`
      const first = yield* byId([1])
      const again = yield* byId([1])
      expect(first).toEqual(viaSql)
      expect(again).toEqual(viaSql)
      expect(Object.keys(first[0]!)).toEqual(["probeId", "displayName", "createdAt", "amount", "tagList", "payloadJson", "bigCount"])
      // Values nested in a json column keep their names (the client does not transform JSON).
      expect(first[0]).toMatchObject({ probeId: 1, displayName: "First", amount: "12.5000", tagList: ["a", "b"], payloadJson: { nested_key: 1 }, bigCount: "9007199254740993" })
      expect(yield* byId([2])).toEqual([])
      // On one connection (a transaction's), the text is a named statement Postgres keeps.
      const statements = yield* sql.withTransaction(Effect.zipRight(
        byId([1]),
        sql<{ name: string; statement: string }>`SELECT name, statement FROM pg_prepared_statements`
      ))
      expect(statements.find((s) => s.statement === text)?.name).toMatch(/^herald_[0-9a-f]{24}$/)
    }))

  it.effect("inside withTransaction it runs on the transaction's connection: sees its rows and rolls back with it", () =>
    Effect.gen(function*() {
      const sql = yield* setUp
      const prepared = yield* PreparedStatements
      const insert = prepared.prepare<{ probeId: number }>("INSERT INTO prepared_probe (probe_id, display_name) VALUES ($1, $2) RETURNING probe_id")
      const byId = prepared.prepare<{ displayName: string }>("SELECT display_name FROM prepared_probe WHERE probe_id = $1")
      const seen: Record<string, unknown> = {}
      const rolledBack = yield* sql.withTransaction(Effect.gen(function*() {
        expect(yield* insert([7, "Uncommitted"])).toEqual([{ probeId: 7 }])
        seen.inside = yield* byId([7])
        seen.throughSql = yield* sql`SELECT display_name FROM prepared_probe WHERE probe_id = ${7}`
        seen.outside = yield* outsideTransaction(byId([7]))
        return yield* Effect.fail("roll back" as const)
      })).pipe(Effect.flip)
      expect(rolledBack).toBe("roll back")
      expect(seen).toEqual({ inside: [{ displayName: "Uncommitted" }], throughSql: [{ displayName: "Uncommitted" }], outside: [] })
      expect(yield* byId([7])).toEqual([])
      // Committed, it stays.
      yield* sql.withTransaction(insert([8, "Committed"]))
      expect(yield* byId([8])).toEqual([{ displayName: "Committed" }])
    }))

  it.effect("a failure is a SqlError carrying the driver's error, and the connection stays usable", () =>
    Effect.gen(function*() {
      yield* setUp
      const prepared = yield* PreparedStatements
      const missingColumn = yield* Effect.flip(prepared.prepare("SELECT no_such_column FROM prepared_probe WHERE probe_id = $1")([1]))
      expect(missingColumn).toBeInstanceOf(SqlError)
      expect((missingColumn.cause as { code?: string }).code).toBe("42703")
      const duplicate = yield* Effect.flip(prepared.prepare("INSERT INTO prepared_probe (probe_id) VALUES ($1)")([1]))
      expect(duplicate).toBeInstanceOf(SqlError)
      expect((duplicate.cause as { code?: string }).code).toBe("23505")
      expect(yield* prepared.prepare("SELECT probe_id FROM prepared_probe WHERE probe_id = $1")([1])).toEqual([{ probeId: 1 }])
    }))

  it.effect("a database that cannot be reached is a SqlError whose cause says so (what the HTTP edge answers 503 for)", () =>
    Effect.gen(function*() {
      const prepared = yield* makePreparedStatements
      expect(prepared.named).toBe(true)
      const error = yield* Effect.flip(prepared.prepare("SELECT 1 AS one WHERE $1::int = 1")([1]))
      expect(error).toBeInstanceOf(SqlError)
      expect((error.cause as { code?: string }).code).toBe("ECONNREFUSED")
    }).pipe(Effect.provide(clientLayer(Redacted.make("postgres://postgres@127.0.0.1:1/nowhere")))))

  it.effect("without the pool it goes through the SqlClient, with the same answers", () =>
    Effect.gen(function*() {
      const sql = yield* setUp
      const viaClient = yield* makePreparedStatements.pipe(
        Effect.mapInputContext((context: Context.Context<SqlClient.SqlClient | PgPool>) => Context.omit(PgPool)(context))
      )
      expect(viaClient.named).toBe(false)
      const text = `SELECT ${COLUMNS} FROM prepared_probe WHERE probe_id = $1`
      expect(yield* viaClient.prepare(text)([1])).toEqual(yield* (yield* PreparedStatements).prepare(text)([1]))
      expect(yield* viaClient.prepare(text)([1])).toEqual(yield* sql`SELECT ${sql.literal(COLUMNS)} FROM prepared_probe WHERE probe_id = ${1}`)
    }))
})
