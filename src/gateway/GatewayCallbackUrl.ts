import { Context, Layer } from "effect"

/**
 * Where the in-process gateway simulator sends its callbacks. A function, not a value: the
 * composition root knows Herald's own address only after the HTTP server listens, and the
 * simulator starts before that. `get` answering undefined makes callbacks wait and retry.
 */
export class GatewayCallbackUrl extends Context.Tag("herald/GatewayCallbackUrl")<GatewayCallbackUrl, {
  readonly get: () => string | undefined
}>() {
  static readonly fixed = (url: string): Layer.Layer<GatewayCallbackUrl> => Layer.succeed(GatewayCallbackUrl, { get: () => url })
  static readonly lazy = (get: () => string | undefined): Layer.Layer<GatewayCallbackUrl> => Layer.succeed(GatewayCallbackUrl, { get })
}
