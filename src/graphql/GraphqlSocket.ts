import { Effect, Either, Exit, Layer, Metric, Runtime, Scope } from "effect"
import { type FormattedExecutionResult, GraphQLError } from "graphql"
import { useServer } from "graphql-ws/use/ws"
import type { IncomingMessage } from "node:http"
import { type WebSocket, WebSocketServer } from "ws"
import { AppConfig } from "../config/AppConfig.ts"
import { firstUnstorable } from "../domain/storable.ts"
import { NodeServer } from "../http/NodeServer.ts"
import { LiveHub } from "../live/LiveHub.ts"
import type { SecretKeyAccount } from "../security/SecretKeys.ts"
import { graphqlError } from "./errors.ts"
import { GRAPHQL_PATH, MAX_GRAPHQL_BODY } from "./GraphqlRoute.ts"
import { describeUnstorable, GraphqlOperations, requestOf, withCodes } from "./operations.ts"
import { LiveFeed } from "./subscriptions/LiveFeed.ts"
import type { OpenFeed } from "./subscriptions/resolvers.ts"

/** A socket whose subscription fell `graphqlSubscriptionBuffer` events behind is closed with this. */
export const SLOW_CONSUMER_CLOSE = 4429
/** Operations one socket may run at once (each subscription holds a feed). */
export const MAX_OPERATIONS_PER_SOCKET = 100
/** No connection_init within this closes the socket with 4408 (graphql-ws's ConnectionInitialisationTimeout). */
const INIT_TIMEOUT_MS = 10_000
/** On shutdown, how long completed subscriptions get to reach their clients before the sockets close. */
const SHUTDOWN_GRACE_MS = 500

const dropped = Metric.counter("herald_graphql_slow_consumers_dropped_total", { description: "GraphQL sockets closed because a subscription fell too far behind" })

const authorizationOf = (params: Readonly<Record<string, unknown>> | undefined) => {
  const value = params?.Authorization ?? params?.authorization
  return typeof value === "string" ? value : undefined
}

/**
 * GraphQL over WebSocket (graphql-ws's protocol graphql-transport-ws) on the HTTP port and path
 * /api/v1/graphql: connection_init carries `{Authorization: "Bearer <secret key>"}` (a bad key
 * closes with 4403, none within 10 s with 4408); each operation takes a token of the plan bucket
 * and is checked like a POST (GraphqlOperations). Subscriptions read the account's live events
 * (LiveHub). On shutdown every subscription is completed, then every socket closed with 1001.
 */
export const GraphqlSocketLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const server = yield* NodeServer
    const operations = yield* GraphqlOperations
    const hub = yield* LiveHub
    const config = yield* AppConfig
    const runtime = yield* Effect.runtime<never>()
    const runPromise = Runtime.runPromise(runtime)
    const runFork = Runtime.runFork(runtime)
    /** Each authenticated socket: its account and its subscriptions' feeds (ended on shutdown). */
    const connections = new Map<WebSocket, { readonly account: SecretKeyAccount; readonly feeds: Set<LiveFeed<unknown>> }>()

    const dropSlow = (socket: WebSocket) => {
      dropped.unsafeUpdate(1, [])
      socket.close(SLOW_CONSUMER_CLOSE, "subscriber too slow: events were arriving faster than it read them")
      // A client that reads nothing would never take the close frame: cut it off.
      setTimeout(() => socket.terminate(), 2_000).unref()
    }

    const openFeedFor = (socket: WebSocket, account: SecretKeyAccount, feeds: Set<LiveFeed<unknown>>): OpenFeed => async ({ accept, coalesce }) => {
      if (!connections.has(socket)) throw graphqlError("INTERNAL", "the connection is closing")
      const scope = Effect.runSync(Scope.make())
      const feed = new LiveFeed<any>({
        limit: config.graphqlSubscriptionBuffer,
        coalesce,
        onOverflow: () => dropSlow(socket),
        onClose: () => {
          feeds.delete(feed)
          runFork(Scope.close(scope, Exit.void))
        }
      })
      feeds.add(feed)
      try {
        await runPromise(Scope.extend(hub.listen(account.accountId, { deliver: (kind, event) => {
          const value = accept(kind, event)
          if (value !== undefined) feed.push(value)
        } }), scope))
      } catch {
        await feed.return()
        throw graphqlError("INTERNAL", "live events are unavailable right now; subscribe again shortly")
      }
      return feed
    }

    const sockets = new WebSocketServer({ noServer: true, maxPayload: MAX_GRAPHQL_BODY })
    const graphqlWs = useServer<Record<string, unknown> | undefined, { socket: WebSocket; request: IncomingMessage }>({
      schema: operations.schema,
      connectionInitWaitTimeout: INIT_TIMEOUT_MS,
      onConnect: async (ctx) => {
        const account = await runPromise(Effect.either(operations.authenticate(authorizationOf(ctx.connectionParams))))
        if (Either.isLeft(account)) return false
        const socket = ctx.extra.socket
        connections.set(socket, { account: account.right, feeds: new Set() })
        socket.once("close", () => connections.delete(socket))
        return true
      },
      onSubscribe: async (ctx, _id, payload) => {
        const socket = ctx.extra.socket
        const { account, feeds } = connections.get(socket)!
        if (Object.keys(ctx.subscriptions).length > MAX_OPERATIONS_PER_SOCKET) {
          return [graphqlError("VALIDATION_ERROR", `at most ${MAX_OPERATIONS_PER_SOCKET} operations at once on one connection`, { reason: "too_many_operations" })]
        }
        // graphql-ws parsed the message; what Postgres cannot store is refused as over HTTP.
        const unstorable = firstUnstorable(payload)
        if (unstorable !== undefined) return [graphqlError("VALIDATION_ERROR", describeUnstorable(unstorable))]
        const request = requestOf(payload)
        if (typeof request === "string") return [graphqlError("VALIDATION_ERROR", request)]
        const admitted = await runPromise(Effect.either(operations.admit(account)))
        if (Either.isLeft(admitted)) return [admitted.left.error]
        const document = operations.prepare(request, "socket")
        if (Either.isLeft(document)) return document.left
        return {
          schema: operations.schema,
          document: document.right,
          variableValues: request.variables ?? null,
          operationName: request.operationName ?? null,
          contextValue: operations.contextFor(account, openFeedFor(socket, account, feeds))
        }
      },
      onNext: (_ctx, _id, _payload, _args, result) => withCodes(result) as FormattedExecutionResult,
      onError: (_ctx, _id, _payload, errors) => errors.map((e) => (e.extensions?.code === undefined ? new GraphQLError(e.message, { extensions: { code: "VALIDATION_ERROR" } }) : e).toJSON())
    }, sockets)

    yield* server.claimUpgrades(GRAPHQL_PATH, (request, socket, head) =>
      sockets.handleUpgrade(request, socket, head, (ws) => sockets.emit("connection", ws, request)))

    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        // Each subscription ends (graphql-ws sends its `complete`), then the sockets close.
        for (const { feeds } of connections.values()) for (const feed of [...feeds]) feed.end()
        if (connections.size > 0) await new Promise((resolve) => setTimeout(resolve, SHUTDOWN_GRACE_MS))
        for (const socket of sockets.clients) socket.close(1001, "server shutting down")
        await graphqlWs.dispose()
      }))
  })
)
