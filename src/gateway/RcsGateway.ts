import { Context, Effect, Layer, Option } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { notConfiguredRecord } from "../domain/gatewayError.ts"
import { GatewayUnavailable, type RcsGatewayApi } from "./rcs.ts"
import { makeRbmGateway } from "./rbm/RbmGateway.ts"
import { SimulatedUpstream } from "./SimulatedUpstream.ts"

/**
 * The upstream RCS gateway as the sender actors see it (the vocabulary is in rcs.ts). Two layers,
 * chosen once at the composition root (node.ts): `layerRbm`, Google's RBM API at GATEWAY_RBM_URL
 * (a real RBM host or a shared `herald gateway-sim`), and `layerSimulated`, the gateway simulator
 * running in this process.
 */
export class RcsGateway extends Context.Tag("herald/RcsGateway")<RcsGateway, RcsGatewayApi>() {
  /** RBM at GATEWAY_RBM_URL; without it (a node of a cluster), no gateway: sends fail as a config error. */
  static readonly layerRbm: Layer.Layer<RcsGateway, never, AppConfig> = Layer.scoped(
    RcsGateway,
    Effect.flatMap(AppConfig, (config) =>
      Option.match(config.gatewayRbmUrl, {
        onNone: () => Effect.succeed(unconfigured),
        onSome: (baseUrl) => makeRbmGateway({ baseUrl, timeoutMs: config.gatewayTimeoutMs })
      }))
  )

  /** The simulator in this process, over HTTP or (GATEWAY_SIM_TRANSPORT=direct) by direct calls. */
  static readonly layerSimulated: Layer.Layer<RcsGateway, never, AppConfig | SimulatedUpstream> = Layer.scoped(
    RcsGateway,
    Effect.gen(function*() {
      const config = yield* AppConfig
      const upstream = yield* SimulatedUpstream
      return yield* makeRbmGateway({
        baseUrl: upstream.url,
        timeoutMs: config.gatewayTimeoutMs,
        ...(upstream.rbmTransport !== undefined ? { transport: upstream.rbmTransport } : {})
      })
    })
  )
}

/**
 * A node of a cluster without GATEWAY_RBM_URL: nothing to send to. Sends fail as a config error
 * (the operator's to fix), capability checks as unavailable.
 */
const unconfigured: RcsGatewayApi = {
  send: () =>
    Effect.succeed({
      _tag: "Rejected",
      error: notConfiguredRecord("Set GATEWAY_RBM_URL on every node (a real RBM host or a shared `herald gateway-sim`).")
    } as const),
  capability: () => Effect.fail(new GatewayUnavailable({ message: "no gateway configured (GATEWAY_RBM_URL)" }))
}
