/**
 * A token bucket (pure): `rate` tokens per second flow in up to `capacity`; a request takes one.
 * Times are milliseconds, passed in, so the arithmetic is testable without a clock.
 */
export interface Limit {
  /** Tokens per second. */
  readonly rate: number
  /** Most tokens the bucket holds: how far a burst may exceed the rate. */
  readonly capacity: number
}

export interface Bucket {
  tokens: number
  updatedAt: number
}

export const fresh = (limit: Limit, now: number): Bucket => ({ tokens: limit.capacity, updatedAt: now })

const refill = (bucket: Bucket, limit: Limit, now: number) => {
  if (now > bucket.updatedAt) {
    bucket.tokens = Math.min(limit.capacity, bucket.tokens + ((now - bucket.updatedAt) * limit.rate) / 1000)
    bucket.updatedAt = now
  }
}

/** Takes up to `want` whole tokens; returns how many it took. */
export const take = (bucket: Bucket, limit: Limit, want: number, now: number): number => {
  refill(bucket, limit, now)
  const granted = Math.max(0, Math.min(want, Math.floor(bucket.tokens)))
  bucket.tokens -= granted
  return granted
}

/** Puts back tokens taken earlier and not spent, never above capacity. */
export const give = (bucket: Bucket, limit: Limit, tokens: number, now: number): void => {
  refill(bucket, limit, now)
  bucket.tokens = Math.min(limit.capacity, bucket.tokens + tokens)
}

/** Milliseconds until the bucket holds one whole token. */
export const msUntilToken = (bucket: Bucket, limit: Limit, now: number): number => {
  refill(bucket, limit, now)
  return bucket.tokens >= 1 ? 0 : Math.ceil(((1 - bucket.tokens) * 1000) / limit.rate)
}

/** A bucket that has been idle long enough to be full again is the same as no bucket. */
export const isFull = (bucket: Bucket, limit: Limit, now: number): boolean =>
  bucket.tokens + ((now - bucket.updatedAt) * limit.rate) / 1000 >= limit.capacity
