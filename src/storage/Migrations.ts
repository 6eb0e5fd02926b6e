import { Migrator } from "@effect/sql"

import { Deferred, Duration, Effect } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { ServiceUnavailable } from "../domain/errors.ts"
import { ensureDatabase, reconnectSchedule } from "./Database.ts"
import { migrations } from "./migrations/index.ts"
import { sealAtRest } from "./sealAtRest.ts"

/** The table where the Migrator records the migrations applied (`migration_id`, `name`, `created_at`). */
export const MIGRATIONS_TABLE = "herald_migrations"

/**
 * Applies pending migrations. The Migrator holds an exclusive lock on its table inside one
 * transaction, so nodes starting together apply each migration once; the loser of the race to
 * create the table itself sees a unique violation and simply tries again.
 */
export const runMigrations = Migrator.make({})({
  loader: Migrator.fromRecord(migrations),
  table: MIGRATIONS_TABLE
}).pipe(
  Effect.retry({ times: 3, while: (e) => e._tag === "SqlError" }),
  Effect.withSpan("Storage.migrate")
)

/**
 * Creates the database when absent, migrates it, then seals the secrets found plain (and re-seals
 * those of a previous HERALD_SECRETS_KEY): a step of its own because a migration has no key.
 */
export const prepareDatabase = Effect.gen(function*() {
  const config = yield* AppConfig
  const created = yield* ensureDatabase(config.databaseUrl)
  if (created) yield* Effect.logInfo("database created")
  const applied = yield* runMigrations
  const secrets = yield* sealAtRest
  return { created, applied: applied.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`), secrets }
})

/**
 * The database's readiness: created and migrated. Preparation runs in the background and retries
 * until Postgres answers, so a node started before its database still comes up (and /health/ready
 * answers 503 until then). Anything that needs the schema waits on `awaitReady`.
 */
export class Storage extends Effect.Service<Storage>()("herald/Storage", {
  scoped: Effect.gen(function*() {
    const ready = yield* Deferred.make<void>()
    yield* prepareDatabase.pipe(
      Effect.tapError((error) => Effect.logWarning("database not ready yet; retrying", { error: String(error) })),
      Effect.retry(reconnectSchedule),
      Effect.tap(({ applied }) => Effect.logInfo("database ready", { migrations_applied: applied })),
      Effect.zipRight(Deferred.succeed(ready, undefined)),
      Effect.forkScoped
    )
    const awaitReady = Deferred.await(ready)
    return {
      awaitReady,
      /** Wait at most `timeout` for the schema, else answer 503. */
      awaitReadyFor: (timeout: Duration.DurationInput) =>
        awaitReady.pipe(
          Effect.timeoutFail({ duration: timeout, onTimeout: () => new ServiceUnavailable({ message: "database is not ready" }) })
        ),
      isReady: Deferred.isDone(ready)
    } as const
  })
}) {}

