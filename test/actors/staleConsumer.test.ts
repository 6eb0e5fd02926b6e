import { SqlClient } from "@effect/sql"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { connect, type ConsumerInfo, type JsMsg, type NatsConnection } from "nats"
import { ActorClient } from "../../src/actors/runtime/ActorClient.ts"
import { ActorRuntime } from "../../src/actors/runtime/ActorRuntime.ts"
import { makeBusNames } from "../../src/bus/BusNames.ts"
import { eventually, useIsolation } from "../support/e2e.ts"
import { settingsFor } from "../support/isolation.ts"
import { startNode, type TestNode } from "../support/nodes.ts"
import { Add, Counter } from "../support/testKinds.ts"

// A paused old owner's consume loop outlives its partition: woken up, nats.js asks its consumer's
// info by name and pulls again (its idle-heartbeat reset). When the next owner used the same
// consumer name, that pull took commands from the new owner's consumer; the old owner applied
// them, its commit was fenced out, and they stayed unacknowledged for the ack wait while the new
// owner applied the actor's later commands. Back again, they were at or below the actor's
// last_seq and skipped as applied: an accepted command lost (an RCS send answered
// send_unconfirmed whose message row never existed). Here a second NATS connection stands for
// that stale loop: it pulls with the consumer name the previous owner used, and does not ack.

const iso = useIsolation()
const names = makeBusNames(settingsFor(iso).natsPrefix)
const stream = names.stream("counter")
const filter = names.subject("counter", 0, ">")
const KEY = "held-by-stale"

let node: TestNode | undefined
let stale: NatsConnection | undefined
afterAll(async () => {
  await node?.dispose()
  await stale?.close()
})

/** Starts a node, which owns the single partition once it is the only node. */
const owner = async () => {
  const started = await startNode(iso, { partitions: 1 })
  await eventually(async () => {
    const owned = await started.runPromise(Effect.flatMap(ActorRuntime, (r) => r.snapshot))
    if ((owned.counter ?? []).length !== 1) throw new Error(JSON.stringify(owned))
  }, { timeoutMs: 20_000 })
  return started
}

const consumersOfPartition = async (nc: NatsConnection) => {
  const found: Array<ConsumerInfo> = []
  for await (const info of (await nc.jetstreamManager()).consumers.list(stream)) if (info.config.filter_subject === filter) found.push(info)
  return found
}

const send = (n: number, amount: number) =>
  node!.runPromise(Effect.flatMap(ActorClient, (c) => c.send(Counter, KEY, new Add({ sender: "s", n, amount }))))

const stateOf = () =>
  node!.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ state: any }>`SELECT state FROM actor_counter WHERE actor_key = ${KEY}`)).then((rows) => rows[0]?.state)

describe("a previous owner's consumer name", () => {
  it("pulls nothing from the next owner: a command it would hold is applied, in order", async () => {
    node = await owner()
    stale = await connect({ servers: [...settingsFor(iso).natsServers] })
    const [previous] = await consumersOfPartition(stale)
    expect(previous).toBeDefined()
    // The previous owner goes; its loop (the second connection here) keeps the consumer's name
    // and pulls with it again.
    await node.dispose()
    const consumer = await stale.jetstream().consumers.get(stream, previous!.name)
    const pulled: Array<JsMsg> = []
    const staleLoop = (async () => {
      for await (const message of await consumer.fetch({ max_messages: 1, expires: 30_000 })) pulled.push(message)
    })().catch(() => undefined)

    node = await owner()
    await send(1, 1)
    // The stale pull took c1 (without acknowledging it) or ended without a message.
    await staleLoop
    await send(2, 10)
    await eventually(async () => expect((await stateOf())?.count).toBeGreaterThanOrEqual(1))

    // Whatever was held comes back: the partition is taken again by a third owner.
    await node.dispose()
    node = await owner()
    await eventually(async () => {
      const info = await (await stale!.jetstreamManager()).streams.info(stream)
      expect(info.state.messages).toBe(0)
    }, { timeoutMs: 20_000 })
    const state = await stateOf()
    expect(state.violations, "every command applied once, in order").toEqual([])
    expect({ total: state.total, count: state.count }).toEqual({ total: 11, count: 2 })
    expect(pulled.map((m) => m.seq), "the stale loop pulled nothing").toEqual([])
    // What nats.js asks before it pulls again: the consumer by the name the loop knows.
    await expect(stale.jetstream().consumers.get(stream, previous!.name)).rejects.toThrow(/consumer not found/)
  }, 90_000)
})
