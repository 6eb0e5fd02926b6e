import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Layer, TestClock } from "effect"
import type { BroadcastsRepo as Repo, Counters } from "../../src/broadcasts/BroadcastsRepo.ts"
import { BroadcastsRepo } from "../../src/broadcasts/BroadcastsRepo.ts"
import { PROGRESS_EVERY_MS } from "../../src/broadcasts/chunking.ts"
import { BroadcastProgress } from "../../src/broadcasts/progress.ts"
import { LiveEvents } from "../../src/live/LiveEvents.ts"

// The pacing rule of a broadcast's live progress (src/broadcasts/progress.ts), on the TestClock:
// at most one event per broadcast every PROGRESS_EVERY_MS, and always one after the last change,
// carrying the counters read when it is published.

const counters = (sentCount: number): Counters => ({
  status: "running",
  channel: "rcs",
  skippedCount: 0,
  totalCount: 300,
  sentCount,
  deliveredCount: 0,
  readCount: 0,
  failedCount: 0,
  cancelledCount: 0
})

const harness = Effect.gen(function*() {
  const state = { sent: 0 }
  const published: Array<{ at: number; broadcast: string; sent: number }> = []
  const repo = Layer.succeed(BroadcastsRepo, {
    counters: (_broadcastId: string) => Effect.sync(() => counters(state.sent))
  } as unknown as Repo)
  const live = Layer.succeed(LiveEvents, {
    publish: (_accountId: string, _kind: string, event: { broadcast_id: string; sent_count: number }) =>
      Effect.flatMap(TestClock.currentTimeMillis, (at) => Effect.sync(() => published.push({ at, broadcast: event.broadcast_id, sent: event.sent_count })))
  } as unknown as LiveEvents)
  // Built in the test's scope: the service's pending publications live as long as the test.
  const built = yield* Layer.build(BroadcastProgress.DefaultWithoutDependencies.pipe(Layer.provide(Layer.merge(repo, live))))
  const progress = Context.get(built, BroadcastProgress)
  return { state, published, progress }
})

/** Lets the forked publications run up to the clock's present. */
const settle = Effect.repeatN(Effect.yieldNow(), 10).pipe(Effect.zipRight(TestClock.adjust(Duration.zero)), Effect.zipRight(Effect.repeatN(Effect.yieldNow(), 10)))

describe("broadcast progress", () => {
  it.scoped("a change every 10 ms for 2 s: one event per PROGRESS_EVERY_MS at most, the last with the final counters", () =>
    Effect.gen(function*() {
      const { state, published, progress } = yield* harness
      for (let i = 1; i <= 200; i++) {
        state.sent = i
        yield* progress.changed("acc", "b1")
        yield* TestClock.adjust(Duration.millis(10))
      }
      yield* TestClock.adjust(Duration.millis(PROGRESS_EVERY_MS))
      expect(published.length).toBeGreaterThanOrEqual(2_000 / PROGRESS_EVERY_MS)
      expect(published.length).toBeLessThanOrEqual(2_000 / PROGRESS_EVERY_MS + 1)
      for (let i = 1; i < published.length; i++) {
        expect(published[i]!.at - published[i - 1]!.at).toBeGreaterThanOrEqual(PROGRESS_EVERY_MS)
        expect(published[i]!.sent).toBeGreaterThanOrEqual(published[i - 1]!.sent)
      }
      expect(published.at(-1)!.sent).toBe(200)
    }))

  it.scoped("the first change is published at once; a change inside the window at the window's end, not before", () =>
    Effect.gen(function*() {
      const { state, published, progress } = yield* harness
      state.sent = 1
      yield* progress.changed("acc", "b1")
      yield* settle
      expect(published.map((p) => p.sent)).toEqual([1])
      yield* TestClock.adjust(Duration.millis(50))
      state.sent = 5
      yield* progress.changed("acc", "b1")
      yield* TestClock.adjust(Duration.millis(PROGRESS_EVERY_MS - 60))
      expect(published.length).toBe(1)
      state.sent = 7
      yield* TestClock.adjust(Duration.millis(10))
      expect(published.map((p) => [p.at, p.sent])).toEqual([[0, 1], [PROGRESS_EVERY_MS, 7]])
    }))

  it.scoped("broadcasts are paced apart: one's window does not hold back another's event", () =>
    Effect.gen(function*() {
      const { published, progress } = yield* harness
      yield* progress.changed("acc", "b1")
      yield* progress.changed("acc", "b2")
      yield* settle
      expect(published.map((p) => p.broadcast).sort()).toEqual(["b1", "b2"])
    }))
})
