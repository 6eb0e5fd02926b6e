import { SqlClient } from "@effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { ActorClient } from "../../src/actors/runtime/ActorClient.ts"
import { partitionOf } from "../../src/actors/runtime/partitioning.ts"
import { awaitApplied, awaitFullOwnership, sendWave } from "../support/cluster.ts"
import { eventually, useIsolation } from "../support/e2e.ts"
import { startNode, type TestNode } from "../support/nodes.ts"
import { Counter, Remind, Total } from "../support/testKinds.ts"
import { ownership, startWorker, type Worker } from "../support/workers.ts"

const iso = useIsolation()
const PARTITIONS = 8
let client: TestNode
const workers: Array<Worker> = []

beforeAll(async () => {
  client = await startNode(iso, { role: "api", partitions: PARTITIONS })
})

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill()))
  await client?.dispose()
})

const live = () => workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null)

describe("kill -9 of a worker", () => {
  it("loses and doubles nothing of 20,000 commands, and its partitions are owned again within 10 s", async () => {
    workers.push(...(await Promise.all(["c1", "c2", "c3"].map((id) => startWorker(iso, id)))))
    await awaitFullOwnership(workers, "counter", PARTITIONS)
    const wave = sendWave(client, { senders: 5, keys: 200, perKey: 20, wave: "x" })
    // Let commands flow, then kill the node that owns the most partitions.
    await eventually(async () => {
      const rows = await client.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT coalesce(sum((state->>'count')::int), 0)::int AS n FROM actor_counter`))
      if (rows[0]!.n < 5_000) throw new Error("not flowing yet")
    }, { timeoutMs: 30_000, intervalMs: 50 })
    const { reports } = await ownership(workers, "counter")
    const victim = workers.reduce((a, b) => ((reports[a.nodeId]?.length ?? 0) >= (reports[b.nodeId]?.length ?? 0) ? a : b))
    const orphaned = reports[victim.nodeId]!.length
    expect(orphaned).toBeGreaterThan(0)
    const killedAt = Date.now()
    await victim.kill()
    const { at } = await awaitFullOwnership(live(), "counter", PARTITIONS, 15_000)
    expect(at - killedAt).toBeLessThan(10_000)
    await wave
    const rows = await awaitApplied(client, 20_000, 120_000)
    expect(rows).toHaveLength(200)
    for (const row of rows) {
      // A duplicate or a gap shows up as a violation of a sender's sequence.
      expect(row.state.violations, row.actorKey).toEqual([])
      expect(row.state.count, row.actorKey).toBe(100)
    }
    const total = rows.reduce((n, r) => n + r.state.count, 0)
    expect(total).toBe(20_000)
  }, 180_000)

  it("a timer scheduled 2 s ahead fires on another node after its owner is killed", async () => {
    await awaitFullOwnership(live(), "counter", PARTITIONS)
    const key = "timer-key"
    const partition = partitionOf(key, PARTITIONS)
    const { reports } = await ownership(live(), "counter")
    const owner = live().find((w) => reports[w.nodeId]?.includes(partition))!
    await client.runPromise(Effect.flatMap(ActorClient, (c) => c.send(Counter, key, new Remind({ tag: "late", afterMs: 2_000 }))))
    await eventually(async () => {
      const rows = await client.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM actor_timers WHERE actor_key = ${key}`))
      if (rows[0]!.n !== 1) throw new Error("timer not written yet")
    })
    await owner.kill()
    const fired = await eventually(async () => {
      const rows = await client.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ state: any }>`SELECT state FROM actor_counter WHERE actor_key = ${key}`))
      const f = rows[0]?.state.fired ?? []
      if (f.length === 0) throw new Error("not fired yet")
      return f
    }, { timeoutMs: 20_000 })
    expect(fired).toHaveLength(1)
    expect(fired[0].node).not.toBe(owner.nodeId)
    // It fires once the lease lapsed (about 6 s) and a survivor took the partition.
    expect(fired[0].at - fired[0].dueAt).toBeLessThan(10_000)
  }, 60_000)

  it("an ask with no owner times out with a typed error, and succeeds after failover", async () => {
    // Leave a single worker, then kill it: nobody owns anything.
    for (const w of live().slice(1)) await w.stop()
    const [last] = live()
    await awaitFullOwnership([last!], "counter", PARTITIONS)
    await client.runPromise(Effect.flatMap(ActorClient, (c) => c.ask(Counter, "asked", new Total())))
    await last!.kill()
    const orphan = await client.runPromise(Effect.flatMap(ActorClient, (c) => Effect.either(c.ask(Counter, "asked", new Total(), { timeout: "1500 millis" }))))
    expect(Either.isLeft(orphan) && orphan.left._tag).toBe("AskTimeout")
    workers.push(await startWorker(iso, "c4"))
    const answer = await eventually(
      () => client.runPromise(Effect.flatMap(ActorClient, (c) => c.ask(Counter, "asked", new Total(), { timeout: "3 seconds" }))),
      { timeoutMs: 30_000 }
    )
    expect(answer).toEqual({ total: 0, count: 0 })
  }, 90_000)
})
