import type { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { loggingLayer } from "../observability/Logging.ts"
import { SqlLive } from "../storage/Database.ts"
import { appliedMigration } from "../storage/appliedMigration.ts"
import { prepareDatabase } from "../storage/Migrations.ts"
import { migrations } from "../storage/migrations/index.ts"

/**
 * What one-shot commands run on: the configuration, logs on stderr and the database's pool (which
 * fails fast when Postgres is down rather than retrying like a server).
 */
export const OneShotBase = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    SqlLive.pipe(
      Layer.provideMerge(loggingLayer({ format: config.logFormat, level: config.logLevel, stderr: true })),
      Layer.provideMerge(AppConfig.make(config))
    ))
).pipe(Layer.provide(AppConfig.layer))

/** The newest migration this build holds: `0038_history_late_sent` → 38. */
export const LATEST_MIGRATION = Math.max(...Object.keys(migrations).map((name) => Number.parseInt(name, 10)))

/**
 * The database as a one-shot command needs it. One query tells whether it already holds every
 * migration of this build (the usual case: a node running the same version migrated it when it
 * started); only a database that is absent or behind is created and migrated first, as
 * `herald migrate` does, so that an operator's first command on a new machine still works. A
 * database ahead of this build (a newer version migrated it) is used as it is, as a node of this
 * version would.
 */
export const databaseReady = Effect.gen(function*() {
  const applied = yield* appliedMigration
  if (applied >= LATEST_MIGRATION) return
  yield* Effect.logInfo("database behind this version: migrating it first", { applied, latest: LATEST_MIGRATION })
  yield* prepareDatabase
})

/**
 * The layer of a one-shot command's services, built once the database is ready: `ready` is
 * `databaseReady` for most commands, or `prepareDatabase` for a command that writes sealed secrets
 * (it also checks that HERALD_SECRETS_KEY opens those already sealed).
 */
export const onDatabase = <A, E, R>(
  services: Layer.Layer<A, E, R>,
  ready: Effect.Effect<unknown, unknown, SqlClient.SqlClient | AppConfig> = databaseReady
) => services.pipe(Layer.provideMerge(Layer.effectDiscard(ready).pipe(Layer.provideMerge(OneShotBase))))
