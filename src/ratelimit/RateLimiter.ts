import { Clock, Deferred, Duration, Effect, Either, Exit, FiberId, Option } from "effect"
import { ActorClient } from "../actors/runtime/index.ts"
import { type LeaseReply, RateLimitKind } from "./RateLimitKind.ts"
import { type Bucket, fresh, type Limit, msUntilToken, take } from "./tokenBucket.ts"

export type Verdict = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterMs: number }

const ALLOWED: Verdict = { allowed: true }

/** Tokens taken ahead of demand that no request spent for this long go back to the owner. */
export const GIVE_BACK_AFTER_MS = 100
/** A busy key asks ahead for about this long of its recent demand. */
const AHEAD_MS = 50
/** Takes since the last ask from which a key counts as busy (see `wanted`). */
const BUSY_ARRIVALS = 16
/** How long a request waits for the owner's answer before this node decides it on its own. */
export const OWNER_TIMEOUT_MS = 500
/**
 * How long an ask itself may stay unanswered. Far longer than a request waits: an answer that
 * comes late (the owner, or this node, was slow) still brings its tokens, which the owner has
 * counted and which would be lost with it.
 */
const ASK_TIMEOUT = Duration.seconds(5)
/** How long a node limits on its own after the owner did not answer, before asking again. */
export const ALONE_FOR_MS = 1_000
const MAX_PENDING_ASKS = 4
const ASK_SPACING_MS = 20
const FALLBACK_WARNING_EVERY_MS = 10_000

interface Waiter {
  readonly verdict: Deferred.Deferred<Verdict>
  readonly since: number
}

interface LocalLease {
  limit: Limit
  /** Tokens at hand, taken ahead of demand: any request spends them. */
  tokens: number
  /** When a request last came for this key (what the give-back waits on). */
  lastTakeAt: number
  givingBack: boolean
  /** Until then the owner said the bucket is empty: requests are refused without asking. */
  deniedUntil: number
  /** Until then the owner is taken as unreachable and the node limits on its own. */
  aloneUntil: number
  /** Requests admitted by the node's own bucket while their ask was out: a late answer's tokens are theirs. */
  owed: number
  /** Takes seen since the last ask, and when that was: this node's demand on the bucket. */
  arrivals: number
  askedAt: number
  lastWant: number
  /** Requests waiting for a token, oldest first; how many of them the asks out now ask for. */
  readonly waiters: Array<Waiter>
  covered: number
  pending: number
  askScheduled: boolean
}

/**
 * This node's side of the `ratelimit` actors (README, "Rate limiting"). A request spends a token
 * at hand, or waits for one: it is counted in an ask to the bucket's owner, and the tokens that
 * ask brings are handed to the waiting requests themselves, oldest first, so a token leased for a
 * request is held until that request has used it, however late this node gets to it. A request is
 * refused only on the owner's word that the bucket is empty. When the owner does not answer in
 * time (none yet, the bus is down, or it or this node is slow), the request is decided by a local
 * bucket of the same size instead of refused: under stress the limit errs towards letting a little
 * more through, never less. An answer that comes late still counts: its tokens are those of the
 * requests the node admitted meanwhile, then of requests still waiting.
 */
export class RateLimiter extends Effect.Service<RateLimiter>()("herald/RateLimiter", {
  effect: Effect.gen(function*() {
    const client = yield* ActorClient
    const leases = new Map<string, LocalLease>()
    const fallback = new Map<string, Bucket>()
    let lastWarning = Number.NEGATIVE_INFINITY

    const local = (key: string, lease: LocalLease, now: number): Verdict => {
      let bucket = fallback.get(key)
      if (bucket === undefined) fallback.set(key, bucket = fresh(lease.limit, now))
      return take(bucket, lease.limit, 1, now) === 1 ? ALLOWED : { allowed: false, retryAfterMs: msUntilToken(bucket, lease.limit, now) }
    }

    const warnAlone = (reason: string, now: number) => {
      if (now - lastWarning < FALLBACK_WARNING_EVERY_MS) return Effect.void
      lastWarning = now
      return Effect.logWarning("rate limit owner unreachable; limiting per node", { reason })
    }

    /**
     * What to ask for: one token per request waiting and not yet asked for (`need`), and ahead of
     * demand the takes this node saw since its last ask (what it spent, or would have). A busy key
     * (BUSY_ARRIVALS takes or more since the last ask) asks for AHEAD_MS of its recent rate instead,
     * so it does not ask the owner every round trip with requests waiting on each. The owner grants
     * tokens ahead only while its bucket is more than half full.
     */
    const wanted = (lease: LocalLease, need: number, now: number) => {
      const busy = lease.arrivals >= BUSY_ARRIVALS
        ? Math.ceil((lease.arrivals * AHEAD_MS) / Math.max(1, now - lease.askedAt))
        : 0
      const most = Math.max(1, Math.floor(lease.limit.capacity))
      const needed = Math.min(most, need)
      return { need: needed, want: Math.min(most, Math.max(1, needed, lease.arrivals, busy)) }
    }

    /** More than one ask may be out at a time, spaced apart, so a slow owner still sees the node often. */
    const mayAsk = (lease: LocalLease, now: number) =>
      lease.pending === 0 || (lease.pending < MAX_PENDING_ASKS && now - lease.askedAt >= ASK_SPACING_MS)

    const resolve = (waiter: Waiter, verdict: Verdict) => Deferred.unsafeDone(waiter.verdict, Exit.succeed(verdict))

    /**
     * Tokens from the owner. First those for requests the node admitted on its own while the ask
     * for them was out: the owner counted them for those requests, and spending them on others
     * would admit those twice. Then to the requests waiting, oldest first; then at hand.
     */
    const deliver = (lease: LocalLease, granted: number) => {
      const settledAlone = Math.min(granted, lease.owed)
      lease.owed -= settledAlone
      let left = granted - settledAlone
      while (left > 0 && lease.waiters.length > 0) {
        resolve(lease.waiters.shift()!, ALLOWED)
        left--
      }
      lease.tokens += left
    }

    /** Requests still waiting that no ask out now counts: ask for them, now or once spacing allows. */
    const askForWaiters = (key: string, lease: LocalLease): Effect.Effect<void> =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        if (lease.waiters.length <= lease.covered) return Effect.void
        if (mayAsk(lease, now)) return ask(key, lease, now)
        if (lease.askScheduled || lease.pending >= MAX_PENDING_ASKS) return Effect.void
        lease.askScheduled = true
        return Effect.asVoid(Effect.forkDaemon(
          Effect.sleep(Duration.millis(Math.max(1, ASK_SPACING_MS - (now - lease.askedAt)))).pipe(
            Effect.zipRight(Effect.sync(() => lease.askScheduled = false)),
            Effect.zipRight(Effect.suspend(() => askForWaiters(key, lease)))
          )
        ))
      })

    /** Gives back tokens at hand once no request has come for GIVE_BACK_AFTER_MS. */
    const giveBackWhenIdle = (key: string, lease: LocalLease): Effect.Effect<void> =>
      Effect.gen(function*() {
        for (;;) {
          const now = yield* Clock.currentTimeMillis
          const idle = now - lease.lastTakeAt
          if (lease.tokens < 1) break
          if (idle >= GIVE_BACK_AFTER_MS) {
            const returned = Math.floor(lease.tokens)
            lease.tokens -= returned
            yield* client.askEphemeral(RateLimitKind, key, { rate: lease.limit.rate, capacity: lease.limit.capacity, want: 0, returned }).pipe(
              Effect.ignore
            )
            break
          }
          yield* Effect.sleep(Duration.millis(GIVE_BACK_AFTER_MS - idle))
        }
      }).pipe(Effect.ensuring(Effect.sync(() => lease.givingBack = false)))

    const settled = (key: string, lease: LocalLease) =>
      Effect.suspend(() => {
        const effects: Array<Effect.Effect<void>> = []
        if (lease.tokens >= 1 && !lease.givingBack) {
          lease.givingBack = true
          effects.push(Effect.asVoid(Effect.forkDaemon(giveBackWhenIdle(key, lease))))
        }
        effects.push(askForWaiters(key, lease))
        return Effect.all(effects, { discard: true })
      })

    /**
     * One ask to the owner, run on its own fiber (the requests it is for wait on their own
     * verdicts, not on it). Its answer, however late, is delivered.
     */
    const ask = (key: string, lease: LocalLease, now: number): Effect.Effect<void> => {
      const { need, want } = wanted(lease, Math.max(0, lease.waiters.length - lease.covered), now)
      lease.pending++
      lease.covered += need
      lease.arrivals = 0
      lease.askedAt = now
      lease.lastWant = want
      const request = { rate: lease.limit.rate, capacity: lease.limit.capacity, want, need }
      return Effect.asVoid(Effect.forkDaemon(
        client.askEphemeral(RateLimitKind, key, request, ASK_TIMEOUT).pipe(
          Effect.either,
          Effect.flatMap((answer) =>
            Effect.flatMap(Clock.currentTimeMillis, (at) => {
              lease.pending--
              lease.covered = Math.max(0, lease.covered - need)
              // The last answer that could repay the local bucket is in.
              const last = lease.pending === 0
              if (Either.isLeft(answer)) {
                // No owner: this node limits on its own for a while; those waiting are decided now.
                lease.aloneUntil = at + ALONE_FOR_MS
                for (const waiter of lease.waiters.splice(0)) resolve(waiter, local(key, lease, at))
                if (last) lease.owed = 0
                return warnAlone(answer.left.message, at)
              }
              const reply = answer.right as LeaseReply
              lease.aloneUntil = 0
              deliver(lease, reply.granted)
              if (last) lease.owed = 0
              if (reply.retryAfterMs > 0) {
                // The bucket could not cover the requests waiting when the ask left: it holds no
                // token until `retryAfterMs` after the owner answered, which was after the ask left.
                lease.deniedUntil = Math.max(lease.deniedUntil, now + reply.retryAfterMs)
                while (lease.waiters.length > 0 && lease.waiters[0]!.since < lease.deniedUntil) {
                  resolve(lease.waiters.shift()!, { allowed: false, retryAfterMs: Math.max(1, lease.deniedUntil - at) })
                }
              }
              return settled(key, lease)
            })
          )
        )
      ))
    }

    /** No token at hand: wait for one, or for the owner's word, at most OWNER_TIMEOUT_MS. */
    const wait = (key: string, lease: LocalLease, now: number): Effect.Effect<Verdict> => {
      const waiter: Waiter = { verdict: Deferred.unsafeMake<Verdict>(FiberId.none), since: now }
      lease.waiters.push(waiter)
      const leave = () => {
        const index = lease.waiters.indexOf(waiter)
        if (index >= 0) lease.waiters.splice(index, 1)
      }
      const onTimeout = Effect.flatMap(Deferred.poll(waiter.verdict), Option.match({
        // Answered at the last moment: that verdict stands.
        onSome: (verdict) => verdict,
        onNone: () =>
          Effect.flatMap(Clock.currentTimeMillis, (at) => {
            leave()
            lease.aloneUntil = Math.max(lease.aloneUntil, at + ALONE_FOR_MS)
            const verdict = local(key, lease, at)
            if (verdict.allowed && lease.pending > 0) lease.owed++
            return Effect.as(warnAlone("no answer in time", at), verdict)
          })
      }))
      return Effect.zipRight(
        askForWaiters(key, lease),
        Deferred.await(waiter.verdict).pipe(
          Effect.timeoutTo({ duration: Duration.millis(OWNER_TIMEOUT_MS), onSuccess: Effect.succeed, onTimeout: () => onTimeout }),
          Effect.flatten,
          // A request that went away (its client hung up) leaves no place to hand a token to.
          Effect.onInterrupt(() => Effect.sync(leave))
        )
      )
    }

    /**
     * One request against the bucket `key` with the given limit. The caller states the limit on
     * every take, so a changed plan applies at once.
     */
    const check = (key: string, limit: Limit): Effect.Effect<Verdict> =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        let lease = leases.get(key)
        if (lease === undefined) {
          leases.set(
            key,
            lease = {
              limit,
              tokens: 0,
              lastTakeAt: now,
              givingBack: false,
              deniedUntil: 0,
              aloneUntil: 0,
              owed: 0,
              arrivals: 0,
              askedAt: Number.NEGATIVE_INFINITY,
              lastWant: 1,
              waiters: [],
              covered: 0,
              pending: 0,
              askScheduled: false
            }
          )
        }
        lease.limit = limit
        lease.arrivals++
        lease.lastTakeAt = now
        if (now < lease.aloneUntil) return Effect.succeed(local(key, lease, now))
        if (lease.tokens >= 1) {
          lease.tokens--
          // Half of what was asked for is spent: ask for more now, so that the answer is back
          // before the last token goes and no request waits for the round trip.
          if (lease.tokens < lease.lastWant / 2 && mayAsk(lease, now)) return Effect.as(ask(key, lease, now), ALLOWED)
          return Effect.succeed(ALLOWED)
        }
        if (now < lease.deniedUntil) return Effect.succeed({ allowed: false, retryAfterMs: lease.deniedUntil - now })
        return wait(key, lease, now)
      })

    return { check } as const
  })
}) {}
