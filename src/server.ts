import { HttpApiSwagger, HttpLayerRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer, Option } from "effect"
import { AppConfig } from "./config/AppConfig.ts"
import { NodeServer, nodeServerLayer } from "./http/NodeServer.ts"
import { HeraldApi, OpsApi, ServedApi } from "./http/Api.ts"
import { DocumentedApi, openApiDocument } from "./http/openApiDocument.ts"
import { HealthHttpLive } from "./http/health/HealthHttp.ts"
import { ApiPortMetricsRoute, metricsRoute } from "./http/HttpMetrics.ts"
import { DEFAULT_BODY_TIMEOUTS, serveRoutes } from "./http/adapter/NodeAdapter.ts"
import { Idempotency } from "./http/idempotency/Idempotency.ts"
import { serveApi } from "./http/adapter/apiRoutes.ts"
import { AccountSecurityHttpLive, SignInHttpLive } from "./http/rcs/SignInHttp.ts"
import { AuthenticationLive, RcsCredentials } from "./http/Authentication.ts"
import { SignIn } from "./security/SignIn.ts"
import { SigningKeys } from "./security/SigningKeys.ts"
import { ApiKeys } from "./security/ApiKeys.ts"
import { BotsCache } from "./bots/BotsCache.ts"
import { ChangeFeed } from "./storage/ChangeFeed.ts"
import { ApiKeysHttpLive } from "./http/rcs/ApiKeysHttp.ts"
import { BotsRoutes } from "./http/rcs/BotsHttp.ts"
import { TeamHttpLive } from "./http/rcs/TeamHttp.ts"
import { WebhooksHttpLive } from "./http/rcs/WebhooksHttp.ts"
import { BotApplicationsHttpLive } from "./http/rcs/BotApplicationsHttp.ts"
import { BotApplications } from "./bots/BotApplications.ts"
import { TemplatesHttpLive } from "./http/rcs/TemplatesHttp.ts"
import { Templates } from "./templates/Templates.ts"
import { Webhooks } from "./webhooks/Webhooks.ts"
import { MessagesHttpLive } from "./http/rcs/MessagesHttp.ts"
import { WalletHttpLive } from "./http/rcs/WalletHttp.ts"
import { OverviewHttpLive } from "./http/rcs/OverviewHttp.ts"
import { Overview } from "./overview/Overview.ts"
import { Wallet } from "./wallet/Wallet.ts"
import { GatewayCallbacksRoute } from "./http/rcs/GatewayCallbacksRoute.ts"
import { AutoRepliesHttpLive } from "./http/rcs/AutoRepliesHttp.ts"
import { AutoReplies } from "./autoReplies/AutoReplies.ts"
import { ContactListsHttpLive } from "./http/rcs/ContactListsHttp.ts"
import { BroadcastsHttpLive } from "./http/rcs/BroadcastsHttp.ts"
import { Broadcasts } from "./broadcasts/Broadcasts.ts"
import { ContactImportRoute } from "./http/rcs/ContactImportRoute.ts"
import { ContactLists } from "./contacts/ContactLists.ts"
import { Messages } from "./messaging/Messages.ts"
import { MessageReports } from "./messaging/MessageReports.ts"
import { GatewayReports } from "./messaging/GatewayReports.ts"
import { TargetReportsLive } from "./broadcasts/TargetReports.ts"
import { MessagesRepo } from "./messaging/MessagesRepo.ts"
import { DeveloperHttpLive } from "./http/app/DeveloperHttp.ts"
import { AccountHttpLive, BillingHttpLive } from "./http/app/AccountHttp.ts"
import { AppAuthenticationLive, AppIdentityLive } from "./http/app/AppAuthentication.ts"
import { OptKeywords } from "./customers/OptKeywords.ts"
import { AppHttpLive } from "./http/app/AppHttp.ts"
import { CustomerImportRoute } from "./http/app/CustomerImportRoute.ts"
import { AiAgents } from "./aiAgents/AiAgents.ts"
import { AppContacts } from "./customers/AppContacts.ts"
import { CustomerImport } from "./customers/CustomerImport.ts"
import { Segments } from "./segments/Segments.ts"
import { Billing } from "./wallet/Billing.ts"
import { ApiRateLimits } from "./ratelimit/ApiRateLimits.ts"
import { SecretKeys } from "./security/SecretKeys.ts"
import { Team } from "./team/Team.ts"
import { PublicHttpLive } from "./http/public/PublicHttp.ts"
import { CampaignsHttpLive } from "./http/public/CampaignsHttp.ts"
import { Campaigns } from "./campaigns/Campaigns.ts"
import { PublicAuthenticationLive } from "./http/public/PublicAuthentication.ts"
import { MetaWebhookRoute } from "./http/public/MetaWebhookRoute.ts"
import { PublicMessages } from "./whatsapp/PublicMessages.ts"
import { WaTemplates } from "./whatsapp/templates/WaTemplates.ts"
import { WaReports } from "./whatsapp/inbound/WaReports.ts"
import { AgentInboundTurns } from "./aiAgents/AgentTurns.ts"
import { WaNumbers } from "./whatsapp/numbers/WaNumbers.ts"
import { Customers } from "./customers/Customers.ts"
import { Conversations } from "./conversations/Conversations.ts"
import { CapiConfigHttpLive, ConversionsHttpLive } from "./http/app/ConversionsHttp.ts"
import { Conversions } from "./conversions/Conversions.ts"
import { CapiConfigs } from "./conversions/CapiConfigs.ts"
import { IntegrationLogs } from "./integrations/IntegrationLogs.ts"
import { GraphqlRoute } from "./graphql/GraphqlRoute.ts"
import { GraphqlSocketLive } from "./graphql/GraphqlSocket.ts"
import { GraphqlOperations } from "./graphql/operations.ts"
import { LiveHub } from "./live/LiveHub.ts"
import { PlaygroundRoute } from "./graphql/playground/PlaygroundRoute.ts"
import { FaviconRoute } from "./http/FaviconRoute.ts"
import { GraphqlReads } from "./graphql/reads.ts"
import { CustomersRepo } from "./customers/CustomersRepo.ts"
import { PartnerEmailHttpLive, PartnerEmailVerifyHttpLive } from "./http/partner/PartnerEmailHttp.ts"
import { PartnerAuthenticationLive } from "./http/partner/PartnerAuthentication.ts"
import { SmtpFeedbackRoute } from "./http/partner/SmtpFeedbackRoute.ts"
import { PartnerEmailServices } from "./email/services.ts"
import { ConsoleLive } from "./console/ConsoleLive.ts"

/**
 * The services the routes use. Each declares what it depends on, so this is a flat list: a
 * service's own dependencies come with it (built once, shared by reference).
 */
const Services = Layer.mergeAll(
  Idempotency.Default,
  SignIn.Default,
  SigningKeys.Default,
  ApiKeys.Default,
  SecretKeys.Default,
  Team.Default,
  BotsCache.Default,
  BotApplications.Default,
  ApiRateLimits.Default,
  Messages.Default,
  MessageReports.Default,
  GatewayReports.Default.pipe(Layer.provide(TargetReportsLive)),
  MessagesRepo.Default,
  Wallet.Default,
  Billing.Default,
  Overview.Default,
  Templates.Default,
  AutoReplies.Default,
  ContactLists.Default,
  Broadcasts.Default,
  Webhooks.Default,
  AppContacts.Default,
  Segments.Default,
  AiAgents.Default,
  CustomerImport.Default,
  Customers.Default,
  CustomersRepo.Default,
  PublicMessages.Default,
  Campaigns.Default,
  WaTemplates.Default,
  WaReports.Default.pipe(Layer.provide(Layer.mergeAll(AgentInboundTurns, TargetReportsLive))),
  WaNumbers.Default,
  Conversations.Default,
  Conversions.Default,
  CapiConfigs.Default,
  OptKeywords.Default,
  IntegrationLogs.Default,
  GraphqlReads.Default,
  PartnerEmailServices
)

/** How each surface authenticates: the contract's credential per surface (docs/security.md). */
const Middleware = Layer.mergeAll(
  AuthenticationLive,
  AppAuthenticationLive,
  AppIdentityLive,
  PublicAuthenticationLive,
  PartnerAuthenticationLive
).pipe(Layer.provideMerge(RcsCredentials.Default))

/** Handlers of every HttpApi group. Each capability adds its group's layer here. */
export const ApiHandlers = Layer.mergeAll(
  HealthHttpLive,
  SignInHttpLive,
  AccountSecurityHttpLive,
  ApiKeysHttpLive,
  TeamHttpLive,
  DeveloperHttpLive,
  AccountHttpLive,
  BillingHttpLive,
  AppHttpLive,
  WebhooksHttpLive,
  BotApplicationsHttpLive,
  TemplatesHttpLive,
  MessagesHttpLive,
  WalletHttpLive,
  OverviewHttpLive,
  AutoRepliesHttpLive,
  ContactListsHttpLive,
  BroadcastsHttpLive,
  PublicHttpLive,
  CampaignsHttpLive,
  CapiConfigHttpLive,
  ConversionsHttpLive,
  Layer.merge(PartnerEmailHttpLive, PartnerEmailVerifyHttpLive)
).pipe(Layer.provideMerge(Middleware), Layer.provideMerge(Services))

/** The key set that verifies user tokens (RFC 7517), for clients and other services. */
const JwksRoute = HttpLayerRouter.use((router) =>
  Effect.flatMap(SigningKeys, (keys) =>
    router.add(
      "GET",
      "/.well-known/jwks.json",
      Effect.map(keys.jwks, (jwks) => HttpServerResponse.unsafeJson(jwks, { headers: { "cache-control": "public, max-age=60" } }))
    ))
)

/** The OpenAPI document of the whole API, read routes included, as a reference (docs/openapi.md). */
const OpenApiRoute = HttpLayerRouter.add("GET", "/api/v1/openapi.json", HttpServerResponse.unsafeJson(openApiDocument()))

/** GraphQL over POST and over WebSocket, on one set of operations (schema, limits, services). */
const GraphqlLive = Layer.merge(GraphqlRoute, GraphqlSocketLive).pipe(Layer.provide(Layer.mergeAll(GraphqlOperations.Default, LiveHub.Default, ChangeFeed.Default)))

const FullRoutes = Layer.mergeAll(
  serveApi(ServedApi),
  OpenApiRoute,
  BotsRoutes,
  GatewayCallbacksRoute,
  MetaWebhookRoute,
  SmtpFeedbackRoute,
  GraphqlLive,
  PlaygroundRoute,
  FaviconRoute,
  ContactImportRoute,
  CustomerImportRoute,
  HttpApiSwagger.layerHttpLayerRouter({ api: DocumentedApi, path: "/docs" }),
  ApiPortMetricsRoute,
  JwksRoute,
  ConsoleLive
).pipe(Layer.provide(ApiHandlers))

const OpsRoutes = Layer.mergeAll(serveApi(OpsApi).pipe(Layer.provide(HealthHttpLive)), ApiPortMetricsRoute)

/**
 * A node:http server of its own listening on `port` (0: any free port), as the node's NodeServer
 * and as the platform's HttpServer (its address; closing it on release).
 */
export const listenerOn = (port: number) =>
  Layer.unwrapEffect(Effect.map(NodeServer, (server) => NodeHttpServer.layer(() => server.server, { port }))).pipe(Layer.provideMerge(nodeServerLayer()))

const Listener = Layer.unwrapEffect(Effect.map(AppConfig, (config) => listenerOn(config.port)))

/** Where this node listens, for what must call it back (the in-process gateway simulator). */
export type OnListening = (address: { readonly port: number }) => Effect.Effect<void>

/**
 * The HTTP server on PORT: the whole API on api nodes, health and metrics on worker nodes. On
 * shutdown Node's server stops accepting, closes idle keep-alive sockets and waits for requests in
 * flight, before the layers below it (NATS, Postgres) are released.
 */
export const HttpServerLive = (surface: "full" | "ops", onListening: OnListening = () => Effect.void) =>
  Layer.unwrapEffect(Effect.map(AppConfig, (config) =>
    serveRoutes(surface === "full" ? FullRoutes : OpsRoutes, { ...DEFAULT_BODY_TIMEOUTS, idleMs: config.httpBodyIdleMs }, surface === "full" ? HeraldApi : OpsApi))).pipe(
    Layer.provide(Layer.tap(Listener, (context) => {
      const address = Context.get(context, HttpServer.HttpServer).address
      return address._tag === "TcpAddress" ? onListening({ port: address.port }) : Effect.void
    })),
    Layer.tap(() => Effect.logInfo("HTTP listening", { surface }))
  )

/**
 * METRICS_PORT: GET /metrics alone on a listener of its own (0: any free port), for Prometheus on
 * the cluster's private network, with METRICS_TOKEN's bearer check when that is set too. Without
 * METRICS_PORT nothing listens; without either setting no port serves metrics at all.
 */
export const MetricsServerLive = Layer.unwrapEffect(Effect.map(AppConfig, (config) =>
  Option.match(config.metricsPort, {
    onNone: () =>
      Option.isSome(config.metricsToken)
        ? Layer.empty
        : Layer.effectDiscard(Effect.logInfo("metrics are not served: set METRICS_PORT (a port of their own) or METRICS_TOKEN (GET /metrics on PORT with the token)")),
    onSome: (port) =>
      serveRoutes(metricsRoute(config.metricsToken)).pipe(
        Layer.provide(Layer.tap(listenerOn(port), (context) => {
          const address = Context.get(context, HttpServer.HttpServer).address
          return Effect.logInfo("metrics listening", { port: address._tag === "TcpAddress" ? address.port : port, token: Option.isSome(config.metricsToken) })
        }))
      )
  })))
