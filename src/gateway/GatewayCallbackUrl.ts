import { Context, Deferred, Effect, Layer } from "effect"

/**
 * Herald's own address, where a simulator in this process calls back (RBM's events, Meta's
 * webhooks, the SMTP sink's reports; each appends its own path). The simulators start before the
 * HTTP server, which needs the gateways, so the address is a Deferred: the HTTP server completes
 * it once it listens (node.ts), the simulator awaits it and callbacks asked for before then wait and are retried.
 */
export class GatewayCallbackUrl extends Context.Tag("herald/GatewayCallbackUrl")<GatewayCallbackUrl, {
  /** Completes the address (`http://127.0.0.1:<port>`); later calls change nothing. */
  readonly listening: (origin: string) => Effect.Effect<void>
  /** The address, once Herald listens. */
  readonly origin: Effect.Effect<string>
}>() {
  /** An address still to come: the node's HTTP server completes it. */
  static readonly layer: Layer.Layer<GatewayCallbackUrl> = Layer.effect(
    GatewayCallbackUrl,
    Effect.map(Deferred.make<string>(), (deferred) => ({
      listening: (origin: string) => Effect.asVoid(Deferred.succeed(deferred, origin)),
      origin: Deferred.await(deferred)
    }))
  )

  /** An address known from the start (a test's receiver). */
  static readonly fixed = (origin: string): Layer.Layer<GatewayCallbackUrl> =>
    Layer.succeed(GatewayCallbackUrl, { listening: () => Effect.void, origin: Effect.succeed(origin) })
}
