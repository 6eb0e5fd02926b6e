import { describe, expect, it } from "@effect/vitest"
import { Clock, Duration, Effect, TestClock } from "effect"
import { Webhook } from "standardwebhooks"
import { signatureHeader } from "../../src/webhooks/Dispatcher.ts"
import { newSecret } from "../../src/webhooks/Webhooks.ts"
import { SECRET_OVERLAP_DEFAULT_MS } from "../../src/webhooks/secretRotation.ts"

// The webhook-signature header around a rotation, on the TestClock: both secrets sign for the
// default 24 hours after the rotation, the new one alone from then on.

const body = JSON.stringify({ type: "webhook.test", data: { n: 1 } })
const deliveryId = "wd_00000000-0000-4000-8000-000000000001"
const oldSecret = newSecret()
const newOne = newSecret()
const signedWith = (secret: string, at: number) => new Webhook(secret).sign(deliveryId, new Date(at), body)

describe("signatureHeader", () => {
  it("is one v1 signature under the secret when the endpoint was never rotated", () => {
    const header = signatureHeader({ deliveryId, secret: oldSecret, previous: undefined, body }, 1_700_000_000_000)
    expect(header).toBe(signedWith(oldSecret, 1_700_000_000_000))
    expect(header).toMatch(/^v1,[A-Za-z0-9+/=]+$/)
  })

  it.effect("carries both secrets' signatures, new first, until 24 hours after the rotation, then the new one's alone", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(1_700_000_000_000)
      const rotatedAt = yield* Clock.currentTimeMillis
      const job = { deliveryId, secret: newOne, previous: { secret: oldSecret, until: rotatedAt + SECRET_OVERLAP_DEFAULT_MS }, body }

      for (const after of [Duration.zero, Duration.hours(1), Duration.millis(SECRET_OVERLAP_DEFAULT_MS - 1)]) {
        yield* TestClock.setTime(rotatedAt + Duration.toMillis(after))
        const now = yield* Clock.currentTimeMillis
        const values = signatureHeader(job, now).split(" ")
        expect(values).toEqual([signedWith(newOne, now), signedWith(oldSecret, now)])
        // Each verifies with its own secret only.
        expect(values[0]).not.toBe(signedWith(oldSecret, now))
      }

      yield* TestClock.adjust(Duration.millis(1))
      const at24h = yield* Clock.currentTimeMillis
      expect(at24h - rotatedAt).toBe(SECRET_OVERLAP_DEFAULT_MS)
      expect(signatureHeader(job, at24h)).toBe(signedWith(newOne, at24h))
      yield* TestClock.adjust(Duration.days(3))
      const later = yield* Clock.currentTimeMillis
      expect(signatureHeader(job, later)).toBe(signedWith(newOne, later))
    }))

  it("verifies with the standardwebhooks package under either secret while both sign", () => {
    const now = Date.now()
    const header = signatureHeader({ deliveryId, secret: newOne, previous: { secret: oldSecret, until: now + 60_000 }, body }, now)
    const headers = { "webhook-id": deliveryId, "webhook-timestamp": String(Math.floor(now / 1000)), "webhook-signature": header }
    expect(new Webhook(newOne).verify(body, headers)).toEqual(JSON.parse(body))
    expect(new Webhook(oldSecret).verify(body, headers)).toEqual(JSON.parse(body))
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow()
  })
})
