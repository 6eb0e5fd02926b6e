import { Effect, Layer } from "effect"
import type { SqlClient } from "@effect/sql"
import { ActorClient, ActorRuntime, ActorRuntimeLive, registerKind } from "./actors/runtime/index.ts"
import { RateLimitKind } from "./ratelimit/RateLimitKind.ts"
import { DeliveryKind } from "./webhooks/DeliveryKind.ts"
import { Dispatcher } from "./webhooks/Dispatcher.ts"
import { Endpoints } from "./webhooks/Endpoints.ts"
import { NatsLive } from "./bus/Nats.ts"
import { AppConfig, type AppSettings } from "./config/AppConfig.ts"
import { HttpServerLive } from "./http/server.ts"
import { loggingLayer } from "./observability/Logging.ts"
import { SqlLive } from "./storage/Database.ts"
import { Storage } from "./storage/Migrations.ts"

/** The actor kinds of Herald itself. Each capability adds its kind's registration here. */
export const HeraldKinds: Layer.Layer<never, never, ActorRuntime | SqlClient.SqlClient | ActorClient | AppConfig> = Layer.mergeAll(
  registerKind(RateLimitKind),
  registerKind(DeliveryKind).pipe(Layer.provide(Layer.mergeAll(Dispatcher.Default, Endpoints.Default)))
)

/**
 * One Herald node. Layers are released in reverse order of construction: the HTTP server stops
 * first (finishing requests in flight), then the actor runtime hands its partitions off, then NATS
 * is drained and the Postgres pool closed.
 */
export const NodeLive = <E = never, R = never>(settings: AppSettings, kinds: Layer.Layer<never, E, R> = HeraldKinds as unknown as Layer.Layer<never, E, R>) => {
  const Infrastructure = Layer.mergeAll(SqlLive, NatsLive, Storage.Default.pipe(Layer.provide(SqlLive)))
  const Runtime = kinds.pipe(Layer.provideMerge(ActorRuntimeLive))
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
    Layer.provide(Runtime),
    Layer.provide(Infrastructure),
    Layer.provide(AppConfig.make(settings)),
    Layer.provide(loggingLayer({ format: settings.logFormat, level: settings.logLevel })),
    // No tracer is configured (Herald exports no traces): every span (@effect/sql makes one per
    // statement, the HTTP server one per request) would be built and dropped, at a real cost.
    Layer.provide(Layer.setTracerEnabled(false))
  )
}
