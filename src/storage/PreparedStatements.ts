import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import * as Statement from "@effect/sql/Statement"
import { Context, Effect, Option } from "effect"
import { createHash } from "node:crypto"
import type Pg from "pg"
import { AppConfig } from "../config/AppConfig.ts"
import { PgPool, resultNames } from "./Database.ts"

/** Runs one prepared statement with its `$1…$n` parameters; rows come back with camelCase names. */
export type Prepared<Row extends object> = (params: ReadonlyArray<unknown>) => Effect.Effect<ReadonlyArray<Row>, SqlError>

/**
 * Named statements per process, at most. Postgres keeps each named statement for the life of the
 * connection that parsed it; past this, new texts run unnamed (a text built from data, say, must
 * not grow every connection without bound).
 */
const MAX_NAMED = 256

// Shared by every instance on every pool: a name is the hash of its text, so two instances can
// never give one name to two texts on a connection they share.
const names = new Map<string, string>()

const nameOf = (text: string): string | undefined => {
  const known = names.get(text)
  if (known !== undefined || names.size >= MAX_NAMED) return known
  const name = `herald_${createHash("sha1").update(text).digest("hex").slice(0, 24)}`
  names.set(text, name)
  return name
}

const failed = (cause: unknown, message: string) => new SqlError({ cause, message })

/**
 * The statements every request or send makes, prepared once per connection: `pg` names them
 * (`{ name, text, values }`), so a connection parses and plans a text once and then only binds and
 * executes it. @effect/sql-pg never names its statements, and its `sql` template costs about 1.75×
 * raw `pg` in CPU per statement (docs: design/hot-path.md); these go to `pg` directly.
 *
 * The pool is SqlLive's (`PgPool`). Inside `sql.withTransaction` a statement runs on that
 * transaction's connection (the `TransactionConnection` @effect/sql keeps in the context), so it
 * sees the transaction's rows and rolls back with it. Without a pool (a SqlClient built some other
 * way) statements go through the SqlClient, unnamed, with the same results. Failures are SqlError
 * with the driver's error as the cause, as from the SqlClient (the HTTP edge answers 503 on a down
 * database from the cause's code).
 *
 * Only texts with `$n` parameters and fixed columns belong here: no `SELECT *` (a prepared plan
 * whose columns change under it fails with "cached plan must not change result type").
 */
export const makePreparedStatements = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const pool = Option.getOrUndefined(yield* Effect.serviceOption(PgPool))
  // Behind PgBouncer in transaction mode before 1.21 (or without max_prepared_statements) a named
  // statement parsed on one server connection is missing on the next: HERALD_DB_PREPARED_STATEMENTS=false.
  const named = Option.match(yield* Effect.serviceOption(AppConfig), { onNone: () => true, onSome: (c) => c.dbPreparedStatements })
  const transformRows = Statement.defaultTransforms(resultNames, false).array

  const onClient = <Row extends object>(client: Pg.ClientBase, config: Pg.QueryConfig) =>
    Effect.async<ReadonlyArray<Row>, SqlError>((resume) => {
      client.query(config, (error: Error | null, result: Pg.QueryResult) => {
        resume(error ? Effect.fail(failed(error, "Failed to execute statement")) : Effect.succeed(transformRows(result.rows as Array<Row>)))
      })
    })

  // A connection of the pool for one statement. An error of the statement leaves the connection
  // in the pool (as the SqlClient does); an error of the connection removes it.
  const onPool = <Row extends object>(pool: Pg.Pool, config: Pg.QueryConfig) =>
    Effect.async<ReadonlyArray<Row>, SqlError>((resume) => {
      let interrupted = false
      pool.connect((error, client, release) => {
        if (error || client === undefined) {
          resume(Effect.fail(failed(error ?? new Error("No client returned"), "Failed to acquire connection")))
          return
        }
        if (interrupted) {
          release()
          return
        }
        let done = false
        const onError = (cause: Error) => {
          if (done) return
          done = true
          release(cause)
          resume(Effect.fail(failed(cause, "Connection error")))
        }
        client.once("error", onError)
        client.query(config, (error: Error | null, result: Pg.QueryResult) => {
          if (done) return
          done = true
          client.off("error", onError)
          release()
          resume(error ? Effect.fail(failed(error, "Failed to execute statement")) : Effect.succeed(transformRows(result.rows as Array<Row>)))
        })
      })
      // A statement already sent runs to its end (its connection is then released); one still
      // waiting for a connection is not sent.
      return Effect.sync(() => {
        interrupted = true
      })
    })

  /** A statement from its text (`$1…$n` parameters), named and prepared once per connection. */
  const prepare = <Row extends object = Record<string, unknown>>(text: string): Prepared<Row> => {
    const name = named ? nameOf(text) : undefined
    const viaSql = (params: ReadonlyArray<unknown>) => sql.unsafe<Row>(text, params)
    if (pool === undefined) return viaSql
    return (params) =>
      Effect.contextWithEffect((context: Context.Context<never>) => {
        const config: Pg.QueryConfig = name === undefined ? { text, values: params as Array<unknown> } : { name, text, values: params as Array<unknown> }
        const transaction = Context.getOption(context, SqlClient.TransactionConnection)
        if (transaction._tag === "None") return onPool<Row>(pool, config)
        // @effect/sql-pg's connection keeps its `pg` client as `pg`; another one goes through `sql`.
        const client = (transaction.value[0] as { readonly pg?: Pg.PoolClient }).pg
        return client === undefined ? viaSql(params) : onClient<Row>(client, config)
      })
  }

  /** A table or column name as the SqlClient writes it (`sql(name)`), for texts built once. */
  const identifier = (name: string): string => sql`${sql(name)}`.compile()[0]

  return { prepare, identifier, named: pool !== undefined && named } as const
})

export class PreparedStatements extends Effect.Service<PreparedStatements>()("herald/storage/PreparedStatements", {
  effect: makePreparedStatements
}) {}
