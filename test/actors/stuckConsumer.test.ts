import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber, FiberId, TestClock } from "effect"
import { makeBusNames } from "../../src/bus/BusNames.ts"
import { watchStuckConsumer } from "../../src/actors/runtime/partitionConsumer.ts"
import type { PartitionState } from "../../src/actors/runtime/partitionState.ts"

// A consumer that lost its place (nats-io/nats-server#6469, seen by a cluster fault test on this
// machine's nats-server 2.9.10 after a server was killed): its work-queue stream held commands of
// the partition while the consumer reported none pending and none awaiting an acknowledgement, and
// they were never delivered. The partition's owner deletes such a consumer (the partition is then
// taken again with a new one that delivers everything the stream holds). JetStream's answers are
// stubbed: a work-queue stream refuses a consumer that could be made to skip its messages.

interface World {
  streamMessages: number
  pending: number
  ackPending: number
  held: Record<string, number>
  inflight: number
  deleted: Array<string>
}

const partitionWith = (world: World, lost = Deferred.unsafeMake<string>(FiberId.none)): PartitionState => {
  const names = makeBusNames("t")
  const jsm = {
    streams: {
      info: async (_stream: string, options?: { subjects_filter?: string }) =>
        options?.subjects_filter === undefined ? { state: { messages: world.streamMessages } } : { state: { messages: world.streamMessages, subjects: world.held } }
    },
    consumers: {
      info: async () => ({ num_pending: world.pending, num_ack_pending: world.ackPending }),
      delete: async (_stream: string, durable: string) => {
        world.deleted.push(durable)
        return true
      }
    }
  }
  return {
    env: { bus: { jsm }, names },
    kind: { name: "sender" },
    partition: 3,
    epoch: 7,
    lost,
    get inflight() {
      return world.inflight
    }
  } as unknown as PartitionState
}

const world = (changes: Partial<World>): World => ({ streamMessages: 0, pending: 0, ackPending: 0, held: {}, inflight: 0, deleted: [], ...changes })

describe("the stuck-consumer watch", () => {
  it.scoped("deletes a consumer that reports nothing while its stream holds the partition's commands, after two checks in a row, and drops the partition", () =>
    Effect.gen(function*() {
      const w = world({ streamMessages: 14, held: { "t.sender.3.bot-1": 11 } })
      const lost = yield* Deferred.make<string>()
      const watching = yield* Effect.fork(watchStuckConsumer(partitionWith(w, lost)))
      yield* TestClock.adjust(Duration.seconds(20))
      expect(w.deleted).toEqual([])
      expect(yield* Deferred.isDone(lost)).toBe(false)
      yield* TestClock.adjust(Duration.seconds(20))
      expect(w.deleted).toEqual(["sender_3_e7"])
      // A consume loop outlives its consumer (nats.js waits for it to come back): the partition is
      // dropped, to be taken again with a new consumer.
      expect(yield* Deferred.await(lost)).toContain("lost its place")
      yield* Fiber.join(watching)
    }))

  it.scoped("leaves alone a consumer with work pending or awaiting acknowledgements, and an empty stream", () =>
    Effect.gen(function*() {
      const cases = [
        world({ streamMessages: 5, held: { "t.sender.3.a": 5 }, pending: 5 }),
        world({ streamMessages: 5, held: { "t.sender.3.a": 5 }, ackPending: 5 }),
        world({ streamMessages: 5, held: {} }),
        world({})
      ]
      const fibers = yield* Effect.forEach(cases, (w) => Effect.fork(watchStuckConsumer(partitionWith(w))))
      yield* TestClock.adjust(Duration.minutes(5))
      expect(cases.map((w) => w.deleted)).toEqual([[], [], [], []])
      yield* Effect.forEach(fibers, Fiber.interrupt)
    }))

  it.scoped("a stuck check followed by a healthy one starts counting again", () =>
    Effect.gen(function*() {
      const w = world({ streamMessages: 3, held: { "t.sender.3.a": 3 } })
      const watching = yield* Effect.fork(watchStuckConsumer(partitionWith(w)))
      yield* TestClock.adjust(Duration.seconds(20))
      w.pending = 3
      yield* TestClock.adjust(Duration.seconds(20))
      w.pending = 0
      yield* TestClock.adjust(Duration.seconds(20))
      expect(w.deleted).toEqual([])
      yield* TestClock.adjust(Duration.seconds(20))
      expect(w.deleted).toEqual(["sender_3_e7"])
      yield* Fiber.interrupt(watching)
    }))
})
