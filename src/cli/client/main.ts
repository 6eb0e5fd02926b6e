import { Command } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Cause, Effect } from "effect"
import { withColourRule } from "../colour.ts"
import { onFailure } from "../exit.ts"
import { printFailure } from "../output.ts"
import { clientCommands } from "./commands.ts"
import { HERALD_VERSION } from "./version.ts"

/**
 * The client commands' own entry point (dist/herald-client.mjs; bin/herald.js picks it for
 * `connect`, `disconnect`, `api` and `contacts`): it loads none of the server's modules, so a
 * client call starts in a fraction of the time and memory of the whole bundle. The full command
 * tree (src/cli/Cli.ts) holds the same commands, for `herald --help`.
 */
const cli = Command.run(Command.make("herald").pipe(Command.withSubcommands([...clientCommands])), { name: "herald", version: HERALD_VERSION })

const program = Effect.suspend(() => cli(process.argv)).pipe(
  withColourRule,
  Effect.provide(NodeContext.layer),
  Effect.catchAllCause(onFailure((_, cause) => printFailure("internal_error", Cause.pretty(cause))))
)

NodeRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
