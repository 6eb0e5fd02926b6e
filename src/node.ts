import { Effect, Layer, Option } from "effect"
import type { SqlClient } from "@effect/sql"
import { ActorClient, ActorRuntime, ActorRuntimeLive, registerKind } from "./actors/runtime/index.ts"
import { RateLimitKind } from "./ratelimit/RateLimitKind.ts"
import { DeliveryKind } from "./webhooks/DeliveryKind.ts"
import { Dispatcher } from "./webhooks/Dispatcher.ts"
import { Endpoints } from "./webhooks/Endpoints.ts"
import { type Nats, NatsLive } from "./bus/Nats.ts"
import { AppConfig, type AppSettings } from "./config/AppConfig.ts"
import { HttpServerLive, MetricsServerLive } from "./server.ts"
import { loggingLayer } from "./observability/Logging.ts"
import { tracingLayer } from "./observability/Tracing.ts"
import { HERALD_VERSION } from "./cli/client/version.ts"
import { SqlLive } from "./storage/Database.ts"
import { Storage } from "./storage/Migrations.ts"
import { GatewayCallbackUrl } from "./gateway/GatewayCallbackUrl.ts"
import { RcsGateway } from "./gateway/RcsGateway.ts"
import { GatewaySimulator } from "./simulator/GatewaySimulator.ts"
import { SmtpSink } from "./simulator/smtp/SmtpSink.ts"
import { SenderKind } from "./messaging/SenderKind.ts"
import { BroadcastKind } from "./broadcasts/BroadcastKind.ts"
import { BroadcastsRepo } from "./broadcasts/BroadcastsRepo.ts"
import { BroadcastTargets } from "./broadcasts/BroadcastTargets.ts"
import { ChunkRunsLive } from "./broadcasts/ChunkRunner.ts"
import { WaChunkRunsLive } from "./broadcasts/WaChunkRunner.ts"
import { SendDispatcher } from "./messaging/SendDispatcher.ts"
import { Subscriptions } from "./webhooks/Subscriptions.ts"
import { Webhooks } from "./webhooks/Webhooks.ts"
import { Outbox } from "./actors/runtime/index.ts"
import { WaSenderKind } from "./whatsapp/sender/WaSenderKind.ts"
import { WaDispatcher } from "./whatsapp/sender/WaDispatcher.ts"
import { WaMessagesRepo } from "./whatsapp/message/WaMessagesRepo.ts"
import { ConversationsRepo } from "./conversations/ConversationsRepo.ts"
import { WaNumbers } from "./whatsapp/numbers/WaNumbers.ts"
import { WaGateway } from "./gateway/WaGateway.ts"
import { CapiGateway } from "./gateway/CapiGateway.ts"
import { CapiKind } from "./conversions/CapiKind.ts"
import { CapiConfigs } from "./conversions/CapiConfigs.ts"
import { CapiForwarder } from "./conversions/CapiForwarder.ts"
import { MailerKind } from "./email/MailerKind.ts"
import { MailerServices } from "./email/services.ts"
import { EmailRelay } from "./gateway/EmailRelay.ts"

/** The actor kinds of Herald itself. Each capability adds its kind's registration here. */
export const HeraldKinds: Layer.Layer<never, never, ActorRuntime | SqlClient.SqlClient | ActorClient | AppConfig | RcsGateway | WaGateway | CapiGateway | EmailRelay | Outbox | Nats> = Layer.mergeAll(
  registerKind(RateLimitKind),
  registerKind(DeliveryKind).pipe(Layer.provide(Layer.mergeAll(Dispatcher.Default, Endpoints.Default))),
  registerKind(SenderKind).pipe(Layer.provide(Layer.mergeAll(ChunkRunsLive, SendDispatcher.Default, Webhooks.Default, Subscriptions.Default))),
  registerKind(WaSenderKind).pipe(
    Layer.provide(Layer.mergeAll(WaChunkRunsLive, WaDispatcher.Default, WaNumbers.Default, Webhooks.Default, Subscriptions.Default, WaMessagesRepo.Default, ConversationsRepo.Default))
  ),
  registerKind(CapiKind).pipe(Layer.provide(Layer.mergeAll(CapiConfigs.Default, CapiForwarder.Default))),
  registerKind(BroadcastKind).pipe(Layer.provide(Layer.mergeAll(BroadcastsRepo.Default, BroadcastTargets.Default, Webhooks.Default))),
  registerKind(MailerKind).pipe(Layer.provide(MailerServices))
)

/**
 * The upstream gateways of this node, chosen here once (DESIGN.md, "Simulator processes"): each
 * gateway at its URL (GATEWAY_RBM_URL, GATEWAY_WA_URL, GATEWAY_CAPI_URL, SMTP_URL) when set, the
 * real upstream or a shared `herald gateway-sim` / `herald smtp-sim`. For one unset, a
 * single-process node (role all) runs the simulator in-process on GATEWAY_SIM_PORT (and the SMTP
 * sink on SMTP_SIM_PORT, its control API on the simulator's port), calling back this node's own
 * HTTP port. Api and worker nodes of a cluster share one simulator: without the URLs they have no
 * gateway, and sends fail with a config error rather than each node simulating.
 */
export const GatewaysFor = (settings: AppSettings) => {
  const simulated = (url: Option.Option<string>) => settings.role === "all" && Option.isNone(url)
  // One simulator for all: every branch below provides the same layer, built once.
  const SimulatorWithSink = GatewaySimulator.layerInProcessWithSink.pipe(Layer.provideMerge(SmtpSink.layerInProcess))
  const Simulator = simulated(settings.smtpUrl) ? SimulatorWithSink : GatewaySimulator.layerInProcess
  return Layer.mergeAll(
    simulated(settings.gatewayRbmUrl) ? RcsGateway.layerSimulated.pipe(Layer.provide(Simulator)) : RcsGateway.layerRbm,
    simulated(settings.gatewayWaUrl) ? WaGateway.layerSimulated.pipe(Layer.provide(Simulator)) : WaGateway.layerCloudApi,
    simulated(settings.gatewayCapiUrl) ? CapiGateway.layerSimulated.pipe(Layer.provide(Simulator)) : CapiGateway.layerMeta,
    simulated(settings.smtpUrl) ? EmailRelay.layerSink.pipe(Layer.provide(SimulatorWithSink)) : EmailRelay.layerSmtp
  )
}

/**
 * One Herald node. Layers are released in reverse order of construction: the HTTP server stops
 * first (finishing requests in flight), then the actor runtime hands its partitions off, then NATS
 * is drained and the Postgres pool closed.
 */
export const NodeLive = <E = never, R = never>(settings: AppSettings, kinds: Layer.Layer<never, E, R> = HeraldKinds as unknown as Layer.Layer<never, E, R>) => {
  const Infrastructure = Layer.mergeAll(SqlLive, NatsLive, Storage.Default.pipe(Layer.provide(SqlLive)))
  const Gateway = GatewaysFor(settings)
  const Runtime = kinds.pipe(Layer.provide(Gateway), Layer.provideMerge(ActorRuntimeLive))
  // The in-process simulator's callbacks wait for this node's address, known once it listens.
  const Http = Layer.unwrapEffect(Effect.map(GatewayCallbackUrl, (callback) =>
    HttpServerLive(settings.role === "worker" ? "ops" : "full", (address) => callback.listening(`http://127.0.0.1:${address.port}`))
  )).pipe(Layer.provide(Gateway))
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
    Layer.provide(GatewayCallbackUrl.layer),
    Layer.provide(Infrastructure),
    Layer.provide(AppConfig.make(settings)),
    Layer.provide(loggingLayer({ format: settings.logFormat, level: settings.logLevel })),
    // Without an OTLP endpoint the tracer is disabled: every span (@effect/sql makes one per
    // statement) would otherwise be built and dropped, at a real cost.
    Layer.provide(tracingLayer(settings.tracing, { nodeId: settings.nodeId, role: settings.role, version: HERALD_VERSION }))
  )
}
