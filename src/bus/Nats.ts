import { Deferred, Duration, Effect, Layer, Option, Ref, Runtime, Schedule, Schema } from "effect"
import {
  connect,
  type JetStreamClient,
  type JetStreamManager,
  type KV,
  type KvOptions,
  type NatsConnection,
  type StreamConfig,
  type StreamInfo
} from "nats"
import { AppConfig } from "../config/AppConfig.ts"
import { BusNames } from "./BusNames.ts"

export class NatsUnavailable extends Schema.TaggedError<NatsUnavailable>()("NatsUnavailable", {
  message: Schema.String
}) {}

/** A stream config the server did not honour (nats-server 2.9 ignores fields it does not know). */
export class StreamMismatch extends Schema.TaggedError<StreamMismatch>()("StreamMismatch", {
  stream: Schema.String,
  message: Schema.String
}) {}

export interface Connected {
  readonly nc: NatsConnection
  readonly jsm: JetStreamManager
  readonly js: JetStreamClient
}

const firstConnectSchedule = Schedule.exponential(Duration.millis(200), 2).pipe(
  Schedule.either(Schedule.spaced(Duration.seconds(5))),
  Schedule.jittered
)

/** How long a caller waits for a connection before answering 503. */
const awaitConnectionTimeout = Duration.seconds(3)

// Reconnect delays once connected: 250 ms doubling to 5 s; nats.js retries forever with it.
const reconnectDelay = () => {
  let attempt = 0
  return {
    next: () => Math.min(5_000, 250 * 2 ** attempt++) + Math.floor(Math.random() * 250),
    reset: () => {
      attempt = 0
    }
  }
}

const toUnavailable = (what: string) => (cause: unknown) =>
  new NatsUnavailable({ message: `NATS ${what} failed: ${cause instanceof Error ? cause.message : String(cause)}` })

/**
 * The node's one NATS connection. It is established in the background (a node starts and serves
 * /health/ready with 503 while NATS is down), then nats.js reconnects forever with backoff. Streams
 * registered through `ensureStream` are re-created after a reconnect, in case the server lost its
 * storage. On shutdown the connection is drained so in-flight publishes and acks are flushed.
 */
export class Nats extends Effect.Service<Nats>()("herald/Nats", {
  scoped: Effect.gen(function*() {
    const config = yield* AppConfig
    const names = yield* BusNames
    const ready = yield* Deferred.make<Connected>()
    const streams = yield* Ref.make(new Map<string, Partial<StreamConfig>>())
    const delay = reconnectDelay()

    const open = Effect.tryPromise({
      try: () =>
        connect({
          servers: config.natsUrl,
          name: `herald-${config.nodeId}`,
          maxReconnectAttempts: -1,
          reconnectDelayHandler: delay.next,
          pingInterval: 10_000,
          maxPingOut: 3,
          // nats.js captures an Error stack per request for async traces; that halves publish
          // throughput (DESIGN.md, ceilings) and the traces point into the client anyway.
          noAsyncTraces: true
        }),
      catch: toUnavailable("connect")
    })

    const ensureOne = (jsm: JetStreamManager, spec: Partial<StreamConfig>) =>
      Effect.tryPromise({
        try: async (): Promise<StreamInfo> => {
          try {
            return await jsm.streams.add(spec)
          } catch (error) {
            // Already there with another config: bring it to ours (subjects, limits).
            if (String(error).includes("already in use")) return jsm.streams.update(spec.name!, spec)
            throw error
          }
        },
        catch: toUnavailable(`stream ${spec.name}`)
      }).pipe(
        Effect.flatMap((info) => checkHonoured(spec, info)),
        Effect.withSpan("Nats.ensureStream", { attributes: { stream: spec.name } })
      )

    const connection = yield* Effect.acquireRelease(
      open.pipe(
        Effect.tapError((e) => Effect.logWarning("NATS not reachable yet; retrying", e.message)),
        Effect.retry(firstConnectSchedule)
      ),
      (nc) =>
        Effect.promise(() => nc.drain().catch(() => nc.close())).pipe(
          Effect.timeout(Duration.seconds(3)),
          Effect.catchAll(() => Effect.promise(() => nc.close())),
          Effect.zipRight(Effect.logDebug("NATS connection drained"))
        )
    ).pipe(
      Effect.flatMap((nc) =>
        Effect.gen(function*() {
          const jsm = yield* Effect.tryPromise({ try: () => nc.jetstreamManager(), catch: toUnavailable("jetstream") })
          const connected: Connected = { nc, jsm, js: jsm.jetstream() }
          yield* Effect.logInfo("NATS connected", { server: nc.getServer(), version: nc.info?.version })
          yield* Deferred.succeed(ready, connected)
          yield* watchStatus(connected)
        })
      ),
      Effect.retry(firstConnectSchedule),
      Effect.forkScoped
    )

    // After a reconnect the server may be a fresh one without our streams: put them back. The
    // status iterator ends when the connection closes; it is read outside a fiber because
    // interrupting a pending read of it blocks until the client times out.
    function watchStatus({ nc, jsm }: Connected) {
      const onReconnect = Effect.sync(delay.reset).pipe(
        Effect.zipRight(Ref.get(streams)),
        Effect.flatMap((specs) => Effect.forEach(specs.values(), (spec) => Effect.ignoreLogged(ensureOne(jsm, spec)))),
        Effect.zipRight(Effect.logInfo("NATS reconnected", { server: nc.getServer() }))
      )
      return Effect.map(Effect.runtime<never>(), (runtime) => {
        const run = Runtime.runFork(runtime)
        void (async () => {
          for await (const status of nc.status()) {
            if (status.type === "reconnect") run(onReconnect)
            else if (status.type === "disconnect") run(Effect.logWarning("NATS disconnected; reconnecting"))
          }
        })()
      })
    }
    void connection

    // Once connected, hot paths (every publish) get the connection without a timeout race.
    let current: Connected | undefined
    const awaitConnection = Deferred.await(ready).pipe(
      Effect.tap((c) => Effect.sync(() => (current = c))),
      Effect.timeoutFail({ duration: awaitConnectionTimeout, onTimeout: () => new NatsUnavailable({ message: "NATS is not connected" }) })
    )
    const connected: Effect.Effect<Connected, NatsUnavailable> = Effect.suspend(() => (current !== undefined ? Effect.succeed(current) : awaitConnection))

    const ensureStream = (spec: Partial<StreamConfig> & { readonly name: string }) =>
      Effect.gen(function*() {
        yield* Ref.update(streams, (m) => new Map(m).set(spec.name, spec))
        const { jsm } = yield* connected
        return yield* ensureOne(jsm, spec)
      })

    const kv = (bucket: string, options?: Partial<KvOptions>): Effect.Effect<KV, NatsUnavailable> =>
      Effect.flatMap(connected, ({ js }) =>
        Effect.tryPromise({ try: () => js.views.kv(names.bucket(bucket), options), catch: toUnavailable(`kv ${bucket}`) })
      )

    /** Round trip to the server; fails when disconnected. Used by /health/ready. */
    const ping = Effect.flatMap(Deferred.poll(ready), (o) =>
      Option.match(o, {
        onNone: () => Effect.fail(new NatsUnavailable({ message: "NATS is not connected" })),
        onSome: (d) =>
          Effect.flatMap(d, ({ nc }) =>
            Effect.tryPromise({ try: () => nc.rtt(), catch: toUnavailable("ping") }).pipe(
              Effect.timeoutFail({ duration: Duration.seconds(2), onTimeout: () => new NatsUnavailable({ message: "NATS ping timed out" }) })
            )
          )
      })
    )

    return { connected, ensureStream, kv, ping, names } as const
  })
}) {}

const checkHonoured = (spec: Partial<StreamConfig>, info: StreamInfo) => {
  const wrong = (["max_age", "duplicate_window", "retention", "storage", "max_msgs_per_subject", "discard"] as const).filter(
    (key) => spec[key] !== undefined && info.config[key] !== spec[key]
  )
  return wrong.length === 0
    ? Effect.succeed(info)
    : Effect.fail(new StreamMismatch({ stream: info.config.name, message: `server did not honour ${wrong.join(", ")}` }))
}

export const NatsLive: Layer.Layer<Nats, never, AppConfig> = Nats.Default.pipe(Layer.provide(BusNames.layer))
