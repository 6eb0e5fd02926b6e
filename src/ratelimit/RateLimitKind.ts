import { Effect, Schema } from "effect"
import { ActorKind } from "../actors/runtime/index.ts"
import { type Bucket, fresh, isFull, type Limit, msUntilToken, take } from "./tokenBucket.ts"

/** A node asks the bucket's owner for a batch of tokens. The caller states the limit. */
export const LeaseRequest = Schema.Struct({
  rate: Schema.Number.pipe(Schema.positive()),
  capacity: Schema.Number.pipe(Schema.positive()),
  want: Schema.Int.pipe(Schema.positive())
})
export type LeaseRequest = typeof LeaseRequest.Type

export const LeaseReply = Schema.Struct({ granted: Schema.Int, retryAfterMs: Schema.Int })
export type LeaseReply = typeof LeaseReply.Type

const decodeRequest = Schema.decodeUnknownSync(LeaseRequest)
const SWEEP_EVERY = 4096

/**
 * The buckets of one owned partition, in memory only (DESIGN.md: a lost bucket refills). Idle
 * buckets that have refilled completely are swept, since a full bucket and no bucket are the same.
 */
const makeBuckets = () => {
  const buckets = new Map<string, { bucket: Bucket; limit: Limit }>()
  let calls = 0
  const sweep = (now: number) => {
    for (const [key, entry] of buckets) if (isFull(entry.bucket, entry.limit, now)) buckets.delete(key)
  }
  return (key: string, raw: unknown): LeaseReply => {
    const request = decodeRequest(raw)
    const now = Date.now()
    if (++calls % SWEEP_EVERY === 0) sweep(now)
    const limit: Limit = { rate: request.rate, capacity: request.capacity }
    let entry = buckets.get(key)
    if (entry === undefined) buckets.set(key, entry = { bucket: fresh(limit, now), limit })
    entry.limit = limit
    const granted = take(entry.bucket, limit, request.want, now)
    return { granted, retryAfterMs: granted > 0 ? 0 : msUntilToken(entry.bucket, limit, now) }
  }
}

/**
 * `ratelimit`: one actor per bucket (an API key, an account's plan). It has no durable commands:
 * API nodes lease batches of tokens from the owner of the bucket's partition over request-reply
 * and spend them locally, so the limit holds across any number of API nodes while a request pays
 * a round trip only when its node's batch runs out.
 */
export const RateLimitKind = ActorKind.make("ratelimit", {
  // Nothing is ever sent through the stream; every exchange is an ephemeral lease request.
  command: Schema.Struct({}),
  state: Schema.Struct({}),
  initial: () => ({}),
  behaviour: (state) => Effect.succeed(state),
  ephemeral: { make: makeBuckets }
})
