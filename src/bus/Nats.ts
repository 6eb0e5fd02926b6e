import { Deferred, Duration, Effect, Layer, Metric, MetricKey, Option, Redacted, Runtime, Schedule, Schema } from "effect"
import {
  type ConnectionOptions,
  connect,
  credsAuthenticator,
  type JetStreamClient,
  type JetStreamManager,
  type KV,
  type KvOptions,
  type MsgHdrs,
  type NatsConnection,
  type PubAck,
  type StreamConfig,
  type StreamInfo
} from "nats"
import { readFileSync } from "node:fs"
import { AppConfig, type AppSettings } from "../config/AppConfig.ts"
import { labelled } from "../observability/labelled.ts"
import { BusNames } from "./BusNames.ts"

export class NatsUnavailable extends Schema.TaggedError<NatsUnavailable>()("NatsUnavailable", {
  message: Schema.String,
  /** A publish whose last try went unanswered: JetStream may have stored it (its answer lost). */
  mayHaveStored: Schema.optional(Schema.Boolean)
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

export interface PublishOptions {
  /** Nats-Msg-Id: the same on every try, so a publish stored before its answer was lost is dropped as a duplicate. */
  readonly msgID: string
  readonly headers?: MsgHdrs
  /** How long the publish may be retried in all; the node's HERALD_NATS_PUBLISH_BUDGET_MS unless given. */
  readonly budget?: Duration.DurationInput
}

const firstConnectSchedule = Schedule.exponential(Duration.millis(200), 2).pipe(
  Schedule.either(Schedule.spaced(Duration.seconds(5))),
  Schedule.jittered
)

/** How long a caller waits for a connection before answering 503. */
const awaitConnectionTimeout = Duration.seconds(3)

/**
 * One try of a publish waits this long for its answer at most. A stream whose leader is being
 * elected answers nothing (or "no responders"); a new leader is usually there within a few
 * seconds, so several short tries fit in the budget where one long one would not.
 */
const PUBLISH_TRY_MS = 2_000

/** How often the streams' replicas are looked at, how long one may stay behind, and how often a stream is asked for a new leader at most. */
const REPLICA_CHECK_EVERY = Duration.seconds(15)
const REPLICA_BEHIND_FOR_MS = 60_000
const REPLICA_STEPDOWN_EVERY_MS = 120_000

/** Pause between publish tries: 100 ms doubling, at most 1 s. */
const publishBackoff = (attempt: number) => Math.min(1_000, 100 * 2 ** attempt)

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

const describe = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

const toUnavailable = (what: string) => (cause: unknown) => new NatsUnavailable({ message: `NATS ${what} failed: ${describe(cause)}` })

/**
 * Publish failures that no retry can fix: the message itself is wrong, the connection was closed
 * for good (the node is stopping), or the credentials are refused. Everything else (a timeout, no
 * responders, a disconnect, "JetStream system temporarily unavailable") is what a leader election
 * or a reconnect looks like from here, and is tried again.
 */
const PERMANENT_CODES = new Set([
  "BAD_SUBJECT",
  "BAD_PAYLOAD",
  "BAD_HEADER",
  "MAX_PAYLOAD_EXCEEDED",
  "CONNECTION_CLOSED",
  "CONNECTION_DRAINING",
  "PERMISSIONS_VIOLATION",
  "AUTHORIZATION_VIOLATION",
  "BAD_AUTHENTICATION"
])
export const isPermanentPublishError = (cause: unknown) => PERMANENT_CODES.has(String((cause as { code?: unknown })?.code))

/** An error of JetStream's placement: the cluster has fewer servers than the replicas asked for. */
const isPlacementError = (cause: unknown) =>
  /no suitable peers|insufficient resources|replicas > 1 not supported|replicas.*not supported/i.test(describe(cause))

const publishRetries = MetricKey.counter("herald_nats_publish_retries_total", {
  description: "Publishes tried again after a failure (a stream leader moving, a reconnect)",
  incremental: true
})
const retriesMetric = labelled(publishRetries, {})
const streamsRecreated = MetricKey.counter("herald_nats_streams_recreated_total", {
  description: "Streams found missing on NATS after a reconnect and created again (their unapplied commands were lost)",
  incremental: true
})

/** nats.js options from the settings: every server, credentials, TLS. */
export const connectionOptions = (config: AppSettings): ConnectionOptions => {
  const auth = config.natsAuth
  const options: ConnectionOptions = { servers: [...config.natsServers] }
  if (auth._tag === "userPassword") Object.assign(options, { user: auth.user, pass: Redacted.value(auth.password) })
  else if (auth._tag === "token") options.token = Redacted.value(auth.token)
  else if (auth._tag === "credsFile") options.authenticator = credsAuthenticator(readFileSync(auth.path))
  if (Option.isSome(config.natsTls)) {
    const tls = config.natsTls.value
    options.tls = {
      ...(Option.isSome(tls.caFile) ? { caFile: tls.caFile.value } : {}),
      ...(Option.isSome(tls.certFile) ? { certFile: tls.certFile.value } : {}),
      ...(Option.isSome(tls.keyFile) ? { keyFile: tls.keyFile.value } : {})
    }
  }
  return options
}

/**
 * The node's one NATS connection. It is established in the background (a node starts and serves
 * /health/ready with 503 while NATS is down), then nats.js reconnects forever with backoff, to any
 * server of NATS_URL or one the cluster told it of. Every stream and KV bucket Herald creates gets
 * HERALD_NATS_REPLICAS replicas, and one that exists with another count is brought to it; a count
 * the cluster cannot place keeps the node from being ready, naming the setting. On shutdown the
 * connection is drained so in-flight publishes and acks are flushed.
 */
export class Nats extends Effect.Service<Nats>()("herald/Nats", {
  scoped: Effect.gen(function*() {
    const config = yield* AppConfig
    const names = yield* BusNames
    const ready = yield* Deferred.make<Connected>()
    const streams = new Map<string, Partial<StreamConfig>>()
    /** Streams and buckets NATS could not place with the replicas asked for: name → why. */
    const placement = new Map<string, string>()
    /** The streams of the KV buckets this node uses. */
    const buckets = new Set<string>()
    const replicas = config.natsReplicas
    const delay = reconnectDelay()

    const open = Effect.tryPromise({
      try: () =>
        connect({
          ...connectionOptions(config),
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

    const placed = (name: string) => Effect.sync(() => placement.delete(name))
    const notPlaced = (name: string, what: string) => (cause: unknown) =>
      isPlacementError(cause)
        ? Effect.sync(() =>
          placement.set(
            name,
            `HERALD_NATS_REPLICAS=${replicas}: NATS cannot hold ${replicas} replicas of ${what} ${name} (it answered "${describe(cause)}"); ` +
              "run as many JetStream servers in the cluster, or lower the setting"
          )
        )
        : Effect.void

    const ensureOne = (jsm: JetStreamManager, spec: Partial<StreamConfig> & { readonly name: string }) =>
      Effect.tryPromise({
        try: async (): Promise<StreamInfo> => {
          try {
            return await jsm.streams.add(spec)
          } catch (error) {
            // Already there with another config (subjects, limits, replicas): bring it to ours.
            if (String(error).includes("already in use")) return jsm.streams.update(spec.name, { ...(await jsm.streams.info(spec.name)).config, ...spec })
            throw error
          }
        },
        catch: (cause) => cause
      }).pipe(
        Effect.tapBoth({ onFailure: notPlaced(spec.name, "stream"), onSuccess: () => placed(spec.name) }),
        Effect.mapError(toUnavailable(`stream ${spec.name}`)),
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
          yield* Effect.logInfo("NATS connected", { server: nc.getServer(), version: nc.info?.version, cluster: nc.info?.cluster })
          yield* Deferred.succeed(ready, connected)
          yield* watchStatus(connected)
        })
      ),
      Effect.retry(firstConnectSchedule),
      Effect.forkScoped
    )

    /**
     * After a reconnect, checks that the streams this node uses are still there. With replicas
     * (HERALD_NATS_REPLICAS=3) a stream outlives any one server; one found missing means every
     * server holding it lost its storage, and with it the commands not yet applied: that is said
     * loudly (an error log and herald_nats_streams_recreated_total) before the stream is created
     * again so the node can go on. The status iterator ends when the connection closes; it is read
     * outside a fiber because interrupting a pending read of it blocks until the client times out.
     */
    function watchStatus({ jsm, nc }: Connected) {
      const recheck = (spec: Partial<StreamConfig> & { readonly name: string }) =>
        Effect.tryPromise(() => jsm.streams.info(spec.name)).pipe(
          Effect.asVoid,
          Effect.catchAll((cause) =>
            String(cause).includes("stream not found")
              ? Effect.logError("a stream was missing on NATS after a reconnect: the commands it held that were not yet applied are lost; creating it again", {
                stream: spec.name,
                replicas,
                hint: replicas === 1 ? "with HERALD_NATS_REPLICAS=1 a stream lives on one server; run a 3-server cluster with HERALD_NATS_REPLICAS=3" : undefined
              }).pipe(
                Effect.zipRight(Metric.increment(labelled(streamsRecreated, { stream: spec.name }))),
                Effect.zipRight(ensureOne(jsm, spec))
              )
              : Effect.void
          ),
          Effect.ignoreLogged
        )
      const onReconnect = Effect.sync(delay.reset).pipe(
        Effect.zipRight(Effect.logInfo("NATS reconnected", { server: nc.getServer() })),
        Effect.zipRight(Effect.forEach([...streams.values()], (spec) => recheck(spec as Partial<StreamConfig> & { name: string }), { discard: true }))
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
        const replicated = { ...spec, num_replicas: replicas }
        streams.set(spec.name, replicated)
        const { jsm } = yield* connected
        return yield* ensureOne(jsm, replicated)
      })

    /**
     * A KV bucket with the node's replica count. nats.js binds to a bucket that exists whatever its
     * config; one with another replica count is brought to ours here.
     */
    const kv = (bucket: string, options?: Partial<KvOptions>): Effect.Effect<KV, NatsUnavailable> =>
      Effect.flatMap(connected, ({ js, jsm }) => {
        const name = names.bucket(bucket)
        const stream = `KV_${name}`
        buckets.add(stream)
        return Effect.tryPromise({
          try: async () => {
            const bound = await js.views.kv(name, { ...options, replicas })
            const info = await jsm.streams.info(stream)
            if (info.config.num_replicas !== replicas) await jsm.streams.update(stream, { ...info.config, num_replicas: replicas })
            return bound
          },
          catch: (cause) => cause
        }).pipe(
          Effect.tapBoth({ onFailure: notPlaced(stream, "KV bucket"), onSuccess: () => placed(stream) }),
          Effect.mapError(toUnavailable(`kv ${bucket}`))
        )
      })

    /**
     * Publishes to a stream, retried with the same message id until it is stored or the budget is
     * spent: through a leader election the caller sees added latency, or NatsUnavailable (a 503
     * with Retry-After at the HTTP edge), never a lost command behind a success.
     */
    const publish = (subject: string, data: Uint8Array, options: PublishOptions): Effect.Effect<PubAck, NatsUnavailable> =>
      Effect.flatMap(connected, ({ js }) =>
        Effect.async<{ readonly ack: PubAck; readonly retried: number }, NatsUnavailable>((resume) => {
          const deadline = Date.now() + (options.budget === undefined ? config.natsPublishBudgetMs : Duration.toMillis(options.budget))
          let stopped = false
          let timer: ReturnType<typeof setTimeout> | undefined
          const attempt = (n: number) => {
            const left = deadline - Date.now()
            js.publish(subject, data, { msgID: options.msgID, headers: options.headers, timeout: Math.max(1, Math.min(PUBLISH_TRY_MS, left)) }).then(
              (ack) => {
                if (!stopped) resume(Effect.succeed({ ack, retried: n }))
              },
              (cause) => {
                if (stopped) return
                const wait = publishBackoff(n)
                if (isPermanentPublishError(cause) || Date.now() + wait >= deadline) {
                  return resume(Effect.fail(
                    new NatsUnavailable({
                      message: `publish to ${subject} failed${n > 0 ? ` after ${n + 1} tries` : ""}: ${describe(cause)}`,
                      mayHaveStored: String((cause as { code?: unknown })?.code) === "TIMEOUT"
                    })
                  ))
                }
                timer = setTimeout(() => attempt(n + 1), wait)
              }
            )
          }
          attempt(0)
          return Effect.sync(() => {
            stopped = true
            if (timer !== undefined) clearTimeout(timer)
          })
        })
      ).pipe(Effect.flatMap(({ ack, retried }) => retried === 0 ? Effect.succeed(ack) : Effect.as(Metric.incrementBy(retriesMetric, retried), ack)))

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

    /**
     * A replica that stays behind: nats-server before 2.10 can leave a follower of a stream whose
     * first messages expire or are replaced (a KV bucket with a TTL, as the leases' is) asking
     * its leader for entries it no longer has, never current again until the leader changes (the
     * fault tests saw the leases bucket's follower behind for minutes after its server restarted,
     * caught up the moment its leader moved). Such a follower cannot vote the group's writes
     * through when another server goes, so a stream of this node whose replica has been behind
     * for a minute is asked to elect a new leader (at most every two minutes per stream).
     */
    const watchReplicas = Effect.gen(function*() {
      const behindSince = new Map<string, number>()
      const steppedDownAt = new Map<string, number>()
      for (;;) {
        yield* Effect.sleep(REPLICA_CHECK_EVERY)
        const c = current
        if (c === undefined) continue
        for (const name of [...streams.keys(), ...buckets]) {
          const info = yield* Effect.tryPromise(() => c.jsm.streams.info(name)).pipe(Effect.option)
          if (info._tag === "None") continue
          const behind = (info.value.cluster?.replicas ?? []).filter((peer) => !peer.current && !peer.offline)
          if (behind.length === 0) {
            behindSince.delete(name)
            continue
          }
          const since = behindSince.get(name) ?? Date.now()
          behindSince.set(name, since)
          if (Date.now() - since < REPLICA_BEHIND_FOR_MS || Date.now() - (steppedDownAt.get(name) ?? 0) < REPLICA_STEPDOWN_EVERY_MS) continue
          steppedDownAt.set(name, Date.now())
          behindSince.delete(name)
          yield* Effect.logWarning("a replica has stayed behind its stream's leader; asking the stream to elect a new leader", {
            stream: name,
            leader: info.value.cluster?.leader,
            behind: behind.map((peer) => peer.name)
          })
          yield* Effect.tryPromise(() => c.nc.request(`$JS.API.STREAM.LEADER.STEPDOWN.${name}`, undefined, { timeout: 5_000 })).pipe(Effect.ignore)
        }
      }
    })
    if (replicas > 1) yield* Effect.forkScoped(watchReplicas)

    /** Why the node's streams or buckets do not have the replicas asked for; none when they all do. */
    const placementProblem = Effect.sync(() => Option.fromNullable(placement.values().next().value as string | undefined))

    return { connected, ensureStream, kv, publish, ping, placementProblem, names, replicas } as const
  })
}) {}

const checkHonoured = (spec: Partial<StreamConfig>, info: StreamInfo) => {
  const wrong = (["max_age", "duplicate_window", "retention", "storage", "max_msgs_per_subject", "discard", "num_replicas"] as const).filter(
    (key) => spec[key] !== undefined && info.config[key] !== spec[key]
  )
  return wrong.length === 0
    ? Effect.succeed(info)
    : Effect.fail(new StreamMismatch({ stream: info.config.name, message: `server did not honour ${wrong.join(", ")}` }))
}

export const NatsLive: Layer.Layer<Nats, never, AppConfig> = Nats.Default.pipe(Layer.provide(BusNames.layer))
