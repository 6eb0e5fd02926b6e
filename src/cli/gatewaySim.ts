import { Command, Options } from "@effect/cli"
import { Console, Effect, Option, Redacted } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { InvalidRequest } from "../domain/errors.ts"
import { resolveCallbackUrl } from "../simulator/callbackSender.ts"
import { makeGatewaySimulator } from "../simulator/GatewaySimulator.ts"
import { resolveWaCallbackUrl } from "../simulator/whatsapp/WaSimulator.ts"
import { hostOption as host, SimulatorBase } from "./simulatorProcess.ts"

const port = Options.integer("port").pipe(
  Options.withDescription("port to listen on; 0 picks a free one. Default: GATEWAY_SIM_PORT when set, else 8090."),
  Options.optional
)
const callbackUrl = Options.text("callback-url").pipe(
  Options.withDescription("Herald API node to call back: a base URL (the RBM events path is appended) or the full events URL. When absent, no callbacks are sent."),
  Options.optional
)
/**
 * `herald gateway-sim`: the gateway simulator as a process of its own, for deployments of several
 * Herald nodes that all point GATEWAY_RBM_URL at it. Token and callback delays come from the
 * environment like a node's. Prints one JSON line once listening; runs until SIGTERM or SIGINT,
 * which interrupt the program and so close the simulator's scope with its connections.
 */
export const gatewaySim = Command.make("gateway-sim", { port, callbackUrl, host }, (input) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    let target: string | undefined
    let waTarget: string | undefined
    if (Option.isSome(input.callbackUrl)) {
      target = resolveCallbackUrl(input.callbackUrl.value)
      if (target === undefined) return yield* InvalidRequest.single("--callback-url", "must be an http or https URL")
      // Meta's webhooks go to the same node, on its own path.
      waTarget = resolveWaCallbackUrl(new URL(target).origin)
    }
    const simulator = yield* makeGatewaySimulator({
      port: Option.getOrElse(input.port, () => config.gatewaySimPort),
      host: input.host,
      callbackUrl: () => target,
      clientToken: Redacted.value(config.gatewayRbmClientToken),
      deliveredMs: config.gatewaySimDeliveredMs,
      readMs: config.gatewaySimReadMs,
      whatsapp: {
        callbackUrl: () => waTarget,
        appSecret: Redacted.value(config.gatewayWaAppSecret),
        templateReviewMs: config.gatewaySimTemplateReviewMs
      }
    })
    yield* Console.log(JSON.stringify({ listening: true, url: simulator.url, port: simulator.port, host: input.host, callback_url: target ?? null, whatsapp_callback_url: waTarget ?? null }))
    return yield* Effect.never
  }).pipe(Effect.scoped, Effect.provide(SimulatorBase))).pipe(
    Command.withDescription("Run the gateway simulator alone: RBM and the WhatsApp Cloud API (point GATEWAY_RBM_URL and GATEWAY_WA_URL of every node at it)")
  )
