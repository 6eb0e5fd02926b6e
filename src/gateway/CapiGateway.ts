import { Context, Effect, Layer, Option, type Scope } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { GRAPH_VERSION } from "./cloud/CloudApiGateway.ts"
import { type Exchange, exchange, gatewayPool } from "./rbm/exchange.ts"
import { SimulatedUpstream } from "./SimulatedUpstream.ts"

/** What one POST of a batch to Meta's Conversions API came to. */
export interface CapiForward {
  /** Meta's HTTP status; null when no answer came (refused, timed out, cut). */
  readonly statusCode: number | null
  readonly body: string
  readonly tookMs: number
}

/** The CapiGateway service. */
export interface CapiGatewayApi {
  readonly forward: (datasetId: string, accessToken: string, body: Buffer) => Effect.Effect<CapiForward>
}

/**
 * Meta's Conversions API (or the simulator speaking it): POST /{version}/{dataset_id}/events with
 * `{data: [...events], test_event_code?}` and the dataset's access token. Never fails: every
 * outcome is something the `capi` actor records. Two layers, chosen once at the composition root
 * (node.ts): `layerMeta` at GATEWAY_CAPI_URL and `layerSimulated`, the simulator in this process.
 */
export class CapiGateway extends Context.Tag("herald/CapiGateway")<CapiGateway, CapiGatewayApi>() {
  /** The Conversions API at GATEWAY_CAPI_URL; without it, forwards fail as unanswered (and are retried). */
  static readonly layerMeta: Layer.Layer<CapiGateway, never, AppConfig> = Layer.scoped(
    CapiGateway,
    Effect.flatMap(AppConfig, (config) =>
      Option.match(config.gatewayCapiUrl, {
        onNone: () => Effect.succeed(unconfigured),
        onSome: (baseUrl) => makeCapiGateway({ baseUrl, timeoutMs: config.gatewayTimeoutMs })
      }))
  )

  /** The simulator in this process, over HTTP. */
  static readonly layerSimulated: Layer.Layer<CapiGateway, never, AppConfig | SimulatedUpstream> = Layer.scoped(
    CapiGateway,
    Effect.gen(function*() {
      const config = yield* AppConfig
      const upstream = yield* SimulatedUpstream
      return yield* makeCapiGateway({ baseUrl: upstream.url, timeoutMs: config.gatewayTimeoutMs })
    })
  )
}

/** Batches are few and large: a handful of connections carries them. */
const CONNECTIONS = 16

const idSegment = (id: string) => (/^[0-9A-Za-z_-]{1,64}$/.test(id) ? id : encodeURIComponent(id))

const forwardOf = (result: Exchange, startedAt: number): CapiForward => {
  const tookMs = Date.now() - startedAt
  if (result._tag === "Answered") return { statusCode: result.status, body: result.body, tookMs }
  return { statusCode: null, body: result._tag === "NotSent" ? `not sent: ${result.cause}` : `no answer: ${result.cause} ${result.detail}`, tookMs }
}

export const makeCapiGateway = (options: { readonly baseUrl: string; readonly timeoutMs: number }): Effect.Effect<CapiGatewayApi, never, Scope.Scope> =>
  Effect.gen(function*() {
    const base = new URL(options.baseUrl)
    const prefix = `${base.pathname.replace(/\/+$/, "")}/${GRAPH_VERSION}`
    const pool = yield* gatewayPool(base.origin, CONNECTIONS, options.timeoutMs)
    const forward = (datasetId: string, accessToken: string, body: Buffer) =>
      Effect.async<CapiForward>((resume) => {
        const startedAt = Date.now()
        const headers = { authorization: `Bearer ${accessToken}`, "content-type": "application/json", "user-agent": "Herald-CAPI/1" }
        const cancel = exchange(pool, { method: "POST", path: `${prefix}/${idSegment(datasetId)}/events`, headers, body }, options.timeoutMs, (result) =>
          resume(Effect.succeed(forwardOf(result, startedAt))))
        return Effect.sync(cancel)
      })
    return { forward }
  })

/** A node without GATEWAY_CAPI_URL and no simulator: forwards fail as unanswered (and are retried). */
const unconfigured: CapiGatewayApi = {
  forward: () => Effect.succeed({ statusCode: null, body: "no Conversions API configured (GATEWAY_CAPI_URL)", tookMs: 0 })
}
