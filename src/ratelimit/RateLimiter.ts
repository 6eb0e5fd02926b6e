import { Deferred, Effect, FiberId } from "effect"
import { ActorClient, EphemeralUnavailable } from "../actors/runtime/index.ts"
import { type LeaseReply, RateLimitKind } from "./RateLimitKind.ts"
import { type Bucket, fresh, type Limit, msUntilToken, take } from "./tokenBucket.ts"

export type Verdict = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterMs: number }

const ALLOWED: Verdict = { allowed: true }

/** Leased tokens not spent within this time are dropped, so no node hoards a burst. */
const LEASE_TTL_MS = 100
/** Takes since the last ask from which a key counts as busy (see `wanted`). */
const BUSY_ARRIVALS = 16
const FALLBACK_WARNING_EVERY_MS = 10_000
/** How long a node limits on its own after the owner did not answer, before asking again. */
const ALONE_FOR_MS = 1_000
const OWNER_TIMEOUT_MS = 500
const MAX_PENDING_ASKS = 4
const ASK_SPACING_MS = 20
/** Asks a take without a token may wait through before it is refused. */
const MAX_ROUNDS = 3

interface LocalLease {
  tokens: number
  expiresAt: number
  deniedUntil: number
  /** Until then the owner is taken as unreachable and the node limits on its own. */
  aloneUntil: number
  /** Takes seen since the last ask, and when that was: this node's demand on the bucket. */
  arrivals: number
  askedAt: number
  lastWant: number
  waiting: number
  /** Asks out now, and the latest of them (what a take without a token waits for). */
  pending: number
  latest: Deferred.Deferred<void> | undefined
}

/**
 * This node's side of the `ratelimit` actors. A take spends a token leased earlier from the
 * bucket's owner; only when the batch is spent (or stale) does it ask the owner for another, and
 * concurrent takes share that one request. When no owner answers (none yet, or the bus is down) the
 * node limits on its own with a local bucket of the same size: the limit then holds per node
 * rather than across nodes, which is logged, instead of refusing every request.
 */
export class RateLimiter extends Effect.Service<RateLimiter>()("herald/RateLimiter", {
  effect: Effect.gen(function*() {
    const client = yield* ActorClient
    const leases = new Map<string, LocalLease>()
    const fallback = new Map<string, Bucket>()
    let lastWarning = 0

    const spend = (lease: LocalLease, now: number): Verdict | undefined => {
      if (lease.tokens >= 1 && now < lease.expiresAt) {
        lease.tokens--
        return ALLOWED
      }
      if (now < lease.deniedUntil) return { allowed: false, retryAfterMs: lease.deniedUntil - now }
      return undefined
    }

    const local = (key: string, limit: Limit): Verdict => {
      const now = Date.now()
      let bucket = fallback.get(key)
      if (bucket === undefined) fallback.set(key, bucket = fresh(limit, now))
      return take(bucket, limit, 1, now) === 1 ? ALLOWED : { allowed: false, retryAfterMs: msUntilToken(bucket, limit, now) }
    }

    /**
     * What to ask for: the takes this node saw since its last ask (what it spent, or would have),
     * at least one per take already waiting. Demand-sized batches keep every node's share close to
     * its traffic and strand few tokens. A busy key (BUSY_ARRIVALS takes or more since the last ask)
     * asks for half a lease's worth of its rate instead: sized by the takes since the last ask alone,
     * it asked the owner every round trip, a NATS request per few dozen requests, with takes
     * waiting on each. A quiet key keeps the small batches: a lease unspent when it expires is lost.
     */
    const wanted = (lease: LocalLease, limit: Limit, now: number) => {
      const busy = lease.arrivals >= BUSY_ARRIVALS
        ? Math.ceil((lease.arrivals * LEASE_TTL_MS) / 2 / Math.max(1, now - lease.askedAt))
        : 0
      return Math.max(1, Math.min(Math.floor(limit.capacity), Math.max(lease.arrivals, busy, lease.waiting + 1)))
    }

    /**
     * More than one ask may be out at a time (spaced apart): with a single one, a slow owner would
     * see each node once per round trip, and a bucket left alone that long overflows and loses
     * tokens, so the limit would be under-served.
     */
    const mayAsk = (lease: LocalLease, now: number) =>
      lease.pending === 0 || (lease.pending < MAX_PENDING_ASKS && now - lease.askedAt >= ASK_SPACING_MS)

    /**
     * Asks the owner for a batch; the tokens add to what is left. Takes that found no token wait
     * for the latest ask instead of asking again.
     */
    const refill = (key: string, limit: Limit, lease: LocalLease): Effect.Effect<void> => {
      const now = Date.now()
      const want = wanted(lease, limit, now)
      const done = Deferred.unsafeMake<void>(FiberId.none)
      lease.latest = done
      lease.pending++
      lease.arrivals = 0
      lease.askedAt = now
      lease.lastWant = want
      return client.askEphemeral(RateLimitKind, key, { rate: limit.rate, capacity: limit.capacity, want }).pipe(
        Effect.timeoutFail({ duration: OWNER_TIMEOUT_MS, onTimeout: () => new EphemeralUnavailable({ kind: RateLimitKind.name, message: "timed out" }) }),
        Effect.flatMap((answer) =>
          Effect.sync(() => {
            const reply = answer as LeaseReply
            const now = Date.now()
            lease.tokens = (now < lease.expiresAt ? lease.tokens : 0) + reply.granted
            lease.expiresAt = now + LEASE_TTL_MS
            lease.deniedUntil = reply.granted > 0 || lease.tokens >= 1 ? 0 : now + reply.retryAfterMs
          })
        ),
        Effect.catchTag("EphemeralUnavailable", (error) => {
          const now = Date.now()
          lease.aloneUntil = now + ALONE_FOR_MS
          if (now - lastWarning < FALLBACK_WARNING_EVERY_MS) return Effect.void
          lastWarning = now
          return Effect.logWarning("rate limit owner unreachable; limiting per node", { reason: error.message })
        }),
        Effect.ensuring(Effect.suspend(() => {
          lease.pending--
          return Deferred.succeed(done, undefined)
        }))
      )
    }

    /**
     * One request against the bucket `key` with the given limit. The caller states the limit on
     * every take, so a changed plan applies at once.
     */
    const check = (key: string, limit: Limit): Effect.Effect<Verdict> =>
      Effect.suspend(() => {
        let lease = leases.get(key)
        if (lease === undefined) {
          leases.set(key, lease = { tokens: 0, expiresAt: 0, deniedUntil: 0, aloneUntil: 0, arrivals: 0, askedAt: 0, lastWant: 1, waiting: 0, pending: 0, latest: undefined })
        }
        const now = Date.now()
        lease.arrivals++
        if (now < lease.aloneUntil) return Effect.succeed(local(key, limit))
        const quick = spend(lease, now)
        if (quick !== undefined) {
          // Half the batch spent: ask for the next one now, so the answer is back before the last
          // token goes and no request waits for the round trip.
          if (quick.allowed && lease.tokens < lease.lastWant / 2 && mayAsk(lease, now)) {
            return Effect.as(Effect.forkDaemon(refill(key, limit, lease)), quick)
          }
          return Effect.succeed(quick)
        }
        return waitForTokens(key, limit, lease, MAX_ROUNDS)
      })

    /**
     * No token at hand: ask (or wait for the ask already out), then try again. A batch smaller
     * than the takes waiting for it is followed by another ask rather than refusals while the
     * owner may still have tokens; a refusal from the owner ends it.
     */
    const waitForTokens = (key: string, limit: Limit, lease: LocalLease, rounds: number): Effect.Effect<Verdict> =>
      Effect.suspend(() => {
        const now = Date.now()
        if (now < lease.aloneUntil) return Effect.succeed(local(key, limit))
        const verdict = spend(lease, now)
        if (verdict !== undefined) return Effect.succeed(verdict)
        if (rounds === 0) return Effect.succeed({ allowed: false, retryAfterMs: Math.ceil(1000 / limit.rate) })
        const next = () => waitForTokens(key, limit, lease, rounds - 1)
        if (mayAsk(lease, now) || lease.latest === undefined) return Effect.flatMap(refill(key, limit, lease), next)
        lease.waiting++
        return Deferred.await(lease.latest).pipe(
          Effect.ensuring(Effect.sync(() => lease.waiting--)),
          Effect.flatMap(next)
        )
      })

    return { check } as const
  })
}) {}
