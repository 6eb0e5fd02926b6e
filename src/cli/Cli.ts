import { Command } from "@effect/cli"
import { Effect, Layer } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { loggingLayer } from "../observability/Logging.ts"
import { SqlLive } from "../storage/Database.ts"
import { prepareDatabase } from "../storage/Migrations.ts"
import { AdminServices, adminCommands } from "./admin.ts"
import { partnerAdminCommands } from "./partnerAdmin.ts"
import { Partners } from "../email/Partners.ts"
import { printJson } from "./output.ts"
import { partitions, poison } from "./actors.ts"
import { PoisonQueue } from "../actors/runtime/poison.ts"
import { ClusterView } from "../actors/runtime/ClusterView.ts"
import { NatsLive } from "../bus/Nats.ts"
import { webhooks } from "./webhooks.ts"
import { gatewaySim } from "./gatewaySim.ts"
import { smtpSim } from "./smtpSim.ts"
import { clientCommands } from "./client/commands.ts"
import { HERALD_VERSION } from "./client/version.ts"
import { withColourRule } from "./colour.ts"

/**
 * What one-shot commands run on: the database (created and migrated first, once, failing fast
 * when Postgres is down rather than retrying like a server) and logs on stderr.
 */
const OneShotBase = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    SqlLive.pipe(
      Layer.provideMerge(loggingLayer({ format: config.logFormat, level: config.logLevel, stderr: true })),
      Layer.provideMerge(AppConfig.make(config))
    ))
).pipe(Layer.provide(AppConfig.layer))

const OneShot = Layer.mergeAll(AdminServices, Layer.effectDiscard(prepareDatabase)).pipe(Layer.provideMerge(OneShotBase))

/** One-shot commands that also read NATS (leases, membership, streams). */
const OneShotWithBus = Layer.mergeAll(PoisonQueue.Default, ClusterView.Default, Layer.effectDiscard(prepareDatabase)).pipe(
  Layer.provideMerge(NatsLive),
  Layer.provideMerge(OneShotBase)
)

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
    ...adminCommands(OneShot),
    ...partnerAdminCommands(Layer.mergeAll(Partners.Default, Layer.effectDiscard(prepareDatabase)).pipe(Layer.provideMerge(OneShotBase))),
    partitions.pipe(Command.provide(OneShotWithBus)),
    poison.pipe(Command.provide(OneShotWithBus))
  ])
)

/** The `herald` command line. `serve` is given by the composition root (src/main.ts). */
export const makeCli = (serve: Effect.Effect<void, unknown, AppConfig>) => {
  const serveCommand = Command.make("serve", {}, () => Effect.provide(serve, AppConfig.layer)).pipe(
    Command.withDescription("Run a node: HERALD_ROLE=all (default) | api | worker")
  )
  const herald = Command.make("herald").pipe(
    Command.withDescription("Run and operate Herald nodes (serve, migrate, admin …), and call a node's API with an account's secret key (connect, api, contacts)"),
    Command.withSubcommands([serveCommand, migrate, admin, webhooks, gatewaySim, smtpSim, ...clientCommands])
  )
  const run = Command.run(herald, { name: "herald", version: HERALD_VERSION })
  return (argv: ReadonlyArray<string>) => withColourRule(run(argv))
}
