import { HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Deferred, Duration, Effect, Queue, Stream } from "effect"
import type { IncomingMessage } from "node:http"
import { Broadcasts } from "../broadcasts/Broadcasts.ts"
import { seesAllBots } from "../domain/access.ts"
import { envelope, errorEnvelope } from "../http/errors.ts"
import { LiveHub } from "../live/LiveHub.ts"
import { ChangeFeed } from "../storage/ChangeFeed.ts"
import type { BroadcastProgressEvent } from "../live/liveSubjects.ts"
import { isLaterProgress, progressStateOf, type ProgressState } from "../live/progressOrder.ts"
import { ConsoleSessions } from "./ConsoleSessions.ts"
import { ConsoleCookies } from "./consoleCookies.ts"

export const LIVE_PATH = "/console/api/live"

/** A comment line this often: proxies and load balancers close a connection that says nothing for a minute. */
const KEEP_ALIVE = Duration.seconds(15)
/** Events waiting for a browser that reads slowly; past this the oldest go (the next one carries the counters anyway). */
const BUFFER = 1_000
/**
 * How often a stream checks its session when nothing told it to: the change feed tells it at once
 * of a change to the account's members, people or sessions; this bounds how long a stream can
 * outlive its rights while the feed is down (when the check reads the database).
 */
const RECHECK_EVERY = Duration.seconds(5)
/** The tables whose change may take a session's rights (SignIn's and ConsoleSessions' caches). */
const RIGHTS_TABLES: ReadonlySet<string> = new Set(["memberships", "users", "accounts", "console_sessions"])

const encoder = new TextEncoder()
const line = (text: string) => encoder.encode(text)

/**
 * The console's live stream (docs/console.md): server-sent events of the account's broadcast
 * progress, from the same live events as GraphQL's broadcastProgress (LiveHub: core NATS, published
 * after the commit that moved the counters). Only broadcasts of bots in the person's scope, and
 * never a snapshot older than one already sent (two nodes publish a broadcast's progress). The
 * stream ends when the browser goes, or the node stops (on shutdown every stream ends before the
 * HTTP server waits for requests in flight), or the session no longer stands as it did when the
 * stream opened: signed out, the person's password changed, their membership removed, or their bot
 * scope changed (the browser's EventSource then reconnects, and gets a 401 or the new scope). The
 * session is checked again, against the same caches the REST path uses, as soon as the change feed
 * reports a change to the account's members, people or sessions on any node, and every
 * RECHECK_EVERY besides.
 */
export const LiveRoute = HttpLayerRouter.use((router) =>
  Effect.gen(function*() {
    const sessions = yield* ConsoleSessions
    const cookies = yield* ConsoleCookies
    const hub = yield* LiveHub
    const broadcasts = yield* Broadcasts
    const feed = yield* ChangeFeed
    const stopping = yield* Deferred.make<void>()
    yield* Effect.addFinalizer(() => Deferred.succeed(stopping, undefined))

    const handler = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const id = cookies.read(request.headers.cookie, "session")
      const resolved = yield* Effect.either(sessions.resolve(id))
      if (resolved._tag === "Left") return errorEnvelope(resolved.left) ?? envelope(401, "unauthorized", "unauthorized")
      const { principal } = resolved.right
      const source = request.source as IncomingMessage

      const events = Stream.unwrapScoped(Effect.gen(function*() {
        const queue = yield* Queue.sliding<BroadcastProgressEvent>(BUFFER)
        yield* hub.listen(principal.accountId, {
          deliver: (kind, event) => {
            if (kind === "broadcast_progress") queue.unsafeOffer(event as BroadcastProgressEvent)
          }
        })
        const visible = new Map<string, boolean>()
        const inScope = (broadcastId: string): Effect.Effect<boolean> =>
          seesAllBots(principal)
            ? Effect.succeed(true)
            : visible.has(broadcastId)
            ? Effect.succeed(visible.get(broadcastId)!)
            : Effect.map(Effect.either(broadcasts.get(principal, broadcastId)), (found) => {
              visible.set(broadcastId, found._tag === "Right")
              return found._tag === "Right"
            })
        const seen = new Map<string, ProgressState>()
        const later = (event: BroadcastProgressEvent) => {
          const state = progressStateOf(event)
          const before = seen.get(event.broadcast_id)
          if (before !== undefined && !isLaterProgress(state, before)) return false
          seen.set(event.broadcast_id, state)
          return true
        }
        return Stream.fromQueue(queue).pipe(
          Stream.filterEffect((event) => inScope(event.broadcast_id)),
          Stream.filter(later),
          Stream.map((event) => line(`event: broadcast_progress\ndata: ${JSON.stringify(event)}\n\n`))
        )
      }))
      const bots = principal.bots.join(",")
      const standsAsOpened = Effect.map(
        Effect.either(sessions.resolve(id)),
        (now) => now._tag === "Right" && now.right.principal.bots.join(",") === bots
      )
      // Completes when the session's rights went: checked when the account's rights change on any
      // node (the feed's nudge), and every RECHECK_EVERY whatever the feed does.
      const rightsGone = Effect.scoped(Effect.gen(function*() {
        const nudges = yield* Queue.sliding<void>(1)
        yield* feed.subscribe((table, accountId) => {
          if (accountId === principal.accountId && RIGHTS_TABLES.has(table)) nudges.unsafeOffer(undefined)
        })
        while (yield* standsAsOpened) yield* Effect.race(Queue.take(nudges), Effect.sleep(RECHECK_EVERY))
      }))
      const keepAlive = Stream.tick(KEEP_ALIVE).pipe(Stream.drop(1), Stream.map(() => line(": keep-alive\n\n")))
      const gone = Effect.async<void>((resume) => {
        const done = () => resume(Effect.void)
        if (source.destroyed) return done()
        source.once("close", done)
        return Effect.sync(() => void source.off("close", done))
      })
      const body = Stream.merge(Stream.make(line("retry: 2000\n\n")), Stream.merge(events, keepAlive, { haltStrategy: "either" })).pipe(
        Stream.interruptWhen(Effect.raceAll([gone, Deferred.await(stopping), rightsGone]))
      )
      return HttpServerResponse.stream(body, {
        contentType: "text/event-stream; charset=utf-8",
        headers: { "cache-control": "no-store", "x-accel-buffering": "no" }
      })
    })

    yield* router.add("GET", LIVE_PATH, handler)
  })
)
