import { randomUUID } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { AppConfig } from "../../src/config/AppConfig.ts"
import { GatewayCallbackUrl } from "../../src/gateway/GatewayCallbackUrl.ts"
import { RcsGateway } from "../../src/gateway/RcsGateway.ts"
import { GatewaysLive as RcsGatewayLive } from "../../src/gateway/GatewaysLive.ts"
import { makeGatewaySimulator } from "../../src/gateway/simulator/GatewaySimulator.ts"
import { eventually, makeReceiver } from "./receiver.ts"

const TOKEN = "live-layer-token"

/** RcsGatewayLive on settings from these environment variables. */
const live = (env: Record<string, string>, callbackUrl: () => string | undefined) =>
  RcsGatewayLive.pipe(
    Layer.provide(GatewayCallbackUrl.lazy(callbackUrl)),
    Layer.provide(AppConfig.layer),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
  )

const sendHello = (to: string) =>
  Effect.gen(function*() {
    const gateway = yield* RcsGateway
    const messageId = randomUUID()
    const outcome = yield* gateway.send({ messageId, agentId: "bot-live", to, content: { type: "text", text: "hi", suggestions: [] } })
    return { outcome, messageId }
  })

describe("RcsGatewayLive", () => {
  it.scoped("without GATEWAY_RBM_URL: starts the simulator in-process, signing callbacks with GATEWAY_RBM_CLIENT_TOKEN", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver(TOKEN)
      // The callback URL becomes known only after the gateway is up, as in the composition root.
      let url: string | undefined
      const context = yield* Layer.build(
        live({ GATEWAY_SIM_PORT: "0", SMTP_SIM_PORT: "0", GATEWAY_RBM_CLIENT_TOKEN: TOKEN, GATEWAY_SIM_DELIVERED_MS: "20", GATEWAY_SIM_READ_MS: "40" }, () => url)
      )
      url = receiver.url
      const { outcome, messageId } = yield* sendHello("+919812345678").pipe(Effect.provide(context))
      expect(outcome._tag).toBe("Accepted")
      yield* eventually(() => receiver.statusesOf(messageId).length >= 2)
      expect(receiver.statusesOf(messageId).map((s) => s.status)).toEqual(["delivered", "read"])
    }))

  it.scoped("with GATEWAY_RBM_URL: sends to that host", () =>
    Effect.gen(function*() {
      const external = yield* makeGatewaySimulator({ port: 0, callbackUrl: () => undefined, clientToken: TOKEN, deliveredMs: 10_000, readMs: 10_000 })
      const context = yield* Layer.build(live({ GATEWAY_RBM_URL: external.url }, () => undefined))
      const { outcome, messageId } = yield* sendHello("+919812340001").pipe(Effect.provide(context))
      expect(outcome._tag).toBe("Rejected")
      expect(external.log(messageId)).toEqual({ sends: 1, deliveries: 0 })
    }))
})
