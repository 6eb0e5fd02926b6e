import { Effect, Layer } from "effect"
import type { SqlClient } from "@effect/sql"
import { ActorClient, ActorRuntime, ActorRuntimeLive, registerKind } from "./actors/runtime/index.ts"
import { RateLimitKind } from "./ratelimit/RateLimitKind.ts"
import { DeliveryKind } from "./webhooks/DeliveryKind.ts"
import { Dispatcher } from "./webhooks/Dispatcher.ts"
import { Endpoints } from "./webhooks/Endpoints.ts"
import { type Nats, NatsLive } from "./bus/Nats.ts"
import { AppConfig, type AppSettings } from "./config/AppConfig.ts"
import { HttpServerLive, MetricsServerLive } from "./http/server.ts"
import { loggingLayer } from "./observability/Logging.ts"
import { tracingLayer } from "./observability/Tracing.ts"
import { HERALD_VERSION } from "./cli/client/version.ts"
import { SqlLive } from "./storage/Database.ts"
import { Storage } from "./storage/Migrations.ts"
import { GatewayCallbackUrl } from "./gateway/GatewayCallbackUrl.ts"
import { RcsGateway } from "./gateway/RcsGateway.ts"
import { GatewaysLive } from "./gateway/GatewaysLive.ts"
import { META_WEBHOOK_PATH } from "./http/public/MetaWebhookRoute.ts"
import { RBM_CALLBACK_PATH } from "./http/rcs/GatewayCallbacksRoute.ts"
import { SenderKind } from "./messaging/SenderKind.ts"
import { BroadcastKind } from "./broadcasts/BroadcastKind.ts"
import { BroadcastsRepo } from "./broadcasts/BroadcastsRepo.ts"
import { ChunkRunner } from "./broadcasts/ChunkRunner.ts"
import { SendDispatcher } from "./messaging/SendDispatcher.ts"
import { Subscriptions } from "./webhooks/Subscriptions.ts"
import { Webhooks } from "./webhooks/Webhooks.ts"
import { WebhooksRepo } from "./webhooks/WebhooksRepo.ts"
import { BotsRepo } from "./bots/BotsRepo.ts"
import { ChangeFeed } from "./storage/ChangeFeed.ts"
import { Outbox } from "./actors/runtime/index.ts"
import { WaSenderKind } from "./whatsapp/sender/WaSenderKind.ts"
import { WaDispatcher } from "./whatsapp/sender/WaDispatcher.ts"
import { WaNumbers } from "./whatsapp/numbers/WaNumbers.ts"
import type { WaGateway } from "./gateway/WaGateway.ts"
import type { CapiGateway } from "./gateway/CapiGateway.ts"
import { CapiKind } from "./conversions/CapiKind.ts"
import { CapiConfigs } from "./conversions/CapiConfigs.ts"
import { CapiForwarder } from "./conversions/CapiForwarder.ts"
import { MailerKind } from "./email/MailerKind.ts"
import { MailLedger } from "./email/MailLedger.ts"
import { Identities } from "./email/Identities.ts"
import type { EmailRelay } from "./gateway/EmailRelay.ts"

/** The actor kinds of Herald itself. Each capability adds its kind's registration here. */
export const HeraldKinds: Layer.Layer<never, never, ActorRuntime | SqlClient.SqlClient | ActorClient | AppConfig | RcsGateway | WaGateway | CapiGateway | EmailRelay | Outbox | Nats> = Layer.mergeAll(
  registerKind(RateLimitKind),
  registerKind(DeliveryKind).pipe(Layer.provide(Layer.mergeAll(Dispatcher.Default, Endpoints.Default))),
  registerKind(SenderKind).pipe(
    Layer.provide(ChunkRunner.Default),
    Layer.provide(Layer.mergeAll(SendDispatcher.Default, Webhooks.Default, Subscriptions.Default)),
    Layer.provide(Layer.mergeAll(WebhooksRepo.Default, BotsRepo.Default, ChangeFeed.Default))
  ),
  registerKind(WaSenderKind).pipe(
    Layer.provide(Layer.mergeAll(WaDispatcher.Default, WaNumbers.Default, Webhooks.Default, Subscriptions.Default)),
    Layer.provide(Layer.mergeAll(WebhooksRepo.Default, BotsRepo.Default, ChangeFeed.Default))
  ),
  registerKind(CapiKind).pipe(Layer.provide(Layer.mergeAll(CapiConfigs.Default, CapiForwarder.Default))),
  registerKind(BroadcastKind).pipe(
    Layer.provide(Layer.mergeAll(BroadcastsRepo.Default, Webhooks.Default)),
    Layer.provide(WebhooksRepo.Default)
  ),
  registerKind(MailerKind).pipe(Layer.provide(Layer.mergeAll(MailLedger.Default, Identities.Default)))
)

/**
 * The upstream gateways of this node: GATEWAY_RBM_URL and GATEWAY_WA_URL when set; otherwise, on a
 * single-process node (role all), the simulator in-process, calling back this node's own HTTP
 * port. Api and worker nodes of a cluster share one `herald gateway-sim` (DESIGN.md): without the
 * URLs they have no gateway, and sends fail with a config error rather than each node simulating.
 */
const gatewayFor = (ownUrl: () => string | undefined) =>
  GatewaysLive.pipe(Layer.provide(GatewayCallbackUrl.lazy(
    () => {
      const base = ownUrl()
      return base === undefined ? undefined : `${base}${RBM_CALLBACK_PATH}`
    },
    () => {
      const base = ownUrl()
      return base === undefined ? undefined : `${base}${META_WEBHOOK_PATH}`
    }
  )))

/**
 * One Herald node. Layers are released in reverse order of construction: the HTTP server stops
 * first (finishing requests in flight), then the actor runtime hands its partitions off, then NATS
 * is drained and the Postgres pool closed.
 */
export const NodeLive = <E = never, R = never>(settings: AppSettings, kinds: Layer.Layer<never, E, R> = HeraldKinds as unknown as Layer.Layer<never, E, R>) => {
  const Infrastructure = Layer.mergeAll(SqlLive, NatsLive, Storage.Default.pipe(Layer.provide(SqlLive)))
  let ownUrl: string | undefined
  const Gateway = gatewayFor(() => ownUrl)
  const Runtime = kinds.pipe(Layer.provide(Gateway), Layer.provideMerge(ActorRuntimeLive))
  const Http = HttpServerLive(settings.role === "worker" ? "ops" : "full", (address) => {
    ownUrl = `http://127.0.0.1:${address.port}`
  }).pipe(Layer.provide(Gateway))
  return Layer.mergeAll(
    Http,
    MetricsServerLive,
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
    // Without an OTLP endpoint the tracer is disabled: every span (@effect/sql makes one per
    // statement) would otherwise be built and dropped, at a real cost.
    Layer.provide(tracingLayer(settings.tracing, { nodeId: settings.nodeId, role: settings.role, version: HERALD_VERSION }))
  )
}
