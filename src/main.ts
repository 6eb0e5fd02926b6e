import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Cause, ConfigError, Effect, Layer } from "effect"
import { makeCli } from "./cli/Cli.ts"
import { onFailure } from "./cli/exit.ts"
import { printFailure } from "./cli/output.ts"
import { AppConfig, describeConfigError } from "./config/AppConfig.ts"
import { NodeLive } from "./node.ts"

/** Shutdown deadline: a node must exit within 10 s of SIGTERM whatever it is waiting on. */
const SHUTDOWN_DEADLINE_MS = 9_500

const serve = Effect.gen(function*() {
  const config = yield* AppConfig
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => {
      setTimeout(() => {
        process.stderr.write(JSON.stringify({ level: "WARN", message: "shutdown deadline reached; exiting" }) + "\n")
        process.exit(0)
      }, SHUTDOWN_DEADLINE_MS).unref()
    })
  }
  return yield* Layer.launch(NodeLive(config))
})

const cli = makeCli(serve)

const program = Effect.suspend(() => cli(process.argv)).pipe(
  Effect.provide(NodeContext.layer),
  Effect.catchAllCause(onFailure((failure, cause) => {
    if (ConfigError.isConfigError(failure)) return printFailure("invalid_config", `invalid configuration: ${describeConfigError(failure)}`)
    if (failure !== undefined && failure !== null && typeof failure === "object" && "_tag" in failure && "message" in failure) {
      return printFailure(snake(String(failure._tag)), String(failure.message))
    }
    return printFailure("internal_error", Cause.pretty(cause))
  }))
)

function snake(tag: string) {
  return tag.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase()
}

NodeRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
