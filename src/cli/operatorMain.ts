import { Command } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect } from "effect"
import { HERALD_VERSION } from "./client/version.ts"
import { withColourRule } from "./colour.ts"
import { operatorCommands } from "./operator.ts"
import { reportFailure } from "./report.ts"

/**
 * The operator's commands' own entry point (dist/herald-admin.mjs; bin/herald.js picks it for
 * `migrate` and `admin`). It loads none of the server's modules (HTTP, GraphQL, actors, gateways),
 * and its bundle holds only the parts of effect and @effect/* those commands use, so a one-shot
 * command starts in a fraction of the whole bundle's time (docs/benchmarks.md, startup-admin).
 * The full command tree (src/cli/Cli.ts) holds the same commands, for `herald --help`.
 */
const run = Command.run(Command.make("herald").pipe(Command.withSubcommands([...operatorCommands])), { name: "herald", version: HERALD_VERSION })

const program = Effect.suspend(() => withColourRule(run(process.argv))).pipe(
  Effect.provide(NodeContext.layer),
  Effect.catchAllCause(reportFailure)
)

NodeRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
