import { SqlClient } from "@effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { headers as natsHeaders } from "nats"
import { ActorClient } from "../../src/actors/runtime/ActorClient.ts"
import { ActorRuntime } from "../../src/actors/runtime/ActorRuntime.ts"
import { assignBatches, Outbox } from "../../src/actors/runtime/outbox.ts"
import { partitionOf } from "../../src/actors/runtime/partitioning.ts"
import { PoisonQueue } from "../../src/actors/runtime/poison.ts"
import { encodeBatch, POSITIONS_PER_MESSAGE } from "../../src/actors/runtime/streamCommand.ts"
import { Header } from "../../src/actors/runtime/transport.ts"
import { Nats } from "../../src/bus/Nats.ts"
import { eventually, useIsolation } from "../support/e2e.ts"
import { startNode, type TestNode } from "../support/nodes.ts"
import { Add, Counter, Explode, HoldFor, holdTries, Total } from "../support/testKinds.ts"

// Many commands per JetStream message (docs/actors.md, Outbox): the relay packs rows of one
// partition into one message, the partition splits it, each command has its own position.

const PARTITIONS = 4
const iso = useIsolation()
let node: TestNode

const owningAll = async (n: TestNode) =>
  eventually(async () => {
    const owned = await n.runPromise(Effect.flatMap(ActorRuntime, (r) => r.snapshot))
    if ((owned.counter ?? []).length !== PARTITIONS) throw new Error(JSON.stringify(owned))
  }, { timeoutMs: 30_000 })

beforeAll(async () => {
  node = await startNode(iso, { partitions: PARTITIONS })
  await owningAll(node)
  await node.runPromise(Effect.flatMap(ActorClient, (c) => c.ensureKind(Counter)))
})
afterAll(() => node?.dispose())

const run = <A, E>(effect: Effect.Effect<A, E, any>) => node.runPromise(effect as Effect.Effect<A, E, never>)
const query = <R extends object>(text: string, values: ReadonlyArray<unknown> = []) =>
  run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<R>(text, values as Array<any>)))

/** `n` keys with `prefix` that fall in partition `partition`. */
const keysIn = (prefix: string, partition: number, n: number) => {
  const keys: Array<string> = []
  for (let i = 0; keys.length < n; i++) if (partitionOf(`${prefix}${i}`, PARTITIONS) === partition) keys.push(`${prefix}${i}`)
  return keys
}

const subjectOf = (key: string) => `${iso.natsPrefix}.counter.${partitionOf(key, PARTITIONS)}.${key}`
const stream = `${iso.natsPrefix.toUpperCase()}_COUNTER`
const lastStreamSeq = () => run(Effect.flatMap(Nats, (n) => Effect.flatMap(n.connected, ({ jsm }) => Effect.promise(() => jsm.streams.info(stream))))).then((i) => i.state.last_seq)
const streamMessages = () => run(Effect.flatMap(Nats, (n) => Effect.flatMap(n.connected, ({ jsm }) => Effect.promise(() => jsm.streams.info(stream))))).then((i) => i.state.messages)

/** Publishes a batch message as the relay would. */
const publishBatch = (entries: ReadonlyArray<{ key: string; command: unknown }>, msgId: string) =>
  run(Effect.flatMap(Nats, (n) =>
    Effect.flatMap(n.connected, ({ js }) =>
      Effect.promise(() => {
        const h = natsHeaders()
        h.set(Header.batch, String(entries.length))
        return js.publish(subjectOf(entries[0]!.key), encodeBatch(entries.map((e) => ({ key: e.key, payload: e.command, headers: null }))), { msgID: msgId, headers: h })
      }))))

const stateOf = (key: string) =>
  query<{ state: any; lastSeq: string }>(`SELECT state, last_seq FROM actor_counter WHERE actor_key = $1`, [key]).then((rows) => rows[0])

const total = (key: string) => run(Effect.flatMap(ActorClient, (c) => c.ask(Counter, key, new Total(), { timeout: "10 seconds" })))

const add = (sender: string, n: number, amount: number) => ({ _tag: "Add", sender, n, amount })

describe("batches of commands in one message", () => {
  it("assigns rows to batches per partition, bounded, in order", () => {
    const rows = [
      { outboxId: "1", subject: "p.k.0.a", bytes: 10 },
      { outboxId: "2", subject: "p.k.1.b", bytes: 10 },
      { outboxId: "3", subject: "p.k.0.c", bytes: 10 },
      { outboxId: "4", subject: "p.k.0.d", bytes: 1_000 },
      { outboxId: "5", subject: "p.k.1.e", bytes: 10 }
    ]
    expect(assignBatches(rows, 10_000)).toEqual(["1", "2", "1", "1", "2"])
    // A row that would take a batch past the bytes allowed starts the next one.
    expect(assignBatches(rows, 500)).toEqual(["1", "2", "1", "4", "2"])
  })

  it("the relay packs the outbox rows of one partition into one message; each command is applied once", async () => {
    const keys = keysIn("relayed", 1, 6)
    const before = await lastStreamSeq()
    await run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.flatMap(Outbox, (o) =>
        o.enqueueMany(Counter, keys.flatMap((key) => [1, 2].map((n) => ({ key, command: new Add({ sender: "relay", n, amount: n }) }))))
      ).pipe(sql.withTransaction)))
    await run(Effect.flatMap(Outbox, (o) => o.nudge))
    for (const key of keys) {
      await eventually(async () => {
        const s = await stateOf(key)
        if (s?.state.count !== 2) throw new Error(JSON.stringify(s))
      })
    }
    const states = await Promise.all(keys.map(stateOf))
    for (const s of states) {
      expect(s!.state).toMatchObject({ total: 3, count: 2, violations: [] })
    }
    // All twelve commands travelled in one message: one stream sequence, distinct positions.
    expect(await lastStreamSeq()).toBe(before + 1)
    const positions = states.map((s) => Number(s!.lastSeq))
    expect(new Set(positions.map((p) => Math.floor(p / POSITIONS_PER_MESSAGE)))).toEqual(new Set([before + 1]))
    expect(new Set(positions).size).toBe(keys.length)
    const pending = await query<{ n: number }>(`SELECT count(*)::int AS n FROM actor_outbox WHERE published_at IS NULL`)
    expect(pending[0]!.n).toBe(0)
    await eventually(async () => expect(await streamMessages()).toBe(0))
  })

  it("a relay that died between publishing a batch and marking it publishes the same batch again, which is deduplicated", async () => {
    const keys = keysIn("crashed", 2, 3)
    const commands = keys.map((key) => ({ key, command: add("relay", 1, 5) }))
    const before = await lastStreamSeq()
    // What the dead relay left: its rows, assigned to a batch named by the first one's id (that
    // assignment was committed), and the batch it published before dying, not marked.
    const ids = (await query<{ id: string }>(`SELECT nextval('actor_outbox_outbox_id_seq')::text AS id FROM generate_series(1, $1)`, [commands.length])).map((r) => r.id)
    await publishBatch(commands, `herald-outbox-batch:${ids[0]}`)
    await query(
      `INSERT INTO actor_outbox (outbox_id, subject, msg_id, payload, batch)
       SELECT id, s, 'crashed-' || id, p::jsonb, $4 FROM unnest($1::bigint[], $2::text[], $3::text[]) AS t(id, s, p)`,
      [ids, commands.map((c) => subjectOf(c.key)), commands.map((c) => JSON.stringify(c.command)), ids[0]]
    )
    await eventually(async () => {
      const pending = await query<{ n: number }>(`SELECT count(*)::int AS n FROM actor_outbox WHERE published_at IS NULL`)
      if (pending[0]!.n !== 0) throw new Error(`${pending[0]!.n} rows pending`)
    })
    // One message: the re-publish was dropped as a duplicate.
    expect(await lastStreamSeq()).toBe(before + 1)
    for (const key of keys) expect(await total(key)).toEqual({ total: 5, count: 1 })
  })

  it("a batch redelivered after part of it was applied applies nothing twice", async () => {
    const [a, b] = keysIn("partial", 3, 2)
    const before = await lastStreamSeq()
    // Entry 0 of the next message was applied and committed, the message never acknowledged.
    await query(
      `INSERT INTO actor_counter (actor_key, partition, state, last_seq) VALUES ($1, 3, $2::jsonb, $3)`,
      [a, JSON.stringify({ total: 100, count: 1, lastBySender: { s: 1 }, violations: [], flakyTries: 0, fired: [], notes: [] }), (before + 1) * POSITIONS_PER_MESSAGE]
    )
    await publishBatch([{ key: a!, command: add("s", 1, 100) }, { key: b!, command: add("s", 1, 7) }, { key: a!, command: add("s", 2, 1) }], `partial-${iso.id}`)
    await eventually(async () => {
      if ((await stateOf(a!))?.state.count !== 2) throw new Error("not yet")
    })
    expect(await total(a!)).toEqual({ total: 101, count: 2 })
    expect(await total(b!)).toEqual({ total: 7, count: 1 })
    expect((await stateOf(a!))!.state.violations).toEqual([])
    await eventually(async () => expect(await streamMessages()).toBe(0))
  })

  it("a poison command inside a batch is parked alone; the others apply and the message is acknowledged", async () => {
    const [a, b, c] = keysIn("poisoned", 0, 3)
    await publishBatch([
      { key: a!, command: add("s", 1, 1) },
      { key: b!, command: { _tag: "Explode", mode: "fail" } satisfies typeof Explode.Encoded },
      { key: b!, command: add("s", 1, 2) },
      { key: c!, command: { _tag: "NoSuchCommand" } },
      { key: c!, command: add("s", 1, 3) }
    ], `poisoned-${iso.id}`)
    await eventually(async () => {
      const parked = await run(Effect.flatMap(PoisonQueue, (q) => q.list({ kind: "counter" })))
      if (parked.filter((p) => p.actorKey === b || p.actorKey === c).length !== 2) throw new Error(JSON.stringify(parked))
    })
    expect(await total(a!)).toEqual({ total: 1, count: 1 })
    expect(await total(b!)).toEqual({ total: 2, count: 1 })
    expect(await total(c!)).toEqual({ total: 3, count: 1 })
    const parked = (await run(Effect.flatMap(PoisonQueue, (q) => q.list({ kind: "counter" })))).filter((p) => p.actorKey === b || p.actorKey === c)
    expect(new Set(parked.map((p) => p.seq)).size).toBe(2)
    expect(parked.find((p) => p.actorKey === b)).toMatchObject({ attempts: 3, command: { _tag: "Explode" } })
    expect(parked.find((p) => p.actorKey === c)!.error).toContain("undecodable")
    await eventually(async () => expect(await streamMessages()).toBe(0))
  })

  it("a batch held open when its node stops comes again to the next owner, which applies only what was not committed", async () => {
    const [a, h, b] = keysIn("handoff", 1, 3)
    // The hold never resumes on the first try (its batch stays unacknowledged), at once on the second.
    // Its deadline is what the node's stop waits for (below): long enough that it cannot pass
    // before the stop, however slow the machine, and no longer.
    const hold = { _tag: "HoldFor", amount: 9, deadlineMs: 20_000, resumeAfterMs: [null, 10], continuationFails: 0 } satisfies typeof HoldFor.Encoded
    await publishBatch([{ key: a!, command: add("s", 1, 1) }, { key: h!, command: hold }, { key: b!, command: add("s", 1, 2) }], `handoff-${iso.id}`)
    await eventually(async () => {
      if ((await stateOf(b!))?.state.count !== 1 || holdTries.get(h!) !== 1) throw new Error("not yet")
    })
    expect(await streamMessages()).toBe(1)
    // (A node stopping with a held command waits for the hold's deadline before it is gone.)
    await node.dispose()
    node = await startNode(iso, { partitions: PARTITIONS })
    await owningAll(node)
    await eventually(async () => {
      if ((await stateOf(h!))?.state.total !== 9) throw new Error("not yet")
    }, { timeoutMs: 30_000 })
    expect(holdTries.get(h!)).toBe(2)
    expect(await total(a!)).toEqual({ total: 1, count: 1 })
    expect(await total(b!)).toEqual({ total: 2, count: 1 })
    expect(await total(h!)).toEqual({ total: 9, count: 1 })
    await eventually(async () => expect(await streamMessages()).toBe(0))
  }, 120_000)
})
