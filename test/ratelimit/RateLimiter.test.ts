import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ActorClient, EphemeralUnavailable } from "../../src/actors/runtime/index.ts"
import { RateLimitKind } from "../../src/ratelimit/RateLimitKind.ts"
import { RateLimiter } from "../../src/ratelimit/RateLimiter.ts"

// The node side of the ratelimit actors against an in-process owner (the kind's own ephemeral
// handler) reached with a chosen round-trip time, so the leasing logic is tested without a bus.
// How many three nodes admit together is a rule on the TestClock (RateLimiter.rules.test.ts):
// measured in real time it failed when a loaded machine could not offer the load on schedule.

const limit = { rate: 300, capacity: 30 }

const ownerWith = (rttMs: number, stats = { asks: 0 }) => {
  const handle = RateLimitKind.ephemeral!.make()
  return Layer.succeed(ActorClient, {
    askEphemeral: (_kind: unknown, key: string, request: unknown) =>
      Effect.promise(() =>
        new Promise((resolve) => {
          stats.asks++
          setTimeout(() => resolve(handle(key, request)), rttMs)
        })
      )
  } as unknown as ActorClient)
}

const limiterWith = (client: Layer.Layer<ActorClient>) => Effect.runSync(Effect.provide(RateLimiter, RateLimiter.Default.pipe(Layer.provide(client))))

describe("RateLimiter", () => {
  it("without an owner each node limits on its own with a local bucket of the same size", async () => {
    const unreachable = Layer.succeed(ActorClient, {
      askEphemeral: () => Effect.fail(new EphemeralUnavailable({ kind: "ratelimit", message: "no responders" }))
    } as unknown as ActorClient)
    const limiter = limiterWith(unreachable)
    const started = performance.now()
    const verdicts = await Promise.all(Array.from({ length: 40 }, () => Effect.runPromise(limiter.check("k", limit))))
    // The bucket's 30, and what it refilled (300/s) while the takes ran: a loaded machine may
    // take a few milliseconds over them.
    const refilled = Math.floor(((performance.now() - started) / 1000) * limit.rate)
    const allowed = verdicts.filter((v) => v.allowed).length
    expect(allowed).toBeGreaterThanOrEqual(30)
    expect(allowed).toBeLessThanOrEqual(30 + refilled)
    expect(verdicts.find((v) => !v.allowed)).toMatchObject({ allowed: false, retryAfterMs: expect.any(Number) })
  })

  it("a Growth burst of 50 over two nodes, one of which stalls 150 ms between its waves: all 50 admitted", async () => {
    // Issue 34, item 10: tokens leased for requests, or taken ahead of them, must not be lost when
    // the node that holds them is late to spend them.
    const owner = ownerWith(5)
    const a = limiterWith(owner)
    const b = limiterWith(owner)
    const growth = { rate: 5, capacity: 50 }
    const wave = (node: RateLimiter, n: number) => Promise.all(Array.from({ length: n }, () => Effect.runPromise(node.check("plan", growth))))
    const first = await Promise.all([wave(a, 20), wave(b, 10)])
    // Node A's event loop is stopped (a busy node), then its next requests come.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 150)
    const second = await Promise.all([wave(a, 15), wave(b, 5)])
    expect([...first, ...second].flat().filter((v) => !v.allowed)).toEqual([])
  })
})
