import { Command } from "@effect/cli"
import { Effect } from "effect"
import { Partners } from "../email/Partners.ts"
import { prepareDatabase } from "../storage/Migrations.ts"
import { partitions, poison } from "./actors.ts"
import { adminCommands } from "./admin.ts"
import { natsClean } from "./natsClean.ts"
import { OneShotBase, onDatabase } from "./oneShot.ts"
import { printJson } from "./output.ts"
import { partnerAdminCommands } from "./partnerAdmin.ts"

/**
 * The operator's one-shot commands, `herald migrate` and `herald admin …`: in the whole command
 * tree (src/cli/Cli.ts, for `herald --help`) and in their own bundle (src/cli/operatorMain.ts,
 * dist/herald-admin.mjs), which bin/herald.js runs for them. Each builds only the services it
 * uses and none of the server's.
 */
const migrate = Command.make("migrate", {}, () =>
  Effect.gen(function*() {
    const result = yield* prepareDatabase
    yield* printJson({ database_created: result.created, applied: result.applied, secrets: result.secrets })
  }).pipe(Effect.provide(OneShotBase))).pipe(
  Command.withDescription(
    "Create the database if absent, apply pending migrations, and seal secrets found plain (or sealed under HERALD_SECRETS_KEY_PREVIOUS) under HERALD_SECRETS_KEY"
  )
)

const admin = Command.make("admin").pipe(
  Command.withDescription("Operator commands; each prints JSON"),
  Command.withSubcommands([
    ...adminCommands(),
    ...partnerAdminCommands(onDatabase(Partners.Default)),
    partitions,
    poison,
    natsClean
  ])
)

export const operatorCommands = [migrate, admin] as const

