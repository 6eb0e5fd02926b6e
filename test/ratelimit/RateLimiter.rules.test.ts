import { describe, expect, it } from "@effect/vitest"
import { Clock, Duration, Effect, Fiber, Layer, TestClock } from "effect"
import { ActorClient, EphemeralUnavailable } from "../../src/actors/runtime/index.ts"
import { leaseBuckets } from "../../src/ratelimit/RateLimitKind.ts"
import { GIVE_BACK_AFTER_MS, OWNER_TIMEOUT_MS, RateLimiter, type Verdict } from "../../src/ratelimit/RateLimiter.ts"

// The rules of the node side of the `ratelimit` actors (issue 34, item 10: a limiter may let a
// little more through under stress, never less than its rate), on the TestClock: the owner is the
// kind's own lease handler, reached after a chosen delay, its clock the test's.

/** A Growth plan: 300 a minute, ten seconds of it as the burst. */
const growth = { rate: 5, capacity: 50 }

type Behaviour = (ask: number, request: any) => { readonly delayMs: number } | "lost" | "unreachable"

const makeOwner = (behaviour: Behaviour = () => ({ delayMs: 5 })) => {
  let now = 0
  const handle = leaseBuckets(() => now)
  const asks: Array<any> = []
  const layer = Layer.succeed(ActorClient, {
    askEphemeral: (_kind: unknown, key: string, request: any) =>
      Effect.suspend(() => {
        asks.push(request)
        const how = behaviour(asks.length, request)
        if (how === "unreachable") return Effect.fail(new EphemeralUnavailable({ kind: "ratelimit", message: "no responders" }))
        if (how === "lost") return Effect.never
        // The owner answers when the request reaches it, after half the delay; the answer takes the other half.
        return Effect.sleep(Duration.millis(how.delayMs / 2)).pipe(
          Effect.zipRight(Clock.currentTimeMillis),
          Effect.map((at) => {
            now = at
            return handle(key, request)
          }),
          Effect.tap(() => Effect.sleep(Duration.millis(how.delayMs / 2)))
        )
      })
  } as unknown as ActorClient)
  const node = () => Effect.provide(RateLimiter, RateLimiter.Default.pipe(Layer.provide(layer)))
  return { asks, node }
}

/**
 * Runs the clock forward in small steps, so every fiber due meanwhile runs. 20 ms is a tenth of
 * the gaps the rules are about (1/rate = 200 ms) and of the slow owner's delays; 5 ms steps made
 * this file take 40 s of the suite's CPU for the same verdicts.
 */
const advance = (ms: number) =>
  Effect.gen(function*() {
    for (let left = ms; left > 0; left -= 20) yield* TestClock.adjust(Duration.millis(Math.min(20, left)))
  })

/** `n` takes at once on `node`; the clock runs `ms` while they wait. */
const burst = (node: RateLimiter, key: string, limit: typeof growth, n: number, ms = 1_000) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(Effect.all(Array.from({ length: n }, () => node.check(key, limit)), { concurrency: "unbounded" }))
    yield* advance(ms)
    return yield* Fiber.join(fiber)
  })

const allowed = (verdicts: ReadonlyArray<Verdict>) => verdicts.filter((v) => v.allowed).length

describe("RateLimiter rules", () => {
  it.effect("a burst of the bucket's size at once is all admitted; the next request is refused until a token is due", () =>
    Effect.gen(function*() {
      const owner = makeOwner()
      const node = yield* owner.node()
      expect(allowed(yield* burst(node, "plan:a", growth, 50))).toBe(50)
      // A second later 5 more tokens have come; 6 asked for at once.
      const next = yield* burst(node, "plan:a", growth, 6, 100)
      expect(allowed(next)).toBe(5)
      expect(next.find((v) => !v.allowed)).toMatchObject({ allowed: false, retryAfterMs: expect.any(Number) })
    }))

  it.effect("after the burst, one request per 1/rate seconds is always admitted, and one more is not", () =>
    Effect.gen(function*() {
      const owner = makeOwner()
      const node = yield* owner.node()
      expect(allowed(yield* burst(node, "plan:a", growth, 50, 10))).toBe(50)
      const verdicts: Array<Verdict> = []
      for (let i = 0; i < 60; i++) {
        // A millisecond over 1/rate: the test's own slack errs on the admitting side.
        yield* advance(191)
        verdicts.push(...(yield* burst(node, "plan:a", growth, 1, 10)))
      }
      expect(allowed(verdicts)).toBe(60)
      // The bucket holds nothing more: a request in between is refused.
      expect(allowed(yield* burst(node, "plan:a", growth, 1, 10))).toBe(0)
    }))

  it.effect("an owner that answers slowly (400 ms, under the wait) loses no request: the burst and the rate are admitted", () =>
    Effect.gen(function*() {
      const owner = makeOwner(() => ({ delayMs: 400 }))
      const node = yield* owner.node()
      // The burst in four waves while the owner's answers are on their way.
      const waves = yield* Effect.forEach([0, 1, 2, 3], () => Effect.zipLeft(Effect.fork(burst(node, "plan:a", growth, 12, 0)), advance(30)))
      yield* advance(2_000)
      const verdicts = (yield* Effect.forEach(waves, Fiber.join)).flat()
      expect(allowed(verdicts)).toBe(48)
      // Then a request each 200 ms for 10 s: every one is admitted (one a wave of the owner's slowness behind).
      const steady = yield* Effect.forEach(Array.from({ length: 50 }), () => Effect.zipLeft(Effect.fork(node.check("plan:a", growth)), advance(200)))
      yield* advance(1_000)
      expect(allowed(yield* Effect.forEach(steady, Fiber.join))).toBe(50)
    }))

  it.effect("tokens granted for waiting requests are theirs however late they run; no request gives up while the owner has tokens", () =>
    Effect.gen(function*() {
      // Each answer grants what was asked for; the owner has plenty. 200 requests at once, with a
      // 300 ms round trip each ask: they wait as long as it takes, and all are admitted.
      const owner = makeOwner(() => ({ delayMs: 300 }))
      const node = yield* owner.node()
      const big = { rate: 100_000_000 / 60, capacity: (100_000_000 / 60) * 10 }
      const verdicts = yield* burst(node, "plan:e", big, 200, 2_000)
      expect(allowed(verdicts)).toBe(200)
    }))

  it.effect("an answer that comes after the wait: the requests were admitted by the node's own bucket, and the late tokens are theirs", () =>
    Effect.gen(function*() {
      // The first ask is answered after 800 ms (the node waits 500 ms); the rest at once.
      const owner = makeOwner((n) => ({ delayMs: n === 1 ? 800 : 2 }))
      const node = yield* owner.node()
      const small = { rate: 1 / 3600, capacity: 3 }
      const fiber = yield* Effect.fork(burst(node, "plan:s", small, 3, 0))
      yield* advance(OWNER_TIMEOUT_MS + 5)
      // Decided by the node's own bucket when the owner did not answer in time: admitted, not refused.
      expect(allowed(yield* Fiber.join(fiber))).toBe(3)
      // The owner's answer, late, granted 3 tokens for those very requests: they are not handed
      // to others, and the node asks the owner again at once, which has nothing more.
      yield* advance(400)
      expect(allowed(yield* burst(node, "plan:s", small, 3, 20))).toBe(0)
      expect(owner.asks.length).toBeGreaterThan(1)
    }))

  it.effect("a lost answer: the request is admitted by the node's own bucket instead of refused", () =>
    Effect.gen(function*() {
      const owner = makeOwner(() => "lost")
      const node = yield* owner.node()
      const verdicts = yield* burst(node, "plan:a", growth, 50, OWNER_TIMEOUT_MS + 10)
      expect(allowed(verdicts)).toBe(50)
      // The node's bucket is a bucket all the same: the 51st is refused.
      expect(allowed(yield* burst(node, "plan:a", growth, 1, 10))).toBe(0)
    }))

  it.effect("no owner at all: each node limits on its own, burst then rate", () =>
    Effect.gen(function*() {
      const owner = makeOwner(() => "unreachable")
      const node = yield* owner.node()
      expect(allowed(yield* burst(node, "plan:a", growth, 60, 10))).toBe(50)
      yield* advance(1_000)
      expect(allowed(yield* burst(node, "plan:a", growth, 10, 10))).toBe(5)
    }))

  it.effect("two nodes share a burst at once: all 50 admitted, whichever node took tokens ahead", () =>
    Effect.gen(function*() {
      const owner = makeOwner(() => ({ delayMs: 20 }))
      const a = yield* owner.node()
      const b = yield* owner.node()
      const both = yield* Effect.fork(Effect.all([burst(a, "plan:a", growth, 30, 0), burst(b, "plan:a", growth, 20, 0)], { concurrency: "unbounded" }))
      yield* advance(1_000)
      const [fromA, fromB] = yield* Fiber.join(both)
      expect(allowed(fromA) + allowed(fromB)).toBe(50)
    }))

  it.effect("takes that arrive while an ask is out share it instead of asking again", () =>
    Effect.gen(function*() {
      const owner = makeOwner(() => ({ delayMs: 30 }))
      const node = yield* owner.node()
      const verdicts = yield* burst(node, "k", { rate: 300, capacity: 30 }, 20, 100)
      expect(allowed(verdicts)).toBe(20)
      expect(owner.asks.length).toBeLessThanOrEqual(2)
    }))

  // Three nodes offered three times the rate between them, evenly, for a second: together they
  // admit the rate and the burst (110), within 5%, whatever the round trip to the owner.
  for (const rtt of [1, 40, 150]) {
    it.effect(`three nodes hold 100/s together with a ${rtt} ms round trip to the owner`, () =>
      Effect.gen(function*() {
        const owner = makeOwner(() => ({ delayMs: rtt }))
        const nodes = [yield* owner.node(), yield* owner.node(), yield* owner.node()]
        const limit = { rate: 100, capacity: 10 }
        const fibers: Array<Fiber.RuntimeFiber<Verdict>> = []
        for (let step = 0; step < 50; step++) {
          for (let i = 0; i < 6; i++) fibers.push(yield* Effect.fork(nodes[fibers.length % 3]!.check("k", limit)))
          yield* TestClock.adjust(Duration.millis(20))
        }
        // What was decided by the end of the second and one round trip.
        yield* advance(rtt + 50)
        const decided = fibers.flatMap((f) => {
          const exit = f.unsafePoll()
          return exit !== null && exit._tag === "Success" ? [exit.value] : []
        })
        expect(allowed(decided)).toBeGreaterThanOrEqual(100 * 0.95)
        expect(allowed(decided)).toBeLessThanOrEqual(110 * 1.05)
        yield* Effect.forEach(fibers, Fiber.interrupt, { discard: true })
      }))
  }

  it.effect("tokens a node took ahead and did not spend go back to the owner, where another node gets them", () =>
    Effect.gen(function*() {
      const owner = makeOwner(() => ({ delayMs: 20 }))
      const a = yield* owner.node()
      const b = yield* owner.node()
      // A burst of 20 on node A: a busy key, it asks for tokens ahead of its demand too, and gets
      // them from the upper half of the bucket.
      expect(allowed(yield* burst(a, "plan:a", growth, 20, 60))).toBe(20)
      const ahead = owner.asks.reduce((sum, r) => sum + r.want - (r.need ?? r.want), 0)
      expect(ahead).toBeGreaterThan(0)
      // A then goes quiet: what it holds goes back, and node B's burst finds all of the 30 left.
      yield* advance(GIVE_BACK_AFTER_MS + 10)
      expect(owner.asks.filter((r) => r.returned > 0)).toHaveLength(1)
      expect(allowed(yield* burst(b, "plan:a", growth, 40, 100))).toBe(30)
    }))
})
