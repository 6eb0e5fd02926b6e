import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Either, Exit, Fiber, TestClock } from "effect"
import { NatsUnavailable } from "../../src/bus/Nats.ts"
import { makeLeaseKeeper } from "../../src/actors/runtime/leaseGuard.ts"
import { LeaseLost } from "../../src/actors/runtime/leases.ts"

// The lease check made before every side effect (docs/actors.md, "Side effects and the lease"),
// driven by the TestClock: a node that wakes from a pause longer than its lease's lifetime starts
// nothing until its lease is renewed again, and nothing at all once another node holds it.

const times = {
  ttl: Duration.seconds(6),
  freshFor: Duration.seconds(4),
  renewTimeout: Duration.seconds(2),
  recheckEvery: Duration.millis(200)
}

/** A keeper whose renewals answer what `answer` says, counting them, and whose give-up is recorded. */
const keeperWith = (answer: () => Effect.Effect<void, LeaseLost | NatsUnavailable>) =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const clock = yield* Effect.clock
    const calls = { renewals: 0, givenUp: [] as Array<string> }
    const keeper = makeLeaseKeeper({
      kind: "sender",
      partition: 3,
      renew: Effect.suspend(() => {
        calls.renewals++
        return answer()
      }),
      giveUp: (reason) =>
        Effect.sync(() => {
          calls.givenUp.push(reason)
          keeper.drop()
        }),
      times,
      scope,
      clock
    })
    return { keeper, calls }
  })

const lost = () => new LeaseLost({ key: "sender.3", message: "lease sender.3 was taken or expired" })

describe("the lease check before side effects", () => {
  it.scoped("passes at once, without a renewal, while the lease is fresh", () =>
    Effect.gen(function*() {
      const { calls, keeper } = yield* keeperWith(() => Effect.void)
      expect(keeper.guard.fresh()).toBe(true)
      yield* keeper.guard.current
      yield* TestClock.adjust(Duration.millis(3_900))
      yield* keeper.guard.current
      expect(calls.renewals).toBe(0)
    }))

  it.scoped("a stale lease is renewed before the work goes, once for every check waiting on it", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const { calls, keeper } = yield* keeperWith(() => Deferred.await(gate))
      yield* TestClock.adjust(Duration.seconds(5))
      expect(keeper.guard.fresh()).toBe(false)
      const checks = yield* Effect.forEach([1, 2, 3], () => Effect.fork(keeper.guard.current))
      yield* TestClock.adjust(Duration.millis(1))
      // Three checks, one renewal in flight: two at one revision would conflict and read as a loss.
      expect(calls.renewals).toBe(1)
      for (const check of checks) expect(check.unsafePoll()).toBeNull()
      yield* Deferred.succeed(gate, undefined)
      for (const check of checks) yield* Fiber.join(check)
      expect(keeper.guard.fresh()).toBe(true)
      expect(calls.renewals).toBe(1)
    }))

  it.scoped("after a pause past the lease's lifetime, a lease another node took fails the check and gives the partition up", () =>
    Effect.gen(function*() {
      const { calls, keeper } = yield* keeperWith(() => Effect.fail(lost()))
      // The process was stopped for 20 s: every fiber wakes at once with its work queued.
      yield* TestClock.adjust(Duration.seconds(20))
      const outcome = yield* Effect.either(keeper.guard.current)
      expect(Either.isLeft(outcome) && outcome.left._tag).toBe("LeaseLost")
      yield* Effect.yieldNow()
      expect(calls.givenUp).toHaveLength(1)
      // Given up: later checks fail without asking NATS again.
      const again = yield* Effect.either(keeper.guard.current)
      expect(Either.isLeft(again)).toBe(true)
      expect(calls.renewals).toBe(1)
      expect(keeper.guard.fresh()).toBe(false)
    }))

  it.scoped("while NATS does not answer, the check waits (nothing leaves) until a renewal succeeds", () =>
    Effect.gen(function*() {
      let reachable = false
      const { calls, keeper } = yield* keeperWith(() => (reachable ? Effect.void : Effect.fail(new NatsUnavailable({ message: "no responders" }))))
      yield* TestClock.adjust(Duration.seconds(5))
      const check = yield* Effect.fork(keeper.guard.current)
      yield* TestClock.adjust(Duration.seconds(1))
      expect(check.unsafePoll()).toBeNull()
      expect(calls.renewals).toBeGreaterThan(1)
      reachable = true
      yield* TestClock.adjust(Duration.millis(200))
      expect(Exit.isSuccess(yield* Fiber.await(check))).toBe(true)
      expect(calls.givenUp).toEqual([])
    }))

  it.scoped("a check waiting on an unreachable NATS fails once the partition is given up (the lease not renewed for its lifetime)", () =>
    Effect.gen(function*() {
      const { keeper } = yield* keeperWith(() => Effect.fail(new NatsUnavailable({ message: "no responders" })))
      yield* TestClock.adjust(Duration.seconds(5))
      const check = yield* Effect.fork(keeper.guard.current)
      yield* TestClock.adjust(Duration.seconds(1))
      expect(keeper.expired()).toBe(true)
      // What the runtime's renewal loop does when `expired()`: the node fences itself.
      keeper.drop()
      yield* TestClock.adjust(Duration.millis(200))
      const exit = yield* Fiber.await(check)
      expect(Exit.isFailure(exit)).toBe(true)
    }))

  it.scoped("a renewal that gets no answer gives up after its timeout, as unavailable (not as lost)", () =>
    Effect.gen(function*() {
      const { keeper } = yield* keeperWith(() => Effect.never)
      const renewal = yield* Effect.fork(Effect.either(keeper.renew))
      yield* TestClock.adjust(Duration.seconds(2))
      const result = yield* Fiber.join(renewal)
      expect(Either.isLeft(result) && result.left._tag).toBe("NatsUnavailable")
      // A later renewal is not stuck behind it.
      expect(keeper.expired()).toBe(false)
    }))

  it.scoped("freshness counts from when the renewal left, not from its answer", () =>
    Effect.gen(function*() {
      const { keeper } = yield* keeperWith(() => Effect.sleep(Duration.seconds(1)))
      yield* TestClock.adjust(Duration.seconds(3))
      const renewal = yield* Effect.fork(keeper.renew)
      yield* TestClock.adjust(Duration.seconds(1))
      yield* Fiber.join(renewal)
      // Sent at 3 s, answered at 4 s: fresh until 7 s, stale from then on.
      yield* TestClock.adjust(Duration.millis(2_900))
      expect(keeper.guard.fresh()).toBe(true)
      yield* TestClock.adjust(Duration.millis(200))
      expect(keeper.guard.fresh()).toBe(false)
    }))
})
