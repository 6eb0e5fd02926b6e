import { describe, expect, it } from "@effect/vitest"
import { leaseBuckets } from "../../src/ratelimit/RateLimitKind.ts"

// The owner's side of the `ratelimit` actors: what it grants for waiting requests and ahead of
// demand, what it lends against tokens granted ahead, and what it takes back.

const growth = { rate: 5, capacity: 50 }

describe("leaseBuckets (the owner)", () => {
  it("grants waiting requests down to the last token, and tokens ahead only from the upper half", () => {
    let now = 0
    const handle = leaseBuckets(() => now)
    expect(handle("k", { ...growth, want: 40, need: 10 })).toEqual({ granted: 25, retryAfterMs: 0 }) // 10 + 15 ahead (50 - 10 - 25)
    expect(handle("k", { ...growth, want: 40, need: 25 })).toEqual({ granted: 25, retryAfterMs: 0 }) // the rest, none ahead
    now = 100
    expect(handle("k", { ...growth, want: 1, need: 1 })).toEqual({ granted: 1, retryAfterMs: 0 }) // ...less what it lent
  })

  it("lends against tokens granted ahead rather than refuse a waiting request; a give-back or the refill makes up for it", () => {
    let now = 0
    const handle = leaseBuckets(() => now)
    expect(handle("k", { ...growth, want: 45, need: 20 })).toEqual({ granted: 25, retryAfterMs: 0 }) // 5 ahead
    // 25 left; 30 requests wait elsewhere: 25 from the bucket, 5 lent against those ahead.
    expect(handle("k", { ...growth, want: 30, need: 30 })).toEqual({ granted: 30, retryAfterMs: 0 })
    // Nothing more to lend: the next is refused until the bucket is back above one token.
    expect(handle("k", { ...growth, want: 1, need: 1 })).toEqual({ granted: 0, retryAfterMs: 1200 })
    // The node that held the 5 gives them back: the bucket is even again.
    expect(handle("k", { ...growth, want: 0, returned: 5 })).toEqual({ granted: 0, retryAfterMs: 0 })
    now = 200
    expect(handle("k", { ...growth, want: 2, need: 2 })).toEqual({ granted: 1, retryAfterMs: 200 })
  })

  it("a node of an earlier version (no need stated) has all it wants counted as waiting", () => {
    const handle = leaseBuckets(() => 0)
    expect(handle("k", { ...growth, want: 60 })).toEqual({ granted: 50, retryAfterMs: 200 })
  })

  it("refuses a malformed request", () => {
    const handle = leaseBuckets(() => 0)
    expect(() => handle("k", { ...growth, want: -1 })).toThrow()
    expect(() => handle("k", { ...growth, want: 1, returned: 0.5 })).toThrow()
  })
})
