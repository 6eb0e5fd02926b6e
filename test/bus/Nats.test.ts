import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Either, Fiber, Layer, Option } from "effect"
import { RetentionPolicy, StorageType } from "nats"
import { Nats, NatsLive } from "../../src/bus/Nats.ts"
import { makeLeases } from "../../src/actors/runtime/leases.ts"
import { IsolationLive, IsolationTag, TestConfig } from "../support/isolation.ts"

const Env = NatsLive.pipe(Layer.provideMerge(TestConfig()), Layer.provideMerge(IsolationLive))
/** A node asking for three replicas of everything, against the suite's single NATS server. */
const ThreeReplicas = NatsLive.pipe(Layer.provideMerge(TestConfig({ natsReplicas: 3 })), Layer.provideMerge(IsolationLive))

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

  it.effect("a lease renewal whose answer was lost is recognised as the holder's own, not as a loss", () =>
    Effect.gen(function*() {
      const nats = yield* Nats
      const leases = makeLeases(yield* nats.kv("lease-probe", { history: 1, ttl: 10_000 }), "node-a")
      const lease = (yield* leases.acquire("sender", 1))!
      const acquired = lease.revision
      yield* leases.renew(lease)
      // The answer of that renewal "never came": the node still believes the older revision.
      lease.revision = acquired
      const renewed = yield* leases.renew(lease)
      expect(renewed).toBeGreaterThan(acquired)
      // Another node's write is still a loss.
      const other = makeLeases(yield* nats.kv("lease-probe", { history: 1, ttl: 10_000 }), "node-b")
      const kv = yield* nats.kv("lease-probe", { history: 1, ttl: 10_000 })
      yield* Effect.promise(() => kv.put("sender.1", new TextEncoder().encode(JSON.stringify({ node: "node-b", acquired_at: new Date().toISOString(), write: "node-b:1" }))))
      const lost = yield* Effect.either(leases.renew(lease))
      expect(Either.isLeft(lost) && lost.left._tag).toBe("LeaseLost")
      void other
    }))

  it.effect("a lease released after a renewal whose answer it has not seen is still given back (the next owner need not wait for its lifetime)", () =>
    Effect.gen(function*() {
      const nats = yield* Nats
      const kv = yield* nats.kv("lease-release", { history: 1, ttl: 10_000 })
      const leases = makeLeases(kv, "node-a")
      const lease = (yield* leases.acquire("mailer", 5))!
      const acquired = lease.revision
      // A renewal in flight when the hand-off releases (or one whose answer was lost): the entry is
      // at a later revision than the one the node knows.
      yield* leases.renew(lease)
      lease.revision = acquired
      yield* leases.release(lease)
      expect(yield* Effect.promise(() => kv.get("mailer.5")).pipe(Effect.map((e) => e === null || e.operation !== "PUT"))).toBe(true)
      // Another node can take it at once.
      expect(yield* makeLeases(kv, "node-b").acquire("mailer", 5)).toBeDefined()
      // A lease someone else holds now is never released by its former holder.
      lease.revision = acquired
      yield* leases.release(lease)
      const held = yield* Effect.promise(() => kv.get("mailer.5"))
      expect(held?.operation).toBe("PUT")
      expect(JSON.parse(new TextDecoder().decode(held!.value)).node).toBe("node-b")
    }))
})

// Real time: a publish's budget is wall-clock time (the TestClock would never let it pass).
layer(Env, { timeout: 60_000, excludeTestServices: true })("NATS publishes through a leader election", (it) => {
  it.effect("a publish with no stream to take it yet (a leader being elected) is retried with its id until one does", () =>
    Effect.gen(function*() {
      const nats = yield* Nats
      const subject = nats.names.subject("election", "k")
      const publishing = yield* Effect.fork(nats.publish(subject, new TextEncoder().encode("command"), { msgID: "election-1", budget: Duration.seconds(8) }))
      // Nobody answers for a while: JetStream's "no responders", as while a stream has no leader.
      yield* Effect.sleep(Duration.millis(700))
      expect(publishing.unsafePoll()).toBeNull()
      yield* nats.ensureStream({ name: nats.names.stream("election"), subjects: [nats.names.subject("election", ">")], storage: StorageType.File })
      const ack = yield* Fiber.join(publishing)
      expect(ack.seq).toBe(1)
      // The same id again is the same command: dropped as a duplicate, not stored twice.
      const again = yield* nats.publish(subject, new TextEncoder().encode("command"), { msgID: "election-1" })
      expect(again.duplicate).toBe(true)
    }))

  it.effect("a publish that finds no stream within its budget fails as unavailable (a 503 at the edge), never silently", () =>
    Effect.gen(function*() {
      const nats = yield* Nats
      const started = Date.now()
      const outcome = yield* Effect.either(nats.publish(nats.names.subject("nowhere", "k"), new Uint8Array(), { msgID: "n-1", budget: Duration.millis(800) }))
      expect(Either.isLeft(outcome) && outcome.left._tag).toBe("NatsUnavailable")
      expect(Date.now() - started).toBeGreaterThanOrEqual(700)
    }))
})

layer(ThreeReplicas, { timeout: 60_000 })("NATS with more replicas than servers", (it) => {
  it.effect("a stream NATS cannot place is refused, and the reason names HERALD_NATS_REPLICAS", () =>
    Effect.gen(function*() {
      const nats = yield* Nats
      expect(nats.replicas).toBe(3)
      const created = yield* Effect.either(nats.ensureStream({ name: nats.names.stream("placed"), subjects: [nats.names.subject("placed", ">")] }))
      expect(Either.isLeft(created)).toBe(true)
      const problem = yield* nats.placementProblem
      expect(Option.getOrThrow(problem)).toMatch(/^HERALD_NATS_REPLICAS=3: NATS cannot hold 3 replicas of stream .*PLACED/)
      const bucket = yield* Effect.either(nats.kv("placed"))
      expect(Either.isLeft(bucket)).toBe(true)
    }))
})
