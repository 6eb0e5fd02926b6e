import { describe, expect, it } from "@effect/vitest"
import { Clock, Duration, Effect, TestClock } from "effect"
import { SERVICE_WINDOW_MS, windowOpen } from "../../src/whatsapp/PublicMessages.ts"

// The 24-hour customer service window, on a clock the test moves.
describe("service window", () => {
  const lastInbound = new Date("2026-11-24T10:00:00Z")
  const openAt = (elapsed: Duration.DurationInput) =>
    Effect.gen(function*() {
      yield* TestClock.setTime(lastInbound.getTime())
      yield* TestClock.adjust(elapsed)
      return windowOpen(lastInbound, yield* Clock.currentTimeMillis)
    })

  it.effect("is open right after the customer wrote and until just before 24 hours", () =>
    Effect.gen(function*() {
      expect(yield* openAt(Duration.zero)).toBe(true)
      expect(yield* openAt(Duration.hours(23))).toBe(true)
      expect(yield* openAt(Duration.millis(SERVICE_WINDOW_MS - 1))).toBe(true)
    }))

  it.effect("closes at 24 hours and stays closed", () =>
    Effect.gen(function*() {
      expect(yield* openAt(Duration.millis(SERVICE_WINDOW_MS))).toBe(false)
      expect(yield* openAt(Duration.days(3))).toBe(false)
    }))

  it("is closed when the customer never wrote", () => {
    expect(windowOpen(null, Date.now())).toBe(false)
    expect(windowOpen(undefined, Date.now())).toBe(false)
  })
})
