import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { ValidationError } from "@effect/cli"
import { Cause, ConfigError, Effect, Layer, Option } from "effect"
import { makeCli } from "./cli/Cli.ts"
import { isClientFailure } from "./cli/client/exitCodes.ts"
import { reportClientFailure } from "./cli/client/output.ts"
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
  Effect.catchAllCause((cause) => {
    if (Cause.isInterruptedOnly(cause)) return Effect.void
    const failure = Option.getOrUndefined(Cause.failureOption(cause))
    // A usage error (@effect/cli printed what was wrong and the usage): exit 2, as is conventional.
    if (ValidationError.isValidationError(failure)) return Effect.sync(() => void (process.exitCode = 2))
    // The client commands' failures carry their exit code (src/cli/client/exitCodes.ts).
    if (isClientFailure(failure)) return reportClientFailure(failure)
    if (ConfigError.isConfigError(failure)) return printFailure("invalid_config", `invalid configuration: ${describeConfigError(failure)}`)
    if (failure !== undefined && failure !== null && typeof failure === "object" && "_tag" in failure && "message" in failure) {
      return printFailure(snake(String(failure._tag)), String(failure.message))
    }
    return printFailure("internal_error", Cause.pretty(cause))
  })
)

function snake(tag: string) {
  return tag.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase()
}

NodeRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
