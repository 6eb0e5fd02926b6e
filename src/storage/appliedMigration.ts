import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { MIGRATIONS_TABLE } from "./Migrations.ts"
import { sqlState } from "./sqlState.ts"

/** Postgres's codes for a database that does not exist (3D000) and a table that does not (42P01). */
const ABSENT = new Set(["3D000", "42P01"])

/**
 * The newest migration applied to the database: 0 when the database or the migrations' table does
 * not exist yet. Any other failure (Postgres down, a refused login) is the caller's failure.
 */
export const appliedMigration = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* sql<{ latest: number | null }>`SELECT max(migration_id) AS latest FROM ${sql(MIGRATIONS_TABLE)}`.pipe(
    Effect.map((rows) => rows[0]?.latest ?? 0),
    Effect.catchTag("SqlError", (error) => ABSENT.has(sqlState(error) ?? "") ? Effect.succeed(0) : Effect.fail(error))
  )
})
