// One-row SELECT by primary key, 16 in flight on one 16-connection pool, four clients in the same
// run, interleaved: raw `pg` unnamed (the floor, 1.0), raw `pg` named (prepared), the
// @effect/sql-pg `sql` template (camel/snake transforms, tracer off as a node runs it) and
// Herald's PreparedStatements. Reports statements/s and node CPU per statement, each as a ratio to
// the floor. Prints one JSON line.
//
//   npm run bench -- sql            DURATION=3 seconds per client per round, ROUNDS=3
import { SqlClient } from "@effect/sql"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import Pg from "pg"
import { clientLayer, PgPool } from "../src/storage/Database.ts"
import { makePreparedStatements } from "../src/storage/PreparedStatements.ts"
import { cleanup, makeIsolation, PG_ADMIN_URL } from "../test/support/isolation.ts"
import { round2 } from "./support/figures.ts"

const SECONDS = Number(process.env.DURATION ?? 3)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const IN_FLIGHT = 16
const ROWS = 10_000
const TEXT = "SELECT row_id, display_name, amount, created_at FROM bench_rows WHERE row_id = $1"

const iso = makeIsolation()
const admin = new Pg.Client({ connectionString: PG_ADMIN_URL })
await admin.connect()
await admin.query(`CREATE DATABASE "${iso.database}"`)
await admin.end()

const runtime = ManagedRuntime.make(Layer.merge(clientLayer(Redacted.make(iso.databaseUrl), { max: IN_FLIGHT, applicationName: "herald-bench-sql" }), Layer.setTracerEnabled(false)))
try {
  const pool = await runtime.runPromise(PgPool)
  await pool.query("CREATE TABLE bench_rows (row_id integer PRIMARY KEY, display_name text NOT NULL, amount numeric(20, 4) NOT NULL, created_at timestamptz NOT NULL DEFAULT now())")
  await pool.query("INSERT INTO bench_rows (row_id, display_name, amount) SELECT i, 'row ' || i, i / 100.0 FROM generate_series(1, $1::int) AS i", [ROWS])
  await pool.query("ANALYZE bench_rows")
  const sql = await runtime.runPromise(SqlClient.SqlClient)
  const prepared = await runtime.runPromise(makePreparedStatements)
  if (!prepared.named) throw new Error("PreparedStatements is not on the pool")
  const byId = prepared.prepare<{ rowId: number }>(TEXT)
  const key = () => 1 + Math.floor(Math.random() * ROWS)

  /** `IN_FLIGHT` loops of `one` for SECONDS: statements/s and node CPU µs per statement. */
  const promiseLoops = async (one: () => Promise<unknown>) => {
    const cpu = process.cpuUsage()
    const started = performance.now()
    const until = started + SECONDS * 1000
    let n = 0
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (performance.now() < until) {
        await one()
        n++
      }
    }))
    const used = process.cpuUsage(cpu)
    return { per_s: n / ((performance.now() - started) / 1000), cpu_us: (used.user + used.system) / n }
  }
  const effectLoops = (one: () => Effect.Effect<unknown, unknown>) =>
    runtime.runPromise(Effect.suspend(() => {
      const cpu = process.cpuUsage()
      const started = performance.now()
      const until = started + SECONDS * 1000
      let n = 0
      const loop: Effect.Effect<void, unknown> = Effect.suspend(() =>
        performance.now() < until ? Effect.flatMap(one(), () => (n++, loop)) : Effect.void
      )
      return Effect.map(Effect.all(Array.from({ length: IN_FLIGHT }, () => loop), { concurrency: "unbounded", discard: true }), () => {
        const used = process.cpuUsage(cpu)
        return { per_s: n / ((performance.now() - started) / 1000), cpu_us: (used.user + used.system) / n }
      })
    }))

  const clients = {
    pg_unnamed: () => promiseLoops(() => pool.query(TEXT, [key()])),
    pg_named: () => promiseLoops(() => pool.query({ name: "bench_by_id", text: TEXT, values: [key()] })),
    effect_sql: () => effectLoops(() => sql`SELECT row_id, display_name, amount, created_at FROM bench_rows WHERE row_id = ${key()}`),
    prepared_statements: () => effectLoops(() => byId([key()]))
  }
  type Name = keyof typeof clients
  // Every client warms up once (connections opened, statements prepared, JIT), then rounds interleave.
  for (const run of Object.values(clients)) await run()
  const samples: Record<Name, Array<{ per_s: number; cpu_us: number }>> = { pg_unnamed: [], pg_named: [], effect_sql: [], prepared_statements: [] }
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, run] of Object.entries(clients) as Array<[Name, () => Promise<{ per_s: number; cpu_us: number }>]>) samples[name].push(await run())
  }
  const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const figures = Object.fromEntries(
    (Object.keys(samples) as Array<Name>).map((name) => [name, { per_s: Math.round(median(samples[name].map((s) => s.per_s))), cpu_us: round2(median(samples[name].map((s) => s.cpu_us))) }])
  ) as Record<Name, { per_s: number; cpu_us: number }>
  const floor = figures.pg_unnamed
  const ratios = (pick: (f: { per_s: number; cpu_us: number }) => number) =>
    Object.fromEntries((Object.keys(figures) as Array<Name>).map((name) => [name, round2(pick(figures[name]) / pick(floor))]))

  console.log(JSON.stringify({
    bench: "sql",
    seconds: SECONDS,
    rounds: ROUNDS,
    in_flight: IN_FLIGHT,
    statement: TEXT,
    clients: figures,
    throughput_vs_pg_unnamed: ratios((f) => f.per_s),
    cpu_per_statement_vs_pg_unnamed: ratios((f) => f.cpu_us),
    note: "medians of the interleaved rounds; one 16-connection pool shared by all clients (SqlLive's shape); node CPU per statement from process.cpuUsage (Postgres runs on the same 2 cores)"
  }))
} finally {
  await runtime.dispose()
  await cleanup(iso)
}
process.exit(0)
