import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Layer, Redacted, Schedule, String as Str } from "effect"
import Pg from "pg"
import { AppConfig } from "../config/AppConfig.ts"

/**
 * The Postgres pool. It is built without touching the server (the `pg` pool connects lazily), so a
 * node starts, serves /health/ready with 503 and recovers on its own when Postgres comes up later.
 * Queries made while Postgres is down fail with SqlError, which the HTTP edge answers with 503.
 */
export interface PoolOptions {
  readonly max?: number
  readonly applicationName?: string
  /** idle_in_transaction_session_timeout of every connection, in ms (0 or none: the server's). */
  readonly idleInTransactionMs?: number
}

export const makePool = (url: Redacted.Redacted<string>, options: PoolOptions = {}) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const pool = new Pg.Pool({
        connectionString: Redacted.value(url),
        max: options.max ?? 16,
        idleTimeoutMillis: 30_000,
        connectionTimeoutMillis: 5_000,
        application_name: options.applicationName ?? "herald",
        // Sent at connect (a startup parameter): a frozen node's open transaction, and the locks
        // it holds (a fence row FOR SHARE), end after this, so the partitions' next owner is not
        // stuck behind it.
        ...(options.idleInTransactionMs ? { idle_in_transaction_session_timeout: options.idleInTransactionMs } : {})
      })
      // An idle client losing its server emits on the pool; without a listener node would crash.
      pool.on("error", () => {})
      return pool
    }),
    (pool) => Effect.promise(() => pool.end()).pipe(Effect.timeoutOption(Duration.seconds(3)))
  )

/**
 * The `pg` pool under the SqlClient, as a service of its own: `PreparedStatements` runs the hot
 * statements on it directly (named, so each connection parses them once). `clientLayer` provides
 * it with the client it backs, so both always share one pool.
 */
export class PgPool extends Context.Tag("herald/storage/PgPool")<PgPool, Pg.Pool>() {}

/** Column names in queries: camelCase in code, snake_case in the database. */
export const queryNames = Str.camelToSnake
/** Column names in results: snake_case in the database, camelCase in code. */
export const resultNames = Str.snakeToCamel

export const clientLayer = (
  url: Redacted.Redacted<string>,
  options?: PoolOptions
): Layer.Layer<SqlClient.SqlClient | PgClient.PgClient | PgPool, SqlError> =>
  Layer.unwrapEffect(Effect.map(PgPool, (pool) =>
    PgClient.layerFromPool({
      // The pool is the PgPool layer's: it outlives the client and is ended when that layer closes.
      acquire: Effect.succeed(pool),
      applicationName: options?.applicationName ?? "herald",
      transformQueryNames: queryNames,
      transformResultNames: resultNames,
      // numeric (money) and bigint (counters, stream sequences) come back as strings from `pg`;
      // repositories decode them with Schema where they are read.
      transformJson: false
    }))).pipe(Layer.provideMerge(Layer.scoped(PgPool, makePool(url, options))))

/** SqlClient for the database named in DATABASE_URL (and the pool under it). */
export const SqlLive: Layer.Layer<SqlClient.SqlClient | PgClient.PgClient | PgPool, never, AppConfig> = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) => clientLayer(config.databaseUrl, {
    max: config.dbPool,
    applicationName: `herald-${config.nodeId}`,
    idleInTransactionMs: config.dbIdleInTransactionMs
  }))
).pipe(Layer.orDie)

const databaseName = (url: Redacted.Redacted<string>): string => decodeURIComponent(new URL(Redacted.value(url)).pathname.replace(/^\//, "")) || "postgres"

const maintenanceUrl = (url: Redacted.Redacted<string>): Redacted.Redacted<string> => {
  const u = new URL(Redacted.value(url))
  u.pathname = "/postgres"
  return Redacted.make(u.toString())
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, "\"\"")}"`

/**
 * Creates the database of DATABASE_URL when it does not exist. Two nodes starting together may
 * both try; the loser sees duplicate_database (42P04) or a unique violation on pg_database and
 * carries on.
 */
export const ensureDatabase = (url: Redacted.Redacted<string>) =>
  Effect.gen(function*() {
    const name = databaseName(url)
    const sql = yield* PgClient.PgClient
    const rows = yield* sql<{ one: number }>`SELECT 1 AS one FROM pg_database WHERE datname = ${name}`
    if (rows.length > 0) return false
    yield* sql.unsafe(`CREATE DATABASE ${quoteIdent(name)}`).pipe(
      Effect.catchTag("SqlError", (error) => {
        const code = (error.cause as { code?: string } | undefined)?.code
        return code === "42P04" || code === "23505" ? Effect.void : Effect.fail(error)
      })
    )
    return true
  }).pipe(Effect.scoped, Effect.provide(clientLayer(maintenanceUrl(url), { max: 1, applicationName: "herald-bootstrap" })))

/** How long and how often a node retries reaching Postgres at start: forever, capped at 5 s apart. */
export const reconnectSchedule = Schedule.exponential(Duration.millis(200), 2).pipe(
  Schedule.either(Schedule.spaced(Duration.seconds(5))),
  Schedule.jittered
)

export { databaseName }
