// A real `herald serve` node process that also hosts the test actor kinds, for the tests that
// kill -9 workers. Configured by the same environment variables as herald itself.
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { loadSettings } from "../../src/config/AppConfig.ts"
import { NodeLive } from "../../src/node.ts"
import { TestKinds } from "./testKinds.ts"

Effect.flatMap(loadSettings, (settings) => Layer.launch(NodeLive(settings, TestKinds))).pipe(
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
