import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { RetentionPolicy, StorageType } from "nats"
import { Nats, NatsLive } from "../../src/bus/Nats.ts"
import { IsolationLive, IsolationTag, TestConfig } from "../support/isolation.ts"

const Env = NatsLive.pipe(Layer.provideMerge(TestConfig()), Layer.provideMerge(IsolationLive))

layer(Env, { timeout: 60_000 })("NATS", (it) => {
  it.effect("names everything under the prefix", () =>
    Effect.gen(function*() {
      const nats = yield* Nats
      const iso = yield* IsolationTag
      expect(nats.names.subject("sender", 3, "bot-1")).toBe(`${iso.natsPrefix}.sender.3.bot-1`)
      expect(nats.names.stream("sender")).toBe(`${iso.natsPrefix.toUpperCase()}_SENDER`)
      expect(nats.names.bucket("leases")).toBe(`${iso.natsPrefix}_leases`)
    }))

  it.effect("creates streams idempotently and reads their config back", () =>
    Effect.gen(function*() {
      const nats = yield* Nats
      const spec = {
        name: nats.names.stream("probe"),
        subjects: [nats.names.subject("probe", ">")],
        retention: RetentionPolicy.Limits,
        storage: StorageType.File,
        duplicate_window: 120_000_000_000
      }
      const first = yield* nats.ensureStream(spec)
      const second = yield* nats.ensureStream(spec)
      expect(first.config.name).toBe(spec.name)
      expect(second.config.duplicate_window).toBe(spec.duplicate_window)
      // A changed subject list is applied to the existing stream.
      const third = yield* nats.ensureStream({ ...spec, subjects: [nats.names.subject("probe", ">"), nats.names.subject("probe2", ">")] })
      expect(third.config.subjects).toHaveLength(2)
      const { js } = yield* nats.connected
      const ack = yield* Effect.promise(() => js.publish(nats.names.subject("probe", "x"), "hello", { msgID: "m1" }))
      const dup = yield* Effect.promise(() => js.publish(nats.names.subject("probe", "x"), "hello", { msgID: "m1" }))
      expect(ack.duplicate).toBe(false)
      expect(dup.duplicate).toBe(true)
    }))

  it.effect("opens KV buckets under the prefix", () =>
    Effect.gen(function*() {
      const nats = yield* Nats
      const kv = yield* nats.kv("probe", { history: 1, ttl: 10_000 })
      const rev = yield* Effect.promise(() => kv.create("k", new TextEncoder().encode("v")))
      expect(rev).toBeGreaterThan(0)
      const status = yield* Effect.promise(() => kv.status())
      expect(status.bucket).toBe(nats.names.bucket("probe"))
    }))

  it.effect("answers a ping when connected", () =>
    Effect.gen(function*() {
      const nats = yield* Nats
      yield* nats.connected
      const rtt = yield* nats.ping
      expect(rtt).toBeGreaterThanOrEqual(0)
    }))
})
