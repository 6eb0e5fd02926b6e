import { Context, Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { GatewayCallbackUrl } from "./GatewayCallbackUrl.ts"
import { GatewayUnavailable, RcsGateway } from "./RcsGateway.ts"
import { makeRbmGateway } from "./rbm/RbmGateway.ts"
import { directTransport, waDirectTransport } from "./simulator/directTransport.ts"
import { type GatewaySimulatorError, makeGatewaySimulator } from "./simulator/GatewaySimulator.ts"
import { WaGateway } from "./WaGateway.ts"
import { makeCloudApiGateway } from "./cloud/CloudApiGateway.ts"
import { CapiGateway, makeCapiGateway, unconfiguredCapi } from "./CapiGateway.ts"
import { EmailRelay, SMTP_FEEDBACK_PATH } from "./EmailRelay.ts"
import { makeNodemailerRelay } from "./smtp/NodemailerRelay.ts"
import { makeSmtpSink, type SmtpSinkError } from "./smtp/SmtpSink.ts"


/**
 * A node of a cluster without GATEWAY_RBM_URL: nothing to send to. Sends fail as a config error
 * (the operator's to fix), capability checks as unavailable.
 */
const notConfigured = (detail: string) =>
  Effect.succeed({
    _tag: "Rejected",
    error: { success: false, message: "no gateway configured", detail, category: "config", retryable: false }
  } as const)

const unconfiguredRcs: Context.Tag.Service<RcsGateway> = {
  send: () => notConfigured("Set GATEWAY_RBM_URL on every node (a real RBM host or a shared `herald gateway-sim`)."),
  capability: () => Effect.fail(new GatewayUnavailable({ message: "no gateway configured (GATEWAY_RBM_URL)" }))
}

/** The WhatsApp half of a node of a cluster without GATEWAY_WA_URL: sends fail as a config error. */
const unconfiguredWa: Context.Tag.Service<WaGateway> = {
  send: () => notConfigured("Set GATEWAY_WA_URL on every node (Meta's Graph API or a shared `herald gateway-sim`)."),
  submitTemplate: () => Effect.succeed({ _tag: "Refused", reason: "no WhatsApp gateway configured (GATEWAY_WA_URL)", unavailable: true } as const),
  deleteTemplate: () => Effect.succeed(false)
}

/** A node of a cluster without SMTP_URL: mail is refused whole, the operator's to fix. */
const unconfiguredEmail: Context.Tag.Service<EmailRelay> = {
  send: () => Effect.succeed({ _tag: "Rejected", code: 554, response: "no SMTP relay configured: set SMTP_URL on every node" } as const),
  url: "none"
}

/** Herald's own origin with the feedback path, from the RBM callback URL; undefined until Herald listens. */
const feedbackUrlFrom = (callbackUrl: () => string | undefined) => (): string | undefined => {
  const raw = callbackUrl()
  if (raw === undefined) return undefined
  try {
    return new URL(raw).origin + SMTP_FEEDBACK_PATH
  } catch {
    return undefined
  }
}

/**
 * The gateways Herald sends through (DESIGN.md, "Simulator processes"): GATEWAY_RBM_URL,
 * GATEWAY_WA_URL and GATEWAY_CAPI_URL when set (the real upstreams or a separate `herald gateway-sim`); for either one
 * unset, the simulator, started here in-process on GATEWAY_SIM_PORT and living as long as this
 * layer. Either way the real adapters talk to it over HTTP, so the simulator exercises the wire.
 * E-mail likewise: SMTP_URL when set, else on a single-process node the SMTP sink in-process on
 * SMTP_SIM_PORT (its control API on the simulator's HTTP port), reached by the same nodemailer
 * relay over a real socket.
 */
export const GatewaysLive: Layer.Layer<
  RcsGateway | WaGateway | CapiGateway | EmailRelay,
  GatewaySimulatorError | SmtpSinkError,
  AppConfig | GatewayCallbackUrl
> = Layer.scopedContext(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const callback = yield* GatewayCallbackUrl
    // Only a single-process node (role all) starts one: nodes of a cluster share a `herald
    // gateway-sim` (DESIGN.md), and one without a URL sends nothing rather than simulating alone.
    const needsSink = config.role === "all" && Option.isNone(config.smtpUrl)
    const sink = needsSink
      ? yield* makeSmtpSink({
        port: config.smtpSimPort,
        feedbackUrl: feedbackUrlFrom(callback.get),
        feedbackSecret: Redacted.value(config.smtpFeedbackSecret)
      })
      : undefined
    // The sink's control API lives on the simulator's HTTP port, so the sink alone starts it too.
    const needsSimulator = config.role === "all" &&
      (Option.isNone(config.gatewayRbmUrl) || Option.isNone(config.gatewayWaUrl) || Option.isNone(config.gatewayCapiUrl) || needsSink)
    const simulator = needsSimulator
      ? yield* makeGatewaySimulator({
        port: config.gatewaySimPort,
        callbackUrl: callback.get,
        clientToken: Redacted.value(config.gatewayRbmClientToken),
        deliveredMs: config.gatewaySimDeliveredMs,
        readMs: config.gatewaySimReadMs,
        callbacks: config.gatewaySimCallbacks,
        whatsapp: {
          callbackUrl: callback.whatsapp,
          appSecret: Redacted.value(config.gatewayWaAppSecret),
          templateReviewMs: config.gatewaySimTemplateReviewMs
        },
        ...(sink !== undefined ? { smtp: sink } : {})
      })
      : undefined
    if (simulator !== undefined) {
      yield* Effect.logInfo("gateway simulator started in-process").pipe(
        Effect.annotateLogs({ url: simulator.url, transport: config.gatewaySimTransport, callbacks: config.gatewaySimCallbacks })
      )
    }
    if (sink !== undefined) {
      yield* Effect.logInfo("smtp sink started in-process").pipe(
        Effect.annotateLogs({ url: sink.url, control_url: `${simulator!.url}/simulate/smtp/messages` })
      )
    }
    const direct = simulator !== undefined && config.gatewaySimTransport === "direct"
    const rbmUrl = Option.getOrUndefined(config.gatewayRbmUrl) ?? simulator?.url
    const waUrl = Option.getOrUndefined(config.gatewayWaUrl) ?? simulator?.url
    const rcs = rbmUrl === undefined ? unconfiguredRcs : yield* makeRbmGateway({
      baseUrl: rbmUrl,
      timeoutMs: config.gatewayTimeoutMs,
      ...(direct && Option.isNone(config.gatewayRbmUrl) ? { transport: directTransport(simulator!, config.gatewayTimeoutMs) } : {})
    })
    const wa = waUrl === undefined ? unconfiguredWa : yield* makeCloudApiGateway({
      baseUrl: waUrl,
      accessToken: () => Redacted.value(config.gatewayWaToken),
      timeoutMs: config.gatewayTimeoutMs,
      ...(direct && Option.isNone(config.gatewayWaUrl) ? { transport: waDirectTransport(simulator!, config.gatewayTimeoutMs) } : {})
    })
    const capiUrl = Option.getOrUndefined(config.gatewayCapiUrl) ?? simulator?.url
    const capi = capiUrl === undefined ? unconfiguredCapi : yield* makeCapiGateway({ baseUrl: capiUrl, timeoutMs: config.gatewayTimeoutMs })
    const smtpUrl = Option.getOrUndefined(config.smtpUrl) ?? sink?.url
    const email = smtpUrl === undefined ? unconfiguredEmail : yield* makeNodemailerRelay(smtpUrl)
    return Context.make(RcsGateway, rcs).pipe(Context.add(WaGateway, wa), Context.add(CapiGateway, capi), Context.add(EmailRelay, email))
  })
)

