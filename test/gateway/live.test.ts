import { randomUUID } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { RcsGateway } from "../../src/gateway/RcsGateway.ts"
import { makeGatewaySimulator } from "../../src/simulator/GatewaySimulator.ts"
import { gatewaysOn, heraldListens } from "./gateways.ts"
import { eventually, makeReceiver } from "./receiver.ts"

const TOKEN = "live-layer-token"

const sendHello = (to: string) =>
  Effect.gen(function*() {
    const gateway = yield* RcsGateway
    const messageId = randomUUID()
    const outcome = yield* gateway.send({ messageId, agentId: "bot-live", to, content: { type: "text", text: "hi", suggestions: [] } })
    return { outcome, messageId }
  })

describe("the RcsGateway node.ts chooses", () => {
  it.scoped("without GATEWAY_RBM_URL: starts the simulator in-process, signing callbacks with GATEWAY_RBM_CLIENT_TOKEN", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver(TOKEN)
      // The callback URL becomes known only after the gateway is up, as in the composition root.
      const context = yield* Layer.build(
        gatewaysOn({ GATEWAY_SIM_PORT: "0", SMTP_SIM_PORT: "0", GATEWAY_RBM_CLIENT_TOKEN: TOKEN, GATEWAY_SIM_DELIVERED_MS: "20", GATEWAY_SIM_READ_MS: "40" })
      )
      yield* heraldListens(context, new URL(receiver.url).origin)
      const { outcome, messageId } = yield* sendHello("+919812345678").pipe(Effect.provide(context))
      expect(outcome._tag).toBe("Accepted")
      yield* eventually(() => receiver.statusesOf(messageId).length >= 2)
      expect(receiver.statusesOf(messageId).map((s) => s.status)).toEqual(["delivered", "read"])
    }))

  it.scoped("with GATEWAY_RBM_URL: sends to that host", () =>
    Effect.gen(function*() {
      const external = yield* makeGatewaySimulator({ port: 0, callbackUrl: () => undefined, clientToken: TOKEN, deliveredMs: 10_000, readMs: 10_000 })
      const context = yield* Layer.build(gatewaysOn({ GATEWAY_RBM_URL: external.url }))
      const { outcome, messageId } = yield* sendHello("+919812340001").pipe(Effect.provide(context))
      expect(outcome._tag).toBe("Rejected")
      expect(external.log(messageId)).toEqual({ sends: 1, deliveries: 0 })
    }))
})
