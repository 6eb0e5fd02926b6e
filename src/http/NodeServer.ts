import { Context, Effect, Layer } from "effect"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { Duplex } from "node:stream"
import { answerClientErrors } from "./clientErrors.ts"

export type UpgradeHandler = (request: IncomingMessage, socket: Duplex, head: Buffer) => void

/**
 * The node:http server the lean adapter serves on (src/http/adapter), and the WebSocket upgrades
 * claimed by path (GraphQL's, on /api/v1/graphql). A claimed path's upgrade goes to its handler;
 * any other is answered 404 and closed.
 */
export class NodeServer extends Context.Tag("herald/http/NodeServer")<NodeServer, {
  readonly server: Server
  /** Takes the upgrades of `path` until the scope closes. */
  readonly claimUpgrades: (path: string, handler: UpgradeHandler) => Effect.Effect<void, never, import("effect").Scope.Scope>
}>() {}

const pathOf = (url: string | undefined) => (url ?? "").split("?")[0] ?? ""

/**
 * A node:http server of its own: a new layer on every call, since layers are shared by reference
 * in one graph and a node has two listeners (the API's and METRICS_PORT's).
 */
export const nodeServerLayer = () => Layer.effect(
  NodeServer,
  Effect.sync(() => {
    const server = answerClientErrors(createServer({ keepAliveTimeout: 5_000 }))
    const claimed = new Map<string, UpgradeHandler>()
    const emit = server.emit.bind(server) as (event: string | symbol, ...args: Array<any>) => boolean
    server.emit = ((event: string | symbol, ...args: Array<any>) => {
      if (event === "upgrade") {
        const handler = claimed.get(pathOf((args[0] as IncomingMessage).url))
        if (handler !== undefined) {
          handler(args[0], args[1], args[2])
          return true
        }
      }
      return emit(event, ...args)
    }) as typeof server.emit
    // Node hands a request asking for an upgrade to 'upgrade' listeners only when there is one;
    // with none it would reach the routes as a plain GET. Unclaimed paths are refused here.
    server.on("upgrade", (_request: IncomingMessage, socket: Duplex) => {
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
    })
    const claimUpgrades = (path: string, handler: UpgradeHandler) =>
      Effect.acquireRelease(Effect.sync(() => void claimed.set(path, handler)), () => Effect.sync(() => void claimed.delete(path)))
    return { server, claimUpgrades }
  })
)
