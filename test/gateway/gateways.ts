import { ConfigProvider, type Context, Effect, Layer } from "effect"
import { AppConfig } from "../../src/config/AppConfig.ts"
import { GatewayCallbackUrl } from "../../src/gateway/GatewayCallbackUrl.ts"
import { GatewaysFor } from "../../src/node.ts"

/**
 * A node's gateways as node.ts chooses them, on settings from these environment variables, with
 * the callback address still to come (GatewayCallbackUrl, completed by `heraldListens`).
 */
export const gatewaysOn = (env: Record<string, string>) =>
  Layer.unwrapEffect(Effect.map(AppConfig, GatewaysFor)).pipe(
    Layer.provideMerge(GatewayCallbackUrl.layer),
    Layer.provide(AppConfig.layer),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
  )

/** What the node's HTTP server does once it listens: the in-process simulators learn where Herald is. */
export const heraldListens = (context: Context.Context<GatewayCallbackUrl>, origin: string) =>
  Effect.flatMap(GatewayCallbackUrl, (callback) => callback.listening(origin)).pipe(Effect.provide(context))
