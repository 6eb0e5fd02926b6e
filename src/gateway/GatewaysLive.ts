import { Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { GatewayCallbackUrl } from "./GatewayCallbackUrl.ts"
import { GatewayUnavailable, RcsGateway } from "./RcsGateway.ts"
import { makeRbmGateway } from "./rbm/RbmGateway.ts"
import { directTransport } from "./simulator/directTransport.ts"
import { type GatewaySimulatorError, makeGatewaySimulator } from "./simulator/GatewaySimulator.ts"

/**
 * The gateway Herald sends through (DESIGN.md, "Simulator processes"): GATEWAY_RBM_URL when set
 * (a real RBM host or a separate `herald gateway-sim`); otherwise the simulator, started here
 * in-process on GATEWAY_SIM_PORT and living as long as this layer. Either way the same RBM
 * adapter talks to it over HTTP, so the simulator exercises the real wire path.
 */
export const RcsGatewayLive: Layer.Layer<RcsGateway, GatewaySimulatorError, AppConfig | GatewayCallbackUrl> = Layer.scoped(
  RcsGateway,
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (Option.isSome(config.gatewayRbmUrl)) return yield* makeRbmGateway({ baseUrl: config.gatewayRbmUrl.value, timeoutMs: config.gatewayTimeoutMs })
    const callback = yield* GatewayCallbackUrl
    const simulator = yield* makeGatewaySimulator({
      port: config.gatewaySimPort,
      callbackUrl: callback.get,
      clientToken: Redacted.value(config.gatewayRbmClientToken),
      deliveredMs: config.gatewaySimDeliveredMs,
      readMs: config.gatewaySimReadMs,
      callbacks: config.gatewaySimCallbacks
    })
    yield* Effect.logInfo("gateway simulator started in-process").pipe(
      Effect.annotateLogs({ url: simulator.url, transport: config.gatewaySimTransport, callbacks: config.gatewaySimCallbacks })
    )
    return yield* makeRbmGateway({
      baseUrl: simulator.url,
      timeoutMs: config.gatewayTimeoutMs,
      ...(config.gatewaySimTransport === "direct" ? { transport: directTransport(simulator, config.gatewayTimeoutMs) } : {})
    })
  })
)

/**
 * A node of a cluster without GATEWAY_RBM_URL: nothing to send to. Sends fail as a config error
 * (the operator's to fix), capability checks as unavailable.
 */
export const UnconfiguredGateway: Layer.Layer<RcsGateway> = Layer.succeed(RcsGateway, {
  send: () =>
    Effect.succeed({
      _tag: "Rejected",
      error: {
        success: false,
        message: "no gateway configured",
        detail: "Set GATEWAY_RBM_URL on every node (a real RBM host or a shared `herald gateway-sim`).",
        category: "config",
        retryable: false
      }
    } as const),
  capability: () => Effect.fail(new GatewayUnavailable({ message: "no gateway configured (GATEWAY_RBM_URL)" }))
})
