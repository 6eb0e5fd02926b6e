import { Command } from "@effect/cli"
import { Effect } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { clientCommands } from "./client/commands.ts"
import { HERALD_VERSION } from "./client/version.ts"
import { withColourRule } from "./colour.ts"
import { gatewaySim } from "./gatewaySim.ts"
import { operatorCommands } from "./operator.ts"
import { smtpSim } from "./smtpSim.ts"
import { webhooks } from "./webhooks.ts"

/**
 * The whole `herald` command line. `serve` is given by the composition root (src/main.ts). The
 * operator's commands (migrate, admin) and the client's (connect, api …) also run from bundles of
 * their own (src/cli/operatorMain.ts, src/cli/client/main.ts), which bin/herald.js picks for them;
 * this tree holds them too, for `herald --help`.
 */
export const makeCli = (serve: Effect.Effect<void, unknown, AppConfig>) => {
  const serveCommand = Command.make("serve", {}, () => Effect.provide(serve, AppConfig.layer)).pipe(
    Command.withDescription("Run a node: HERALD_ROLE=all (default) | api | worker")
  )
  const herald = Command.make("herald").pipe(
    Command.withDescription("Run and operate Herald nodes (serve, migrate, admin …), and call a node's API with an account's secret key (connect, api, contacts)"),
    Command.withSubcommands([serveCommand, ...operatorCommands, webhooks, gatewaySim, smtpSim, ...clientCommands])
  )
  const run = Command.run(herald, { name: "herald", version: HERALD_VERSION })
  return (argv: ReadonlyArray<string>) => withColourRule(run(argv))
}
