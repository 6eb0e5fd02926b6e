import { Effect, Layer, ManagedRuntime } from "effect"
import { ActorRuntimeLive } from "../../src/actors/runtime/index.ts"
import { NatsLive } from "../../src/bus/Nats.ts"
import { AppConfig, type AppSettings } from "../../src/config/AppConfig.ts"
import { SqlLive } from "../../src/storage/Database.ts"
import { Storage } from "../../src/storage/Migrations.ts"
import { loggingLayer } from "../../src/observability/Logging.ts"
import { type Isolation, settingsFor } from "./isolation.ts"
import { TestKinds } from "./testKinds.ts"

/** The layers of one in-process node running the test actor kinds. */
export const nodeLayer = (iso: Isolation, overrides: Partial<AppSettings> = {}) => {
  const settings = settingsFor(iso, overrides)
  const Infra = Layer.mergeAll(SqlLive, NatsLive, Storage.Default.pipe(Layer.provide(SqlLive)))
  return TestKinds.pipe(
    Layer.provideMerge(ActorRuntimeLive),
    Layer.provideMerge(Infra),
    Layer.provideMerge(AppConfig.make(settings)),
    Layer.provide(loggingLayer({ format: "json", level: settings.logLevel }))
  )
}

export type TestNode = ManagedRuntime.ManagedRuntime<Layer.Layer.Success<ReturnType<typeof nodeLayer>>, never>

/** Starts an in-process node; `dispose()` stops it gracefully (hands its partitions off). */
export const startNode = async (iso: Isolation, overrides: Partial<AppSettings> = {}) => {
  const runtime = ManagedRuntime.make(nodeLayer(iso, overrides))
  await runtime.runPromise(Effect.void)
  return runtime
}
