import { Effect, Layer } from "effect"
import { NatsLive } from "./bus/Nats.ts"
import { AppConfig, type AppSettings } from "./config/AppConfig.ts"
import { HttpServerLive } from "./http/server.ts"
import { loggingLayer } from "./observability/Logging.ts"
import { SqlLive } from "./storage/Database.ts"
import { Storage } from "./storage/Migrations.ts"

/**
 * One Herald node. Layers are released in reverse order of construction: the HTTP server stops
 * first (finishing requests in flight), then the runtime, then NATS is drained and the pool closed.
 */
export const NodeLive = (settings: AppSettings) => {
  const Infrastructure = Layer.mergeAll(SqlLive, NatsLive, Storage.Default.pipe(Layer.provide(SqlLive)))
  const Http = HttpServerLive(settings.role === "worker" ? "ops" : "full")
  return Layer.mergeAll(
    Http,
    Layer.scopedDiscard(
      Effect.zipRight(
        Effect.logInfo("herald node started", { node_id: settings.nodeId, role: settings.role, port: settings.port }),
        Effect.addFinalizer(() => Effect.logInfo("herald node stopping"))
      )
    )
  ).pipe(
    Layer.provide(Infrastructure),
    Layer.provide(AppConfig.make(settings)),
    Layer.provide(loggingLayer({ format: settings.logFormat, level: settings.logLevel }))
  )
}
