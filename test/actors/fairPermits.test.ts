import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { makeFairPermits } from "../../src/actors/runtime/fairPermits.ts"

describe("fair permits", () => {
  it.effect("admits at most n at a time, in arrival order", () =>
    Effect.gen(function*() {
      const permits = yield* makeFairPermits(3)
      const gates = yield* Effect.forEach(Array.from({ length: 10 }), () => Deferred.make<void>())
      const admitted: Array<number> = []
      let running = 0
      let most = 0
      const fibers = yield* Effect.forEach(gates, (gate, i) =>
        Effect.fork(permits.withPermit(Effect.gen(function*() {
          admitted.push(i)
          most = Math.max(most, ++running)
          yield* Deferred.await(gate)
          running--
        }))))
      yield* Effect.yieldNow()
      expect(admitted).toEqual([0, 1, 2])
      // Finishing them in reverse admits the waiters in the order they came.
      for (const i of [2, 1, 0, 9, 8, 7, 6, 5, 4, 3]) {
        yield* Deferred.succeed(gates[i]!, undefined)
        yield* Effect.yieldNow()
      }
      yield* Fiber.joinAll(fibers)
      expect(admitted).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
      expect(most).toBe(3)
    }))

  it.effect("a waiter interrupted before its turn takes no permit, and a failure gives its permit back", () =>
    Effect.gen(function*() {
      const permits = yield* makeFairPermits(1)
      const gate = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(permits.withPermit(Deferred.await(gate)))
      yield* Effect.yieldNow()
      const waiter = yield* Effect.fork(permits.withPermit(Effect.void))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(waiter)
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(holder)
      yield* Effect.flip(permits.withPermit(Effect.fail("boom")))
      expect(yield* permits.withPermit(Effect.succeed("free"))).toBe("free")
    }))
})
