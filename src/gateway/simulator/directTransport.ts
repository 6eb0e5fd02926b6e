import { type Context, Duration, Effect } from "effect"
import type { Transport } from "../rbm/RbmGateway.ts"
import { CUT, type GatewaySimulator, HELD } from "./GatewaySimulator.ts"

/**
 * The adapter's exchanges handed to the in-process simulator as calls: the answers the HTTP path
 * would give, a held send (0002) waiting out the timeout, a cut one (0004) lost after it left.
 */
export const directTransport = (simulator: Context.Tag.Service<GatewaySimulator>, timeoutMs: number): Transport => (method, path, body) => {
  const result = simulator.direct(method, path, body === undefined ? "" : body.toString("utf8"))
  if (result === HELD) return Effect.as(Effect.sleep(Duration.millis(timeoutMs)), { _tag: "Lost", cause: "timeout", detail: `no answer within ${timeoutMs} ms` } as const)
  if (result === CUT) return Effect.succeed({ _tag: "Lost", cause: "connection", detail: "the connection closed after the request was sent" } as const)
  return Effect.succeed({ _tag: "Answered", status: result.status, body: JSON.stringify(result.body) } as const)
}
