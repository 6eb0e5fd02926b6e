import { Context, Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { notConfiguredRecord } from "../domain/gatewayError.ts"
import { makeCloudApiGateway } from "./cloud/CloudApiGateway.ts"
import { SimulatedUpstream } from "./SimulatedUpstream.ts"
import type { WaGatewayApi } from "./wa.ts"

/**
 * The WhatsApp Cloud API as the `wa_sender` actor and the template service see it (the vocabulary
 * is in wa.ts). Two layers, chosen once at the composition root (node.ts): `layerCloudApi`, Meta's
 * Graph API at GATEWAY_WA_URL (or a shared `herald gateway-sim`), and `layerSimulated`, the
 * gateway simulator running in this process.
 */
export class WaGateway extends Context.Tag("herald/WaGateway")<WaGateway, WaGatewayApi>() {
  /** The Cloud API at GATEWAY_WA_URL; without it (a node of a cluster), sends fail as a config error. */
  static readonly layerCloudApi: Layer.Layer<WaGateway, never, AppConfig> = Layer.scoped(
    WaGateway,
    Effect.flatMap(AppConfig, (config) =>
      Option.match(config.gatewayWaUrl, {
        onNone: () => Effect.succeed(unconfigured),
        onSome: (baseUrl) =>
          makeCloudApiGateway({ baseUrl, accessToken: () => Redacted.value(config.gatewayWaToken), timeoutMs: config.gatewayTimeoutMs })
      }))
  )

  /** The simulator in this process, over HTTP or (GATEWAY_SIM_TRANSPORT=direct) by direct calls. */
  static readonly layerSimulated: Layer.Layer<WaGateway, never, AppConfig | SimulatedUpstream> = Layer.scoped(
    WaGateway,
    Effect.gen(function*() {
      const config = yield* AppConfig
      const upstream = yield* SimulatedUpstream
      return yield* makeCloudApiGateway({
        baseUrl: upstream.url,
        accessToken: () => Redacted.value(config.gatewayWaToken),
        timeoutMs: config.gatewayTimeoutMs,
        ...(upstream.cloudTransport !== undefined ? { transport: upstream.cloudTransport } : {})
      })
    })
  )
}

/** The WhatsApp half of a node of a cluster without GATEWAY_WA_URL: sends fail as a config error. */
const unconfigured: WaGatewayApi = {
  send: () =>
    Effect.succeed({
      _tag: "Rejected",
      error: notConfiguredRecord("Set GATEWAY_WA_URL on every node (Meta's Graph API or a shared `herald gateway-sim`).")
    } as const),
  submitTemplate: () => Effect.succeed({ _tag: "Refused", reason: "no WhatsApp gateway configured (GATEWAY_WA_URL)", unavailable: true } as const),
  deleteTemplate: () => Effect.succeed(false)
}
