import { Duration, Effect } from "effect"
import type { Exchange } from "../gateway/rbm/exchange.ts"
import { CUT, HELD, type SendAnswer } from "./httpHelpers.ts"

type Method = "GET" | "POST" | "DELETE"

/** An exchange as the HTTP path would end it: a held send (0002) waits out the timeout, a cut one (0004) is lost after it left. */
const asExchange = (result: SendAnswer, timeoutMs: number): Effect.Effect<Exchange> => {
  if (result === HELD) return Effect.as(Effect.sleep(Duration.millis(timeoutMs)), { _tag: "Lost", cause: "timeout", detail: `no answer within ${timeoutMs} ms` } as const)
  if (result === CUT) return Effect.succeed({ _tag: "Lost", cause: "connection", detail: "the connection closed after the request was sent" } as const)
  return Effect.succeed({ _tag: "Answered", status: result.status, body: JSON.stringify(result.body) } as const)
}

/** The RBM adapter's exchanges handed to the in-process simulator as calls. */
export const directTransport = (simulator: { readonly direct: (method: "GET" | "POST", pathAndQuery: string, body: string) => SendAnswer }, timeoutMs: number) =>
(method: "GET" | "POST", path: string, body: Buffer | undefined): Effect.Effect<Exchange> =>
  asExchange(simulator.direct(method, path, body === undefined ? "" : body.toString("utf8")), timeoutMs)

/** The Cloud API adapter's exchanges handed to the in-process simulator as calls. */
export const waDirectTransport = (simulator: { readonly waDirect: (method: Method, pathAndQuery: string, body: string) => SendAnswer }, timeoutMs: number) =>
(method: Method, path: string, body: Buffer | undefined): Effect.Effect<Exchange> =>
  asExchange(simulator.waDirect(method, path, body === undefined ? "" : body.toString("utf8")), timeoutMs)
