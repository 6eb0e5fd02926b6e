import { Duration, Effect, Either, Exit, FiberSet, Layer, Metric, Runtime, Schedule, Scope } from "effect"
import { type FormattedExecutionResult, GraphQLError } from "graphql"
import { useServer } from "graphql-ws/use/ws"
import type { IncomingMessage } from "node:http"
import { type WebSocket, WebSocketServer } from "ws"
import { AppConfig } from "../config/AppConfig.ts"
import { planRatePerMinute } from "../domain/plans.ts"
import { firstUnstorable } from "../domain/storable.ts"
import { readSecretKey } from "../http/bearer.ts"
import { NodeServer } from "../http/NodeServer.ts"
import { LiveHub } from "../live/LiveHub.ts"
import type { SecretKeyAccount } from "../security/SecretKeys.ts"
import { ChangeFeed } from "../storage/ChangeFeed.ts"
import { graphqlError } from "./errors.ts"
import { GRAPHQL_PATH, MAX_GRAPHQL_BODY } from "./GraphqlRoute.ts"
import { describeUnstorable, GraphqlOperations, requestOf, withCodes } from "./operations.ts"
import { LiveFeed } from "./subscriptions/LiveFeed.ts"
import type { OpenFeed } from "./subscriptions/LiveFeed.ts"

/** A socket whose subscription fell `graphqlSubscriptionBuffer` events behind is closed with this. */
export const SLOW_CONSUMER_CLOSE = 4429
/** A socket whose secret key was regenerated (or whose account is gone) is closed with this, as a wrong key at connection_init. */
export const REVOKED_CLOSE = 4403
/** A socket that ran no operation for HERALD_GRAPHQL_IDLE_MS is closed normally: a graphql-ws client reconnects on its next operation. */
export const IDLE_CLOSE = 1000
/** Operations one socket may run at once (each subscription holds a feed). */
export const MAX_OPERATIONS_PER_SOCKET = 100
/** No connection_init within this closes the socket with 4408 (graphql-ws's ConnectionInitialisationTimeout). */
const INIT_TIMEOUT_MS = 10_000
/** On shutdown, how long completed subscriptions get to reach their clients before the sockets close. */
const SHUTDOWN_GRACE_MS = 500

/**
 * While the change feed is down, or after it reconnected (notifications may have been missed), every
 * socket's key and plan are checked again this often; while it listens, a change is heard at once.
 */
const RECHECK_WITHOUT_FEED = Schedule.spaced(Duration.seconds(5))
/** A client that does not take a close frame is cut off this long after it. */
const CLOSE_GRACE_MS = 2_000

const dropped = Metric.counter("herald_graphql_slow_consumers_dropped_total", { description: "GraphQL sockets closed because a subscription fell too far behind" })

/** A WebSocket close reason is at most 123 bytes of UTF-8: longer text is cut, ending with "…". */
export const closeReason = (text: string): string => {
  if (Buffer.byteLength(text) <= 123) return text
  let cut = text
  while (Buffer.byteLength(`${cut}…`) > 123) cut = cut.slice(0, -1)
  return `${cut}…`
}

/**
 * Why connection_init was refused, in the close frame's few bytes: the payload's Authorization
 * holds no secret key (missing, another kind of credential), or the key is unknown.
 */
export const refusalReason = (authorization: string | undefined): string =>
  closeReason(
    "problem" in readSecretKey(authorization, "Bearer")
      ? `Forbidden: connection_init's payload needs {"Authorization": "Bearer <secret key>"} (sk_live_…)`
      : "Forbidden: invalid or revoked secret key"
  )

const authorizationOf = (params: Readonly<Record<string, unknown>> | undefined) => {
  const value = params?.Authorization ?? params?.authorization
  return typeof value === "string" ? value : undefined
}

/** A socket's key checked again: the account it reaches now, or why it reaches none. */
type Standing = SecretKeyAccount | "revoked" | "unknown"

/** An authenticated socket: what its connection_init carried (checked again), its account, its running feeds. */
interface Connection {
  readonly authorization: string | undefined
  readonly accountId: string
  readonly feeds: Set<LiveFeed<unknown>>
  /** graphql-ws's operations of the socket, by id (queries and mutations while they run, subscriptions until they end). */
  readonly operations: () => number
  /** When an operation last started or was seen running (for the idle limit). */
  lastActive: number
  idleTimer: ReturnType<typeof setTimeout> | undefined
}

/**
 * GraphQL over WebSocket (graphql-ws's protocol graphql-transport-ws) on the HTTP port and path
 * /api/v1/graphql: connection_init carries `{Authorization: "Bearer <secret key>"}` (a bad key
 * closes with 4403, none within 10 s with 4408); each operation checks the key again and takes a
 * token of the plan bucket, as a POST does (GraphqlOperations). A change of the account (a key
 * regenerated, a plan changed), heard through the change feed from whichever node or process made
 * it, checks the account's sockets at once: a key that no longer authenticates closes its sockets
 * with 4403, a plan without API access ends their subscriptions with FEATURE_LOCKED. Sockets are
 * pinged (HERALD_GRAPHQL_PING_MS) and closed after HERALD_GRAPHQL_IDLE_MS without an operation.
 * Subscriptions read the account's live events (LiveHub). On shutdown every subscription is
 * completed, then every socket closed with 1001.
 */
export const GraphqlSocketLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const server = yield* NodeServer
    const operations = yield* GraphqlOperations
    const hub = yield* LiveHub
    const config = yield* AppConfig
    const changes = yield* ChangeFeed
    const runtime = yield* Effect.runtime<never>()
    const runPromise = Runtime.runPromise(runtime)
    const runFork = Runtime.runFork(runtime)
    const connections = new Map<WebSocket, Connection>()

    /** Closes a socket with `code`; a client that reads nothing would never take the close frame: it is cut off. */
    const closeSocket = (socket: WebSocket, code: number, reason: string) => {
      socket.close(code, reason)
      setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref()
    }

    const dropSlow = (socket: WebSocket) => {
      dropped.unsafeUpdate(1, [])
      closeSocket(socket, SLOW_CONSUMER_CLOSE, "subscriber too slow: events were arriving faster than it read them")
    }

    const revoke = (socket: WebSocket) => {
      forget(socket)
      closeSocket(socket, REVOKED_CLOSE, "the secret key was regenerated or revoked: connect again with the current key")
    }

    const forget = (socket: WebSocket) => {
      const connection = connections.get(socket)
      if (connection === undefined) return
      clearTimeout(connection.idleTimer)
      connections.delete(socket)
    }

    /**
     * The socket's key checked again (through SecretKeys' cache, which the change feed empties when
     * the account changes): its account now, "revoked" when the key no longer authenticates, or
     * "unknown" when it could not be checked (the database unreachable): nothing is decided then.
     */
    const recheck = (connection: Connection): Effect.Effect<Standing> =>
      operations.authenticate(connection.authorization).pipe(
        Effect.map((account): Standing => (account.accountId === connection.accountId ? account : "revoked")),
        Effect.orElseSucceed((): Standing => "revoked"),
        Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("a GraphQL socket's key could not be checked", cause), "unknown" as const))
      )

    /** What a socket may still do: closed when its key is gone; its subscriptions ended when its plan has no API. */
    const enforce = (socket: WebSocket, connection: Connection, account: Standing | undefined) => {
      if (account === "revoked") return revoke(socket)
      if (account === "unknown" || account === undefined) return
      if (planRatePerMinute(account.plan, account.planRatePerMinute) === null) {
        const locked = graphqlError("FEATURE_LOCKED", `the ${account.plan} plan does not include API access; upgrade to Growth or above`)
        for (const feed of [...connection.feeds]) feed.fail(locked)
      }
    }

    /** Every socket of `accountId` (all sockets when undefined) checked again; one check per distinct key. */
    const recheckSockets = (accountId: string | undefined) =>
      Effect.gen(function*() {
        const checked = new Map<string, Standing>()
        for (const [socket, connection] of [...connections]) {
          if (accountId !== undefined && connection.accountId !== accountId) continue
          const key = `${connection.accountId}\n${connection.authorization ?? ""}`
          if (!checked.has(key)) checked.set(key, yield* recheck(connection))
          if (connections.get(socket) === connection) enforce(socket, connection, checked.get(key))
        }
      })

    // A change of an account row (its key's hash, its plan) from any node or process: its sockets
    // are checked as soon as this node hears of it, after the feed has told every listener (so
    // SecretKeys' cache has forgotten the account, whichever listener came first).
    const runOwned = yield* FiberSet.makeRuntime<never>()
    yield* changes.subscribe((table, accountId) => {
      if (table !== "accounts") return
      for (const connection of connections.values()) {
        if (connection.accountId === accountId) {
          runOwned(Effect.zipRight(Effect.yieldNow(), recheckSockets(accountId)))
          return
        }
      }
    })
    // Notifications missed while the feed was down: every socket is checked until it listens again.
    let heardSince = -1
    yield* Effect.suspend(() => {
      const epoch = changes.epoch()
      if (changes.isLive() && epoch === heardSince) return Effect.void
      if (changes.isLive()) heardSince = epoch
      return recheckSockets(undefined)
    }).pipe(Effect.repeat(RECHECK_WITHOUT_FEED), Effect.forkScoped)

    /** Closes the socket once it has run no operation for graphqlIdleMs (a running subscription keeps it). */
    const watchIdle = (socket: WebSocket, connection: Connection) => {
      connection.idleTimer = setTimeout(() => {
        if (connections.get(socket) !== connection) return
        const now = Date.now()
        if (connection.operations() > 0) connection.lastActive = now
        const left = connection.lastActive + config.graphqlIdleMs - now
        if (left > 0) return watchIdle(socket, connection)
        forget(socket)
        socket.close(IDLE_CLOSE, `idle: no operation for ${config.graphqlIdleMs} ms`)
      }, Math.max(connection.lastActive + config.graphqlIdleMs - Date.now(), 10))
      connection.idleTimer.unref()
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
        const authorization = authorizationOf(ctx.connectionParams)
        const account = await runPromise(Effect.either(operations.authenticate(authorization)))
        if (Either.isLeft(account)) {
          // graphql-ws would close with 4403 "Forbidden" alone; the reason says why (its own close is then a no-op).
          ctx.extra.socket.close(REVOKED_CLOSE, refusalReason(authorization))
          return false
        }
        const socket = ctx.extra.socket
        const connection: Connection = {
          authorization,
          accountId: account.right.accountId,
          feeds: new Set(),
          operations: () => Object.keys(ctx.subscriptions).length,
          lastActive: Date.now(),
          idleTimer: undefined
        }
        connections.set(socket, connection)
        socket.once("close", () => forget(socket))
        watchIdle(socket, connection)
        return true
      },
      onSubscribe: async (ctx, _id, payload) => {
        const socket = ctx.extra.socket
        const connection = connections.get(socket)
        if (connection === undefined) return [graphqlError("UNAUTHENTICATED", "the connection is closing")]
        connection.lastActive = Date.now()
        if (Object.keys(ctx.subscriptions).length > MAX_OPERATIONS_PER_SOCKET) {
          return [graphqlError("VALIDATION_ERROR", `at most ${MAX_OPERATIONS_PER_SOCKET} operations at once on one connection`, { reason: "too_many_operations" })]
        }
        // graphql-ws parsed the message; what Postgres cannot store is refused as over HTTP.
        const unstorable = firstUnstorable(payload)
        if (unstorable !== undefined) return [graphqlError("VALIDATION_ERROR", describeUnstorable(unstorable))]
        const request = requestOf(payload)
        if (typeof request === "string") return [graphqlError("VALIDATION_ERROR", request)]
        // The key and the plan as they are now, as for a POST: a socket is not authorized once for good.
        const account = await runPromise(recheck(connection))
        if (account === "unknown") return [graphqlError("INTERNAL", "the secret key could not be checked right now; try again shortly")]
        if (account === "revoked") {
          revoke(socket)
          return [graphqlError("UNAUTHENTICATED", "the secret key was regenerated or revoked")]
        }
        const admitted = await runPromise(Effect.either(operations.admit(account)))
        if (Either.isLeft(admitted)) return [admitted.left.error]
        const document = operations.prepare(request, "socket")
        if (Either.isLeft(document)) return document.left
        return {
          schema: operations.schema,
          document: document.right,
          variableValues: request.variables ?? null,
          operationName: request.operationName ?? null,
          contextValue: operations.contextFor(account, openFeedFor(socket, account, connection.feeds))
        }
      },
      onNext: (_ctx, _id, _payload, _args, result) => withCodes(result) as FormattedExecutionResult,
      onError: (_ctx, _id, _payload, errors) => errors.map((e) => (e.extensions?.code === undefined ? new GraphQLError(e.message, { extensions: { code: "VALIDATION_ERROR" } }) : e).toJSON())
    }, sockets, config.graphqlPingMs)

    yield* server.claimUpgrades(GRAPHQL_PATH, (request, socket, head) =>
      sockets.handleUpgrade(request, socket, head, (ws) => sockets.emit("connection", ws, request)))

    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        // Each subscription ends (graphql-ws sends its `complete`), then the sockets close.
        for (const { feeds, idleTimer } of connections.values()) {
          clearTimeout(idleTimer)
          for (const feed of [...feeds]) feed.end()
        }
        if (connections.size > 0) await new Promise((resolve) => setTimeout(resolve, SHUTDOWN_GRACE_MS))
        for (const socket of sockets.clients) socket.close(1001, "server shutting down")
        await graphqlWs.dispose()
      }))
  })
)
