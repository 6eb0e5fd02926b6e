import { HttpApiSwagger, HttpLayerRouter, HttpMiddleware, HttpServerResponse, OpenApi } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import { AppConfig } from "../config/AppConfig.ts"
import { HeraldApi, OpsApi, ServedApi } from "./Api.ts"
import { HealthHttpLive } from "./health/HealthHttp.ts"
import { MetricsRoute } from "./HttpMetrics.ts"
import { RequestMiddleware, RouteLabelMiddleware } from "./middleware.ts"
import { AccountSecurityHttpLive, SignInHttpLive } from "./rcs/SignInHttp.ts"
import { AuthenticationLive, RcsCredentials } from "./Authentication.ts"
import { SignIn } from "../security/SignIn.ts"
import { SignInRepo } from "../storage/SignInRepo.ts"
import { Passwords } from "../security/Passwords.ts"
import { SigningKeys } from "../security/SigningKeys.ts"
import { ApiKeys } from "../security/ApiKeys.ts"
import { ApiKeysRepo } from "../storage/ApiKeysRepo.ts"
import { BotsRepo } from "../storage/BotsRepo.ts"
import { BotsCache } from "../storage/BotsCache.ts"
import { ChangeFeed } from "../storage/ChangeFeed.ts"
import { ApiKeysHttpLive } from "./rcs/ApiKeysHttp.ts"
import { BotsRoutes } from "./rcs/BotsHttp.ts"
import { TeamHttpLive } from "./rcs/TeamHttp.ts"
import { WebhooksHttpLive } from "./rcs/WebhooksHttp.ts"
import { BotApplicationsHttpLive } from "./rcs/BotApplicationsHttp.ts"
import { BotApplications } from "../bots/BotApplications.ts"
import { Webhooks } from "../webhooks/Webhooks.ts"
import { DeveloperHttpLive } from "./app/DeveloperHttp.ts"
import { AccountHttpLive } from "./app/AccountHttp.ts"
import { AppAuthenticationLive } from "./app/AppAuthentication.ts"
import { ApiRateLimits } from "../ratelimit/ApiRateLimits.ts"
import { SecretKeys } from "../security/SecretKeys.ts"
import { Team } from "../team/Team.ts"
import { TeamRepo } from "../storage/TeamRepo.ts"

/** Handlers of every HttpApi group. Each capability adds its group's layer here. */
export const ApiHandlers = Layer.mergeAll(
  HealthHttpLive,
  SignInHttpLive,
  AccountSecurityHttpLive,
  ApiKeysHttpLive,
  TeamHttpLive,
  DeveloperHttpLive,
  AccountHttpLive,
  WebhooksHttpLive,
  BotApplicationsHttpLive
).pipe(
  Layer.provideMerge(AuthenticationLive),
  Layer.provideMerge(RcsCredentials.Default),
  Layer.provideMerge(AppAuthenticationLive),
  Layer.provideMerge(SignIn.Default),
  Layer.provideMerge(ApiKeys.Default),
  Layer.provideMerge(Team.Default),
  Layer.provideMerge(SecretKeys.Default),
  Layer.provideMerge(BotsCache.Default),
  Layer.provideMerge(ApiRateLimits.Default),
  Layer.provideMerge(Webhooks.Default),
  Layer.provideMerge(BotApplications.Default),
  Layer.provide(Layer.mergeAll(SignInRepo.Default, Passwords.Default, ApiKeysRepo.Default, BotsRepo.Default, TeamRepo.Default, ChangeFeed.Default)),
  Layer.provideMerge(SigningKeys.Default)
)

/** The key set that verifies user tokens (RFC 7517), for clients and other services. */
const JwksRoute = HttpLayerRouter.use((router) =>
  Effect.flatMap(SigningKeys, (keys) =>
    router.add(
      "GET",
      "/.well-known/jwks.json",
      Effect.map(keys.jwks, (jwks) => HttpServerResponse.unsafeJson(jwks, { headers: { "cache-control": "public, max-age=60" } }))
    ))
)

/** The OpenAPI document of the whole API, read routes included. */
const OpenApiRoute = HttpLayerRouter.add("GET", "/api/v1/openapi.json", HttpServerResponse.unsafeJson(OpenApi.fromApi(HeraldApi)))

const FullRoutes = Layer.mergeAll(
  HttpLayerRouter.addHttpApi(ServedApi),
  OpenApiRoute,
  BotsRoutes,
  HttpApiSwagger.layerHttpLayerRouter({ api: HeraldApi, path: "/docs" }),
  MetricsRoute,
  JwksRoute
).pipe(Layer.provide(ApiHandlers))

const OpsRoutes = Layer.mergeAll(HttpLayerRouter.addHttpApi(OpsApi).pipe(Layer.provide(HealthHttpLive)), MetricsRoute)

const Listener = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) => NodeHttpServer.layer(() => createServer({ keepAliveTimeout: 5_000 }), { port: config.port }))
)

/** Serves routes behind Herald's middleware (request id, errors, metrics) on the given listener. */
export const serveRoutes = <A, E, R>(routes: Layer.Layer<A, E, R>) =>
  HttpLayerRouter.serve(routes.pipe(Layer.provide(RouteLabelMiddleware.layer), Layer.provide(RequestMiddleware)), {
    disableLogger: true,
    disableListenLog: true
  }).pipe(
    // No tracer is configured (Herald exports no traces yet), so the platform's per-request server
    // span would be built and dropped on every request: a third of a bare route's throughput.
    HttpMiddleware.withTracerDisabledWhen(() => true)
  )

/**
 * The HTTP server on PORT: the whole API on api nodes, health and metrics on worker nodes. On
 * shutdown Node's server stops accepting, closes idle keep-alive sockets and waits for requests in
 * flight, before the layers below it (NATS, Postgres) are released.
 */
export const HttpServerLive = (surface: "full" | "ops") =>
  serveRoutes(surface === "full" ? FullRoutes : OpsRoutes).pipe(
    Layer.provide(Listener),
    Layer.tap(() => Effect.logInfo("HTTP listening", { surface }))
  )
