import { describe, expect, it } from "@effect/vitest"
import { fresh, isFull, msUntilToken, take } from "../../src/ratelimit/tokenBucket.ts"

const limit = { rate: 300, capacity: 30 }

describe("token bucket", () => {
  it("starts full and grants at most what it holds, in whole tokens", () => {
    const bucket = fresh(limit, 0)
    expect(take(bucket, limit, 25, 0)).toBe(25)
    expect(take(bucket, limit, 25, 0)).toBe(5)
    expect(take(bucket, limit, 1, 0)).toBe(0)
  })

  it("refills at the rate, never above capacity", () => {
    const bucket = fresh(limit, 0)
    take(bucket, limit, 30, 0)
    expect(take(bucket, limit, 100, 10)).toBe(3) // 10 ms at 300/s
    expect(take(bucket, limit, 100, 10_000)).toBe(30)
  })

  it("says how long until the next token", () => {
    const bucket = fresh(limit, 0)
    take(bucket, limit, 30, 0)
    expect(msUntilToken(bucket, limit, 0)).toBe(4) // 3.33 ms, rounded up
    expect(msUntilToken(bucket, limit, 4)).toBe(0)
  })

  it("an idle bucket that refilled is as good as none", () => {
    const bucket = fresh(limit, 0)
    take(bucket, limit, 30, 0)
    expect(isFull(bucket, limit, 50)).toBe(false)
    expect(isFull(bucket, limit, 100)).toBe(true)
  })
})
