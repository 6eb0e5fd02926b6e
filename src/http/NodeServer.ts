import { Context, Effect, Layer } from "effect"
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { Duplex } from "node:stream"
import { answerClientErrors } from "./clientErrors.ts"

export type UpgradeHandler = (request: IncomingMessage, socket: Duplex, head: Buffer) => void

/**
 * The node:http server under the platform's HttpServer, and the WebSocket upgrades claimed by
 * path (GraphQL's, on /api/v1/graphql). A claimed path's upgrade goes to its handler alone: the
 * platform would otherwise run it through the HTTP app too (as a GET, answered 404 on the same
 * socket). Other upgrades reach the platform as before.
 */
export class NodeServer extends Context.Tag("herald/http/NodeServer")<NodeServer, {
  readonly server: Server
  /** Takes the upgrades of `path` until the scope closes. */
  readonly claimUpgrades: (path: string, handler: UpgradeHandler) => Effect.Effect<void, never, import("effect").Scope.Scope>
}>() {}

const pathOf = (url: string | undefined) => (url ?? "").split("?")[0] ?? ""

export const NodeServerLive = Layer.effect(
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
    const claimUpgrades = (path: string, handler: UpgradeHandler) =>
      Effect.acquireRelease(Effect.sync(() => void claimed.set(path, handler)), () => Effect.sync(() => void claimed.delete(path)))
    return { server, claimUpgrades }
  })
)
