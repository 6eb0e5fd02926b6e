import { SqlClient } from "@effect/sql"
import { Deferred, Duration, Effect, ExecutionStrategy, Exit, Layer, Metric, Schedule, Scope } from "effect"
import { Nats } from "../../bus/Nats.ts"
import { AppConfig } from "../../config/AppConfig.ts"
import { Storage } from "../../storage/Migrations.ts"
import { ActorClient } from "./ActorClient.ts"
import type { ActorKind } from "./ActorKind.ts"
import { ensureStateTable, makeKindCommitter } from "./committer.ts"
import { makeFairPermits } from "./fairPermits.ts"
import { type LeaseKeeper, type LeaseTimes, makeLeaseKeeper } from "./leaseGuard.ts"
import { type Lease, makeLeases } from "./leases.ts"
import { makeMembership, nodeInfo } from "./membership.ts"
import { labelled } from "../../observability/labelled.ts"
import * as M from "./metrics.ts"
import { Outbox } from "./outbox.ts"
import { OwnedPartitions } from "./OwnedPartitions.ts"
import { type OwnedPartition, type PartitionEnv, type RegisteredKind, startPartition } from "./partition.ts"
import { ownerOf } from "./partitioning.ts"
import { streamSpec } from "./transport.ts"

/** Lease and membership lifetimes (ACTORS.md): renewed at about a third of their TTL. */
export const LEASE_TTL = Duration.seconds(6)
/** The lease and membership buckets: entries live one lease lifetime unless renewed. */
export const LEASE_BUCKET = { ttl: Duration.toMillis(LEASE_TTL), history: 1 } as const
const RENEW_EVERY = Duration.seconds(2)
/**
 * A lease renewed (its request sent) less than `freshFor` ago is certainly still held: the KV entry
 * lives LEASE_TTL from when the server wrote it, which is after the request left. Older, it is
 * renewed again before any side effect (ActorContext.lease). Two renewal periods: a healthy node
 * never waits. One renewal waits `renewTimeout` at most: one stuck behind a cut connection must
 * not hold the others.
 */
const LEASE_TIMES: LeaseTimes = {
  ttl: LEASE_TTL,
  freshFor: Duration.seconds(4),
  renewTimeout: Duration.seconds(2),
  recheckEvery: Duration.millis(200)
}
const HEARTBEAT_EVERY = Duration.seconds(2)
const ASSIGN_EVERY = Duration.seconds(1)
/** A new node first listens this long, so it sees the others before it claims partitions. */
const SETTLE = Duration.millis(1500)
/** How long a hand-off waits for commands already received to finish. */
const HANDOFF_DRAIN = Duration.seconds(5)
const MAX_ACK_PENDING = 1000

interface Held {
  readonly lease: Lease
  readonly partition: OwnedPartition
  readonly scope: Scope.CloseableScope
  /** Its renewals and the checks made before side effects (ActorContext.lease). */
  readonly keeper: LeaseKeeper
  /** Being handed off: still renewed (so the lease outlives the drain), no longer reassigned. */
  releasing: boolean
}

const startupSchedule = Schedule.exponential(Duration.millis(200), 2).pipe(Schedule.either(Schedule.spaced(Duration.seconds(5))))

/**
 * The node's actor runtime. Every node registers the kinds it knows (so they can be sent to);
 * worker nodes also take part in ownership: they heartbeat into the membership bucket, compute the
 * rendezvous assignment every second, acquire the leases of their partitions, renew them, hand off
 * the ones that moved to another node (drained, then released), and give everything back on
 * shutdown.
 */
export class ActorRuntime extends Effect.Service<ActorRuntime>()("herald/ActorRuntime", {
  scoped: Effect.gen(function*() {
    const config = yield* AppConfig
    const sql = yield* SqlClient.SqlClient
    const nats = yield* Nats
    const storage = yield* Storage
    const client = yield* ActorClient
    const outbox = yield* Outbox
    const kinds = new Map<string, RegisteredKind>()
    const prepared = new Set<string>()
    const held = new Map<string, Held>()
    const acquiring = new Set<string>()
    const permits = yield* makeFairPermits(config.actorConcurrency)
    const isWorker = config.role !== "api"
    const nodeId = config.nodeId
    const runtimeScope = yield* Effect.scope

    /**
     * Streams and buckets every node (api included) brings to HERALD_NATS_REPLICAS at start: the
     * node is not ready until each has been created or updated once (retried until NATS takes it;
     * one NATS cannot place keeps the node unready, naming the setting).
     */
    let startChecks = 0
    const checkAtStart = (what: Effect.Effect<unknown, unknown>) => {
      startChecks++
      return what.pipe(
        Effect.retry(startupSchedule),
        Effect.ensuring(Effect.sync(() => startChecks--)),
        Effect.forkIn(runtimeScope),
        Effect.asVoid
      )
    }
    yield* checkAtStart(Effect.all([nats.kv("leases", LEASE_BUCKET), nats.kv("nodes", LEASE_BUCKET)]))

    const register = <K extends ActorKind.Any>(
      kind: K,
      options: { readonly maxAttempts?: number; readonly passivateAfter?: Duration.DurationInput } = {}
    ): Effect.Effect<void, never, ActorKind.Context<K>> =>
      Effect.gen(function*() {
        const services = yield* Effect.context<ActorKind.Context<K>>()
        kinds.set(kind.name, {
          kind,
          services,
          maxAttempts: options.maxAttempts ?? kind.maxAttempts ?? config.actorMaxAttempts,
          passivateAfter: Duration.decode(options.passivateAfter ?? kind.passivateAfter ?? Duration.minutes(2))
        })
        yield* checkAtStart(client.ensureKind(kind))
      })

    /** The kind's stream and state table, once per process. */
    const prepare = (registered: RegisteredKind) =>
      prepared.has(registered.kind.name)
        ? Effect.void
        : Effect.gen(function*() {
          yield* nats.ensureStream(streamSpec(nats.names, registered.kind.name))
          yield* ensureStateTable(registered.kind.table).pipe(Effect.provideService(SqlClient.SqlClient, sql))
          prepared.add(registered.kind.name)
        })

    const snapshot = Effect.sync(() => {
      const out: Record<string, Array<number>> = {}
      for (const h of held.values()) (out[h.partition.kind] ??= []).push(h.partition.partition)
      for (const list of Object.values(out)) list.sort((a, b) => a - b)
      return out
    })

    const setOwnedGauge = Effect.suspend(() =>
      Effect.forEach(kinds.keys(), (name) => {
        let n = 0
        for (const h of held.values()) if (h.partition.kind === name) n++
        return Metric.set(labelled(M.partitionsOwned, { kind: name }), n)
      }, { discard: true })
    )

    const leaseEvent = (kind: string, event: "acquired" | "released" | "lost") =>
      Metric.increment(labelled(M.leaseChanges, { kind, event }))

    if (isWorker) {
      yield* Effect.gen(function*() {
        yield* storage.awaitReady
        const bus = yield* nats.connected.pipe(Effect.retry(startupSchedule))
        const leaseKv = yield* nats.kv("leases", LEASE_BUCKET).pipe(Effect.retry(startupSchedule))
        const nodeKv = yield* nats.kv("nodes", LEASE_BUCKET).pipe(Effect.retry(startupSchedule))
        const leases = makeLeases(leaseKv, nodeId)
        const membership = makeMembership(nodeKv, bus.jsm, nats.names.bucket("nodes"), nodeInfo(nodeId, config.role))
        /** Set by the shutdown: the node takes nothing more and keeps out of the membership. */
        let leaving = false

        // One group committer per kind for all its partitions on this node, for the node's life.
        // Their scope is made before the shutdown hand-off is registered, so it closes after it:
        // the partitions being drained can still commit.
        const commitScope = yield* Scope.fork(runtimeScope, ExecutionStrategy.sequential)
        // Memoised: partitions of a kind acquired at the same moment get the same one.
        const committerOf = yield* Effect.cachedFunction((kind: ActorKind.Any) =>
          makeKindCommitter({ kind: kind.name, table: kind.table }).pipe(
            Effect.provideService(SqlClient.SqlClient, sql),
            Scope.extend(commitScope)
          )
        )

        const env: PartitionEnv = {
          sql,
          bus,
          publish: nats.publish,
          names: nats.names,
          partitions: config.partitions,
          timerRecheck: Duration.millis(config.timerRecheckMs),
          permits,
          nudgeRelay: outbox.nudge,
          ensureKind: (kind) => client.ensureKind(kind),
          maxAckPending: MAX_ACK_PENDING,
          committerOf
        }

        /** Stops a partition: drained first when handing off, at once when it was lost. */
        const drop = (id: string, how: "handoff" | "lost", reason: string) =>
          Effect.gen(function*() {
            const h = held.get(id)
            // Closing the consumer during a hand-off also signals "lost": the hand-off finishes it.
            if (h === undefined || h.releasing) return
            h.releasing = true
            // A hand-off keeps renewing the lease while it drains; a lost partition stops at once.
            if (how === "handoff") yield* h.partition.drain(HANDOFF_DRAIN)
            h.keeper.drop()
            held.delete(id)
            yield* Scope.close(h.scope, Exit.void)
            if (how === "handoff") yield* Effect.zipRight(h.keeper.settled, leases.release(h.lease))
            yield* leaseEvent(h.partition.kind, how === "handoff" ? "released" : "lost")
            yield* setOwnedGauge
            yield* Effect.logInfo(how === "handoff" ? "partition handed off" : "partition dropped", {
              kind: h.partition.kind,
              partition: h.partition.partition,
              reason
            })
          })

        const acquire = (registered: RegisteredKind, partition: number) =>
          Effect.gen(function*() {
            const clock = yield* Effect.clock
            const lease = yield* leases.acquire(registered.kind.name, partition)
            if (lease === undefined) return
            // The node began leaving while the lease was on its way: given back at once.
            if (leaving) return yield* leases.release(lease)
            const id = `${registered.kind.name}/${partition}`
            // Counted from now, after the create was answered: later than it left, so a little
            // conservative, never optimistic.
            const keeper = makeLeaseKeeper({
              kind: registered.kind.name,
              partition,
              renew: Effect.asVoid(leases.renew(lease)),
              giveUp: (reason) => drop(id, "lost", reason),
              times: LEASE_TIMES,
              scope: runtimeScope,
              clock
            })
            const fenced = yield* Effect.gen(function*() {
              // Raise the fence before touching anything: from this commit on, writes of any
              // previous owner are rejected. GREATEST keeps epochs rising even if the KV bucket
              // was ever re-created and its revisions started over.
              const [row] = yield* sql<{ epoch: string }>`
                INSERT INTO partition_epochs (kind, partition, epoch, owner)
                VALUES (${registered.kind.name}, ${partition}, ${lease.acquiredRevision}, ${nodeId})
                ON CONFLICT (kind, partition) DO UPDATE
                  SET epoch = GREATEST(partition_epochs.epoch + 1, excluded.epoch), owner = excluded.owner, acquired_at = now()
                RETURNING epoch`
              const epoch = Number(row!.epoch)
              const scope = yield* Scope.make()
              const partitionHandle = yield* startPartition(env, registered, partition, epoch, keeper.guard).pipe(
                Scope.extend(scope),
                Effect.onError(() => Scope.close(scope, Exit.void))
              )
              return { scope, partitionHandle }
            }).pipe(Effect.either)
            if (fenced._tag === "Left") {
              yield* leases.release(lease)
              return yield* Effect.fail(fenced.left)
            }
            // Began leaving while it started: the shutdown's hand-off has already listed what it
            // holds, so this one is stopped and given back here.
            if (leaving) {
              keeper.drop()
              yield* Scope.close(fenced.right.scope, Exit.void)
              return yield* leases.release(lease)
            }
            held.set(id, { lease, keeper, partition: fenced.right.partitionHandle, scope: fenced.right.scope, releasing: false })
            yield* leaseEvent(registered.kind.name, "acquired")
            yield* setOwnedGauge
            yield* Effect.logInfo("partition acquired", { kind: registered.kind.name, partition, epoch: fenced.right.partitionHandle.epoch })
            // A partition that loses its consumer or is fenced out is dropped at once. The drop runs
            // outside the partition's scope: a fiber of that scope cannot close it.
            yield* Deferred.await(fenced.right.partitionHandle.lost).pipe(
              Effect.flatMap((reason) => Effect.forkIn(drop(id, "lost", reason), runtimeScope)),
              Effect.forkIn(fenced.right.scope),
              Effect.asVoid
            )
          }).pipe(Effect.ensuring(Effect.sync(() => acquiring.delete(`${registered.kind.name}/${partition}`))))

        const assign = Effect.gen(function*() {
          const live = yield* membership.live
          if (!live.includes(nodeId)) live.push(nodeId)
          const toAcquire: Array<[RegisteredKind, number]> = []
          const toHandOff: Array<string> = []
          for (const registered of kinds.values()) {
            yield* prepare(registered)
            for (let p = 0; p < config.partitions; p++) {
              const id = `${registered.kind.name}/${p}`
              const mine = ownerOf(live, registered.kind.name, p) === nodeId
              if (mine && !held.has(id) && !acquiring.has(id)) {
                acquiring.add(id)
                toAcquire.push([registered, p])
              } else if (!mine && held.has(id) && !held.get(id)!.releasing) {
                toHandOff.push(id)
              }
            }
          }
          yield* Effect.forEach(toHandOff, (id) => drop(id, "handoff", "assignment moved"), { concurrency: "unbounded", discard: true })
          const failed = yield* Effect.forEach(toAcquire, ([registered, p]) => Effect.either(acquire(registered, p)), { concurrency: 8 })
          // One line per round, not one per partition: while NATS elects a leader every partition
          // of the round fails alike (they are tried again next round, a second later).
          const failures = failed.flatMap((r, i) => (r._tag === "Left" ? [{ at: toAcquire[i]!, error: r.left }] : []))
          if (failures.length > 0) {
            yield* Effect.logWarning("partition acquisition failed; trying again", {
              partitions: failures.map(({ at: [registered, p] }) => `${registered.kind.name}/${p}`).slice(0, 20),
              count: failures.length,
              reason: String((failures[0]!.error as { message?: unknown })?.message ?? failures[0]!.error)
            })
          }
        })

        const renewAll = Effect.suspend(() =>
          Effect.forEach(
            [...held.entries()],
            ([id, h]) =>
              h.keeper.renew.pipe(
                Effect.catchTags({
                  LeaseLost: (e) => drop(id, "lost", e.message),
                  // Not renewed for a lease's lifetime: it may have lapsed and another node may
                  // start the partition now; stop before it does anything (a cut-off node fences itself).
                  NatsUnavailable: (e) =>
                    h.keeper.expired() ? drop(id, "lost", `lease not renewed for ${Duration.format(LEASE_TTL)}: ${e.message}`) : Effect.void
                })
              ),
            { concurrency: "unbounded", discard: true }
          )
        )

        // A heartbeat whose put lands after the leave takes the entry out again: it put the node
        // back in the membership while it drained, so the others handed it partitions it would
        // never take, unowned until its entry aged out. No round starts once the node is
        // leaving, and one under way gives back what it acquires or starts (see `acquire`). Neither is
        // waited for: the node has 10 s to exit, and the hand-off needs them.
        const heartbeat = Effect.suspend(() =>
          leaving ? Effect.void : Effect.zipRight(membership.heartbeat, Effect.suspend(() => (leaving ? membership.leave : Effect.void)))
        )
        const unlessLeaving = <E>(effect: Effect.Effect<void, E>) => Effect.suspend(() => (leaving ? Effect.void : effect))

        yield* heartbeat.pipe(
          Effect.catchAll((e) => Effect.logWarning("membership heartbeat failed", e.message)),
          Effect.repeat(Schedule.spaced(HEARTBEAT_EVERY)),
          Effect.forkScoped
        )
        yield* renewAll.pipe(Effect.repeat(Schedule.spaced(RENEW_EVERY)), Effect.forkScoped)
        yield* Effect.sleep(SETTLE)
        yield* unlessLeaving(assign).pipe(
          Effect.catchAllCause((cause) => Effect.logWarning("partition assignment failed", cause)),
          Effect.repeat(Schedule.spaced(ASSIGN_EVERY)),
          Effect.forkScoped
        )

        // Shutdown: leave the membership first (others start claiming), then hand everything
        // off drained, so the next owners do not wait for redeliveries.
        yield* Effect.addFinalizer(() =>
          Effect.gen(function*() {
            const started = Date.now()
            leaving = true
            yield* membership.leave
            yield* Effect.logInfo("left the membership; handing partitions off", { partitions: held.size, ms: Date.now() - started })
            yield* Effect.forEach([...held.keys()], (id) => drop(id, "handoff", "node stopping"), { concurrency: "unbounded", discard: true })
            yield* Effect.logInfo("partitions handed off", { ms: Date.now() - started })
          }).pipe(
            Effect.timeout(Duration.seconds(8)),
            Effect.catchAll(() => Effect.logWarning("hand-off not finished in 8 s; the partitions left are taken over when their leases lapse", { partitions: held.size }))
          )
        )
      }).pipe(
        Effect.catchAllCause((cause) => Effect.logError("actor runtime stopped", cause)),
        Effect.forkScoped
      )
    }

    /** Whether every stream and bucket of the start-up checks has been created or brought to the replica count. */
    const busPrepared = Effect.sync(() => startChecks === 0)

    return { register, snapshot, busPrepared, kinds: () => [...kinds.keys()] } as const
  })
}) {}

/** /health/ready reports what this node owns. */
export const OwnedPartitionsLive = Layer.effect(
  OwnedPartitions,
  Effect.map(ActorRuntime, (runtime) => ({ snapshot: runtime.snapshot, busPrepared: runtime.busPrepared }))
)

/** Registers a kind with the node's runtime (a worker then owns its share of the partitions). */
export const registerKind = <K extends ActorKind.Any>(kind: K, options?: { readonly maxAttempts?: number; readonly passivateAfter?: Duration.DurationInput }) =>
  Layer.effectDiscard(Effect.flatMap(ActorRuntime, (runtime) => runtime.register(kind, options)))
