import { type Clock, Deferred, Duration, Effect, FiberId, type Scope } from "effect"
import { NatsUnavailable } from "../../bus/Nats.ts"
import { LeaseLost } from "./leases.ts"

/**
 * What a behaviour hands to the work it starts outside its commit (a gateway call, an e-mail, a
 * webhook POST, a CAPI request), to be checked just before that work leaves the node: the
 * partition's lease is still this node's (docs/actors.md, "Side effects and the lease").
 *
 * `current` succeeds at once while the lease was renewed recently (well inside its lifetime); a
 * lease older than that, as a fiber finds it after a long pause (a stopped VM, a GC, a process
 * under SIGSTOP), is treated as lost until it has been renewed again, so the check waits for that
 * renewal; it fails with LeaseLost once the partition has been given up (taken by another node,
 * handed off, or not renewed for a lease's lifetime). Work whose check fails is not started: the
 * partition's next owner finds it again from the committed state.
 */
export interface LeaseGuard {
  readonly kind: string
  readonly partition: number
  /** Synchronous: the lease was renewed recently enough that it is certainly still this node's. */
  readonly fresh: () => boolean
  readonly current: Effect.Effect<void, LeaseLost>
}

/** Outside any partition (a test of a behaviour, a one-off tool): nothing to check. */
export const unguarded: LeaseGuard = { kind: "", partition: -1, fresh: () => true, current: Effect.void }

/** The same check as a promise, for hot paths written with promises: true when the lease is current. */
export const leaseIsCurrent = (guard: LeaseGuard | undefined): Promise<boolean> | true =>
  guard === undefined || guard.fresh() ? true : Effect.runPromise(guard.current.pipe(Effect.as(true), Effect.catchAll(() => Effect.succeed(false))))

export interface LeaseTimes {
  /** The lease's lifetime on the server (the KV bucket's TTL). */
  readonly ttl: Duration.Duration
  /** Renewed less than this long ago, the lease is certainly still held (the check passes at once). */
  readonly freshFor: Duration.Duration
  /** How long one renewal may wait for its answer. */
  readonly renewTimeout: Duration.Duration
  /** Between tries of a check waiting for NATS to answer a renewal. */
  readonly recheckEvery: Duration.Duration
}

/**
 * One held lease's bookkeeping: when its last successful renewal left (the clock's monotonic
 * nanoseconds, so a TestClock drives it in tests), a renewal in progress that the periodic renewal
 * and the checks share (two at one revision would conflict and read as a loss), and whether the
 * partition was given up.
 */
export const makeLeaseKeeper = (options: {
  readonly kind: string
  readonly partition: number
  /** One renewal request at the lease's last revision. */
  readonly renew: Effect.Effect<void, LeaseLost | NatsUnavailable>
  /** Gives the partition up (run apart from the caller, which may be one of the partition's own fibers). */
  readonly giveUp: (reason: string) => Effect.Effect<void>
  readonly times: LeaseTimes
  /** Where shared renewals run, so a caller interrupted meanwhile does not leave the others waiting. */
  readonly scope: Scope.Scope
  readonly clock: Clock.Clock
}) => {
  const { clock, times } = options
  const nowMs = () => Number(clock.unsafeCurrentTimeNanos() / 1_000_000n)
  const freshMs = Duration.toMillis(times.freshFor)
  const ttlMs = Duration.toMillis(times.ttl)
  let renewedAt = nowMs()
  let dropped = false
  let renewing: Deferred.Deferred<void, LeaseLost | NatsUnavailable> | undefined

  const ageMs = () => nowMs() - renewedAt

  const renew: Effect.Effect<void, LeaseLost | NatsUnavailable> = Effect.suspend(() => {
    if (renewing !== undefined) return Deferred.await(renewing)
    const deferred = Deferred.unsafeMake<void, LeaseLost | NatsUnavailable>(FiberId.none)
    renewing = deferred
    const sentAt = nowMs()
    return options.renew.pipe(
      Effect.timeoutFail({
        duration: times.renewTimeout,
        onTimeout: () => new NatsUnavailable({ message: `lease renewal unanswered for ${Duration.format(times.renewTimeout)}` })
      }),
      Effect.tap(() => Effect.sync(() => (renewedAt = Math.max(renewedAt, sentAt)))),
      Effect.exit,
      Effect.flatMap((exit) => Effect.zipRight(Effect.sync(() => (renewing = undefined)), Deferred.complete(deferred, exit))),
      // Its scope closing (the node stopping) ends it: whoever waits for it is answered all the same.
      Effect.onInterrupt(() =>
        Effect.zipRight(Effect.sync(() => (renewing = undefined)), Deferred.fail(deferred, new NatsUnavailable({ message: "lease renewal stopped with the node" })))
      ),
      Effect.forkIn(options.scope),
      Effect.zipRight(Deferred.await(deferred))
    )
  })

  const lost = () => new LeaseLost({ key: `${options.kind}.${options.partition}`, message: `this node no longer holds ${options.kind}/${options.partition}` })
  const fresh = () => !dropped && ageMs() < freshMs
  const current: Effect.Effect<void, LeaseLost> = Effect.suspend(() => {
    if (dropped) return Effect.fail(lost())
    if (fresh()) return Effect.void
    return renew.pipe(
      Effect.catchAll((e) =>
        e._tag === "LeaseLost"
          ? Effect.zipRight(Effect.forkIn(options.giveUp(e.message), options.scope), Effect.fail(e))
          : Effect.zipRight(Effect.sleep(times.recheckEvery), current)
      )
    )
  })

  return {
    guard: { kind: options.kind, partition: options.partition, fresh, current } satisfies LeaseGuard,
    renew,
    /** Not renewed for the lease's whole lifetime: it may have lapsed, and another node may start the partition. */
    expired: () => ageMs() >= ttlMs,
    /** Every check fails from now on. */
    drop: () => {
      dropped = true
    },
    /** Waits for a renewal in flight to be answered (or give up): a release sent before it lands would find the entry moved on. */
    // Interruptible and bounded: a hand-off runs in a finalizer (uninterruptible), and a renewal
    // forked into a scope already closing never runs to answer.
    settled: Effect.suspend(() =>
      renewing === undefined ? Effect.void : Deferred.await(renewing).pipe(Effect.interruptible, Effect.timeout(times.renewTimeout), Effect.ignore)
    )
  }
}

export type LeaseKeeper = ReturnType<typeof makeLeaseKeeper>

export { LeaseLost }
