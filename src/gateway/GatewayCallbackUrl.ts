import { Context, Layer } from "effect"

/**
 * Where the in-process gateway simulator sends its callbacks: RBM's events and Meta's webhooks. A
 * function, not a value: the composition root knows Herald's own address only after the HTTP
 * server listens, and the simulator starts before that. Answering undefined makes callbacks wait
 * and retry.
 */
export class GatewayCallbackUrl extends Context.Tag("herald/GatewayCallbackUrl")<GatewayCallbackUrl, {
  /** Herald's RBM events URL. */
  readonly get: () => string | undefined
  /** Herald's Meta webhook URL. */
  readonly whatsapp: () => string | undefined
}>() {
  static readonly fixed = (url: string, whatsapp?: string): Layer.Layer<GatewayCallbackUrl> =>
    Layer.succeed(GatewayCallbackUrl, { get: () => url, whatsapp: () => whatsapp })
  static readonly lazy = (get: () => string | undefined, whatsapp: () => string | undefined = () => undefined): Layer.Layer<GatewayCallbackUrl> =>
    Layer.succeed(GatewayCallbackUrl, { get, whatsapp })
}
