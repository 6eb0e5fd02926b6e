import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { connect, type NatsConnection } from "nats"
import { ActorClient } from "../../src/actors/runtime/ActorClient.ts"
import { ActorRuntime } from "../../src/actors/runtime/ActorRuntime.ts"
import { type LeaseValue } from "../../src/actors/runtime/leases.ts"
import { makeBusNames } from "../../src/bus/BusNames.ts"
import { eventually, useIsolation } from "../support/e2e.ts"
import { settingsFor } from "../support/isolation.ts"
import { startNode } from "../support/nodes.ts"
import { Counter, HoldFor } from "../support/testKinds.ts"

// A worker that stops hands its partitions off (drained, released) and leaves the membership.
// While it drains (up to 5 s with a command held), its heartbeat and assignment rounds must not
// run: a heartbeat put its membership entry back after it had left, so the other workers gave
// partitions back to a node about to exit and nobody owned them until the entry aged out (the
// rolling restart's 10 to 15 s gaps), and an assignment round took partitions it had just
// handed off for a node that was exiting.

const iso = useIsolation()
let nc: NatsConnection | undefined
afterAll(() => nc?.close())

describe("a worker that stops", () => {
  it("leaves nothing behind: no membership entry and no lease of its own, even after a long drain", async () => {
    const nodeId = `leaving-${iso.id}`
    const node = await startNode(iso, { partitions: 2, nodeId })
    await eventually(async () => {
      const owned = await node.runPromise(Effect.flatMap(ActorRuntime, (r) => r.snapshot))
      if ((owned.counter ?? []).length !== 2) throw new Error(JSON.stringify(owned))
    }, { timeoutMs: 20_000 })
    // Held for 4.5 s: the hand-off drains its partition that long, past two heartbeats and
    // several assignment rounds.
    await node.runPromise(Effect.flatMap(ActorClient, (c) => c.send(Counter, "held-at-stop", new HoldFor({ amount: 1, deadlineMs: 20_000, resumeAfterMs: [4_500] }))))
    await new Promise((r) => setTimeout(r, 500))
    const stopping = Date.now()
    await node.dispose()
    expect(Date.now() - stopping).toBeGreaterThanOrEqual(4_000)

    const names = makeBusNames(settingsFor(iso).natsPrefix)
    nc = await connect({ servers: [...settingsFor(iso).natsServers] })
    const js = nc.jetstream()
    const members = await js.views.kv(names.bucket("nodes"))
    const entry = await members.get(nodeId)
    expect(entry === null || entry.operation !== "PUT", "its membership entry is back").toBe(true)
    const leases = await js.views.kv(names.bucket("leases"))
    const mine: Array<string> = []
    for await (const key of await leases.keys()) {
      const e = await leases.get(key)
      if (e !== null && e.operation === "PUT" && (e.json<LeaseValue>()).node === nodeId) mine.push(key)
    }
    expect(mine).toEqual([])
  }, 60_000)
})
