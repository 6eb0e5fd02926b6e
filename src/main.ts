import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { makeCli } from "./cli/Cli.ts"
import { reportFailure } from "./cli/report.ts"
import { AppConfig } from "./config/AppConfig.ts"
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
  Effect.catchAllCause(reportFailure)
)

NodeRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
