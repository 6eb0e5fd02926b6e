import { SqlClient } from "@effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ActorClient } from "../../src/actors/runtime/ActorClient.ts"
import { ActorRuntime } from "../../src/actors/runtime/ActorRuntime.ts"
import { partitionOf } from "../../src/actors/runtime/partitioning.ts"
import { Nats } from "../../src/bus/Nats.ts"
import { eventually, useIsolation } from "../support/e2e.ts"
import { startNode, type TestNode } from "../support/nodes.ts"
import { Counter, Remind } from "../support/testKinds.ts"

// A durable timer whose fired command never reached the stream: a NATS server killed as it took
// the publish can keep the message id in the stream's duplicate window and not the message (seen
// with nats-server 2.9 in the cluster fault tests: a webhook retry's timer fired, its command was
// never applied, and the delivery waited forever). Here the id is taken first by another message,
// so the fire is dropped as a duplicate exactly so. The partition finds the timer fired a recheck
// ago, its row still there and its consumer with nothing left to deliver: it fires it again under
// an id of its own, and the command is applied once.

const PARTITIONS = 2
const iso = useIsolation()
let node: TestNode

beforeAll(async () => {
  node = await startNode(iso, { partitions: PARTITIONS, timerRecheckMs: 500 })
  await eventually(async () => {
    const owned = await node.runPromise(Effect.flatMap(ActorRuntime, (r) => r.snapshot))
    if ((owned.counter ?? []).length !== PARTITIONS) throw new Error(JSON.stringify(owned))
  }, { timeoutMs: 20_000 })
})
afterAll(() => node?.dispose())

const run = <A, E>(effect: Effect.Effect<A, E, any>) => node.runPromise(effect as Effect.Effect<A, E, never>)
const query = <R>(f: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<R>, unknown>) => run(Effect.flatMap(SqlClient.SqlClient, f))

describe("a fired timer whose command was lost", () => {
  it("is fired again once its partition has nothing left to deliver, and applied once", async () => {
    const key = "lost-timer"
    await run(Effect.flatMap(ActorClient, (c) => c.send(Counter, key, new Remind({ tag: "lost", afterMs: 3_000 }))))
    const [timer] = await eventually(async () => {
      const rows = await query((sql) => sql<{ timerId: string; at: number }>`
        SELECT timer_id, (extract(epoch FROM fire_at) * 1000)::float8 AS at FROM actor_timers WHERE actor_key = ${key}`)
      expect(rows).toHaveLength(1)
      return rows
    })
    // Another message takes the id the fire will be published under.
    await run(Effect.flatMap(Nats, (nats) =>
      Effect.flatMap(nats.connected, ({ js }) =>
        Effect.promise(() =>
          js.publish(
            nats.names.subject("counter", partitionOf("decoy", PARTITIONS), "decoy"),
            new TextEncoder().encode(JSON.stringify({ _tag: "Add", sender: "decoy", n: 1, amount: 1 })),
            { msgID: `${timer!.timerId}@${timer!.at}` }
          )
        ))))
    const fired = await eventually(async () => {
      const [row] = await query((sql) => sql<{ state: { fired: Array<{ tag: string }> } }>`SELECT state FROM actor_counter WHERE actor_key = ${key}`)
      expect(row?.state.fired.map((f) => f.tag)).toEqual(["lost"])
      return row!.state.fired
    }, { timeoutMs: 30_000, intervalMs: 200 })
    expect(fired).toHaveLength(1)
    await eventually(async () => {
      expect(await query((sql) => sql`SELECT 1 FROM actor_timers WHERE actor_key = ${key}`)).toEqual([])
    })
    // The decoy was applied as what it was, and nothing was applied twice.
    const [decoy] = await query((sql) => sql<{ state: { total: number } }>`SELECT state FROM actor_counter WHERE actor_key = 'decoy'`)
    expect(decoy?.state.total).toBe(1)
  })
})
