import { Effect, Schema } from "effect"
import { ActorKind } from "../actors/runtime/index.ts"
import { type Bucket, fresh, give, isFull, type Limit, msUntilToken, take } from "./tokenBucket.ts"

/**
 * A node asks the bucket's owner for tokens. The caller states the limit. `need` of the `want`
 * are for requests waiting on the node now; the rest is ahead of its demand, so that its next
 * requests find a token at hand. `returned` gives back tokens taken ahead that the node did not
 * spend (`want` 0 when that is all it does).
 */
export const LeaseRequest = Schema.Struct({
  rate: Schema.Number.pipe(Schema.positive()),
  capacity: Schema.Number.pipe(Schema.positive()),
  want: Schema.Int.pipe(Schema.nonNegative()),
  need: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  returned: Schema.optional(Schema.Int.pipe(Schema.nonNegative()))
})
export type LeaseRequest = typeof LeaseRequest.Type

/** `retryAfterMs` > 0: the bucket could not cover the requests waiting; a token is due then. */
export const LeaseReply = Schema.Struct({ granted: Schema.Int, retryAfterMs: Schema.Int })
export type LeaseReply = typeof LeaseReply.Type

const decodeRequest = Schema.decodeUnknownSync(LeaseRequest)
const SWEEP_EVERY = 4096

/** Tokens granted ahead of demand are taken as still held by their node for this long at most. */
const AHEAD_HELD_MS = 1_000

interface Entry {
  readonly bucket: Bucket
  limit: Limit
  /** Tokens granted ahead of demand that nodes may still hold (given back or spent: not known which). */
  ahead: number
  aheadAt: number
}

/**
 * The buckets of one owned partition, in memory only (DESIGN.md: a lost bucket refills). Idle
 * buckets that have refilled completely are swept, since a full bucket and no bucket are the same.
 *
 * Tokens for waiting requests come first, down to the last one. Tokens ahead of a node's demand
 * come only from the upper half of the bucket, and when the bucket cannot cover requests that are
 * waiting while tokens granted ahead may still sit unspent on some node, the owner lends against
 * those: the bucket goes below empty by that much, and what the node gives back (or the refill, if
 * it spent them) makes up for it. A request is never refused because another node holds tokens
 * it has not used; the price is that over a short window up to half a bucket more may be let
 * through, paid back by the refill that follows.
 */
export const leaseBuckets = (now: () => number = Date.now) => {
  const buckets = new Map<string, Entry>()
  let calls = 0
  const sweep = (at: number) => {
    for (const [key, entry] of buckets) if (isFull(entry.bucket, entry.limit, at)) buckets.delete(key)
  }
  return (key: string, raw: unknown): LeaseReply => {
    const request = decodeRequest(raw)
    const at = now()
    if (++calls % SWEEP_EVERY === 0) sweep(at)
    const limit: Limit = { rate: request.rate, capacity: request.capacity }
    let entry = buckets.get(key)
    if (entry === undefined) buckets.set(key, entry = { bucket: fresh(limit, at), limit, ahead: 0, aheadAt: at })
    entry.limit = limit
    if (at - entry.aheadAt > AHEAD_HELD_MS) entry.ahead = 0
    if (request.returned !== undefined && request.returned > 0) {
      give(entry.bucket, limit, request.returned, at)
      entry.ahead = Math.max(0, entry.ahead - request.returned)
    }
    // A node of an earlier version states no need: all it wants is for waiting requests.
    const need = Math.min(request.want, request.need ?? request.want)
    let forNeed = take(entry.bucket, limit, need, at)
    if (forNeed < need && entry.ahead >= 1) {
      const lent = Math.min(need - forNeed, Math.floor(entry.ahead))
      entry.bucket.tokens -= lent
      entry.ahead -= lent
      forNeed += lent
    }
    if (forNeed < need) return { granted: forNeed, retryAfterMs: Math.max(1, msUntilToken(entry.bucket, limit, at)) }
    const spare = Math.floor(entry.bucket.tokens - limit.capacity / 2)
    const ahead = spare > 0 ? take(entry.bucket, limit, Math.min(request.want - need, spare), at) : 0
    if (ahead > 0) {
      entry.ahead = Math.min(limit.capacity / 2, entry.ahead + ahead)
      entry.aheadAt = at
    }
    return { granted: forNeed + ahead, retryAfterMs: 0 }
  }
}

/**
 * `ratelimit`: one actor per bucket (an API key, an account's plan). It has no durable commands:
 * API nodes lease tokens from the owner of the bucket's partition over request-reply and spend
 * them locally, so the limit holds across any number of API nodes while a request pays a round
 * trip only when its node has no token at hand (README, "Rate limiting").
 */
export const RateLimitKind = ActorKind.make("ratelimit", {
  // Nothing is ever sent through the stream; every exchange is an ephemeral lease request.
  command: Schema.Struct({}),
  state: Schema.Struct({}),
  initial: () => ({}),
  behaviour: (state) => Effect.succeed(state),
  ephemeral: { make: () => leaseBuckets() }
})
