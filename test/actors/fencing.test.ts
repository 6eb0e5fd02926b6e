import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Either, Fiber, Layer } from "effect"
import { emptyWrite, ensureStateTable, makeCommitter, makeKindCommitter } from "../../src/actors/runtime/committer.ts"
import { SqlLive } from "../../src/storage/Database.ts"
import { Storage } from "../../src/storage/Migrations.ts"
import { IsolationLive, TestConfig } from "../support/isolation.ts"

const Env = Layer.mergeAll(SqlLive, Storage.Default.pipe(Layer.provide(SqlLive))).pipe(
  Layer.provideMerge(TestConfig()),
  Layer.provideMerge(IsolationLive)
)

const KIND = "fenced"
const TABLE = "actor_fenced"

/** What a new owner does on acquisition (ActorRuntime.acquire): raise the partition's epoch. */
const raiseEpoch = (epoch: number, partition = 0) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`
      INSERT INTO partition_epochs (kind, partition, epoch, owner) VALUES (${KIND}, ${partition}, ${epoch}, 'new-owner')
      ON CONFLICT (kind, partition) DO UPDATE SET epoch = GREATEST(partition_epochs.epoch + 1, excluded.epoch), owner = excluded.owner`)

const stateOf = (key: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ state: unknown; lastSeq: string }>`SELECT state, last_seq FROM ${sql(TABLE)} WHERE actor_key = ${key}`)

const write = (key: string, seq: number, state: unknown) => Object.assign(emptyWrite(key, seq), { state })

layer(Env, { timeout: 60_000, excludeTestServices: true })("fencing", (it) => {
  it.scoped("a write from an owner whose epoch was superseded is rejected", () =>
    Effect.gen(function*() {
      yield* (yield* Storage).awaitReady
      yield* ensureStateTable(TABLE)
      yield* raiseEpoch(10)
      const old = yield* makeCommitter({ kind: KIND, table: TABLE, partition: 0, epoch: 10 })
      yield* old.commit([write("a", 1, { v: "from epoch 10" })])
      expect((yield* stateOf("a"))[0]!.state).toEqual({ v: "from epoch 10" })

      yield* raiseEpoch(11)
      const rejected = yield* Effect.either(old.commit([write("a", 2, { v: "stale" })]))
      expect(Either.isLeft(rejected) && rejected.left._tag).toBe("FencedOut")
      expect((yield* stateOf("a"))[0]).toMatchObject({ state: { v: "from epoch 10" }, lastSeq: "1" })

      const current = yield* makeCommitter({ kind: KIND, table: TABLE, partition: 0, epoch: 11 })
      yield* current.commit([write("a", 2, { v: "from epoch 11" })])
      expect((yield* stateOf("a"))[0]!.state).toEqual({ v: "from epoch 11" })
    }))

  it.scoped("a paused owner holding a transaction across a lease change commits before the raise, never after", () =>
    Effect.gen(function*() {
      yield* (yield* Storage).awaitReady
      yield* ensureStateTable(TABLE)
      yield* raiseEpoch(20)
      const paused = yield* makeCommitter({ kind: KIND, table: TABLE, partition: 0, epoch: 20 })
      const timeline: Array<string> = []
      // The old owner's transaction passes the fence, then stalls (a GC pause, a slow disk).
      const stalled = Object.assign(write("b", 1, { v: "paused owner" }), {
        persist: [Effect.zipRight(Effect.sleep(Duration.millis(800)), Effect.sync(() => timeline.push("paused owner writes")))]
      })
      const oldCommit = yield* Effect.fork(Effect.zipRight(paused.commit([stalled]), Effect.sync(() => timeline.push("paused owner committed"))))
      yield* Effect.sleep(Duration.millis(200))
      // Meanwhile its lease lapsed and a new owner raises the epoch: that waits for the share lock.
      const raise = yield* Effect.fork(Effect.zipRight(raiseEpoch(21), Effect.sync(() => timeline.push("new owner raised epoch"))))
      yield* Fiber.join(oldCommit)
      yield* Fiber.join(raise)
      // The raise waited for the paused transaction to finish: it cannot end before that
      // transaction's last write. Which of the two clients hears back first after the commit is
      // up to the event loop, so the order of the last two entries is not asserted.
      expect(timeline).toHaveLength(3)
      expect(timeline[0]).toBe("paused owner writes")
      expect(timeline).toContain("paused owner committed")
      // From now on the paused owner cannot write.
      const late = yield* Effect.either(paused.commit([write("b", 2, { v: "too late" })]))
      expect(Either.isLeft(late) && late.left._tag).toBe("FencedOut")
      expect((yield* stateOf("b"))[0]!.state).toEqual({ v: "paused owner" })
    }))

  it.scoped("in one transaction of several partitions, a fenced-out partition fails alone and the others are written", () =>
    Effect.gen(function*() {
      yield* (yield* Storage).awaitReady
      yield* ensureStateTable(TABLE)
      yield* raiseEpoch(30, 1)
      yield* raiseEpoch(40, 2)
      // One committer fiber: both submissions, offered together, share a transaction.
      const shared = yield* makeKindCommitter({ kind: KIND, table: TABLE, concurrency: 1 })
      const [current, stale] = yield* Effect.all([
        Effect.either(shared.commit({ partition: 1, epoch: 30 }, [write("p1", 1, { v: "current owner" })])),
        Effect.either(shared.commit({ partition: 2, epoch: 39 }, [write("p2", 1, { v: "old owner" })]))
      ], { concurrency: "unbounded" })
      expect(Either.isRight(current!)).toBe(true)
      expect(Either.isLeft(stale!) && stale.left._tag).toBe("FencedOut")
      expect((yield* stateOf("p1"))[0]!.state).toEqual({ v: "current owner" })
      expect(yield* stateOf("p2")).toEqual([])
    }))
})
