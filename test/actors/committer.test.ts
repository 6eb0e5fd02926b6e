import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { emptyWrite, ensureStateTable, makeCommitter } from "../../src/actors/runtime/committer.ts"
import { SqlLive } from "../../src/storage/Database.ts"
import { Storage } from "../../src/storage/Migrations.ts"
import { IsolationLive, TestConfig } from "../support/isolation.ts"

const Env = Layer.mergeAll(SqlLive, Storage.Default.pipe(Layer.provide(SqlLive))).pipe(
  Layer.provideMerge(TestConfig()),
  Layer.provideMerge(IsolationLive)
)

const KIND = "inserting"
const TABLE = "actor_inserting"
const COLUMNS = ["id", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"] as const

layer(Env, { timeout: 60_000, excludeTestServices: true })("committer: ctx.insert rows", (it) => {
  it.scoped("rows of a table share INSERTs, split under Postgres' parameter limit; a row already there is skipped", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* (yield* Storage).awaitReady
      yield* ensureStateTable(TABLE)
      yield* sql`CREATE TABLE inserted_rows (id int PRIMARY KEY, c1 text, c2 text, c3 text, c4 text, c5 text, c6 text, c7 text, c8 text, c9 timestamptz)`
      yield* sql`INSERT INTO partition_epochs (kind, partition, epoch, owner) VALUES (${KIND}, 0, 1, 'test')`
      const committer = yield* makeCommitter({ kind: KIND, table: TABLE, partition: 0, epoch: 1 })
      // 7,000 rows × 10 columns = 70,000 values: more than one statement may carry.
      const rows = Array.from({ length: 7_000 }, (_, i) => ({
        id: i,
        ...Object.fromEntries(COLUMNS.slice(1, 9).map((c) => [c, `${c}-${i}`])),
        c9: new Date(Date.UTC(2026, 0, 1, 0, 0, i % 60))
      }))
      const write = (key: string, seq: number, from: number, to: number) =>
        Object.assign(emptyWrite(key, seq), { state: { n: seq }, inserts: rows.slice(from, to).map((row) => ({ table: "inserted_rows", row })) })
      yield* committer.commit([write("a", 1, 0, 4_000), write("b", 1, 4_000, 7_000)])
      expect(yield* sql`SELECT count(*)::int AS n, max(c8) AS last FROM inserted_rows`).toEqual([{ n: 7_000, last: "c8-999" }])
      expect(yield* sql`SELECT extract(second FROM c9)::int AS second FROM inserted_rows WHERE id = 61`).toEqual([{ second: 1 }])
      // A command applied again after a crash writes its rows again: they are skipped.
      yield* committer.commit([write("a", 2, 3_990, 4_010)])
      expect(yield* sql`SELECT count(*)::int AS n FROM inserted_rows`).toEqual([{ n: 7_000 }])
    }))

  it.scoped("ctx.update rows of a table share one UPDATE, typed by the table; of two for one row the last wins", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE updated_rows (id uuid PRIMARY KEY, status text NOT NULL, at timestamptz, error jsonb, n int NOT NULL DEFAULT 0)`
      const ids = Array.from({ length: 3 }, (_, i) => `00000000-0000-4000-8000-00000000000${i}`)
      yield* sql`INSERT INTO updated_rows (id, status) SELECT unnest(${ids}::uuid[]), 'queued'`
      const committer = yield* makeCommitter({ kind: KIND, table: TABLE, partition: 0, epoch: 1 })
      const update = (row: Record<string, unknown>) => ({ table: "updated_rows", row, updateOn: ["id"] })
      const write = Object.assign(emptyWrite("c", 1), {
        state: { n: 1 },
        inserts: [
          update({ id: ids[0], status: "sent", at: "2026-01-01T00:00:01.000Z", error: null, n: 1 }),
          update({ id: ids[1], status: "failed", at: "2026-01-01T00:00:02.000Z", error: { category: "recipient" }, n: 1 }),
          update({ id: ids[0], status: "read", at: "2026-01-01T00:00:03.000Z", error: null, n: 2 })
        ]
      })
      yield* committer.commit([write])
      const rows = yield* sql<{ id: string; status: string; second: number; error: unknown; n: number }>`
        SELECT id::text, status, extract(second FROM at)::int AS second, error, n FROM updated_rows ORDER BY id`
      expect(rows).toEqual([
        { id: ids[0], status: "read", second: 3, error: null, n: 2 },
        { id: ids[1], status: "failed", second: 2, error: { category: "recipient" }, n: 1 },
        { id: ids[2], status: "queued", second: null, error: null, n: 0 }
      ])
    }))
})
