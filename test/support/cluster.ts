import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ActorClient } from "../../src/actors/runtime/ActorClient.ts"
import { assignedTo } from "../../src/actors/runtime/partitioning.ts"
import type { TestNode } from "./nodes.ts"
import { Add, Counter } from "./testKinds.ts"
import { ownership, type Worker } from "./workers.ts"

/**
 * Sends `perKey` Add commands to each key from each sender, each sender in its own order, the
 * senders concurrently. Returns how many commands each key got.
 */
export const sendWave = (client: TestNode, options: { senders: number; keys: number; perKey: number; wave: string; keyPrefix?: string }) =>
  client.runPromise(
    Effect.gen(function*() {
      const c = yield* ActorClient
      yield* Effect.forEach(
        Array.from({ length: options.senders }, (_, s) => `${options.wave}-s${s}`),
        (sender) =>
          Effect.gen(function*() {
            for (let n = 1; n <= options.perKey; n++) {
              for (let k = 0; k < options.keys; k++) {
                yield* c.send(Counter, `${options.keyPrefix ?? "k"}${k}`, new Add({ sender, n, amount: 1 }))
              }
            }
          }),
        { concurrency: "unbounded", discard: true }
      )
    })
  )

export interface CounterRow {
  readonly actorKey: string
  readonly state: { count: number; total: number; violations: Array<string>; lastBySender: Record<string, number> }
}

export const counterRows = (client: TestNode) =>
  client.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<CounterRow>`SELECT actor_key, state FROM actor_counter WHERE actor_key LIKE 'k%'`))

/** Waits until the counters hold `expected` commands in all. */
export const awaitApplied = async (client: TestNode, expected: number, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const rows = await counterRows(client)
    const applied = rows.reduce((n, r) => n + r.state.count, 0)
    if (applied >= expected) return rows
    if (Date.now() > deadline) throw new Error(`only ${applied} of ${expected} commands applied`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

/**
 * Samples ownership every `everyMs` while running: any partition reported by two nodes at the same
 * sample is recorded.
 */
export const sampleOwnership = (workers: () => ReadonlyArray<Worker>, kind: string, everyMs = 100) => {
  const doubles: Array<string> = []
  let samples = 0
  let running = true
  const loop = (async () => {
    while (running) {
      const { owners } = await ownership(workers(), kind)
      samples++
      for (const [p, nodes] of owners) if (nodes.length > 1) doubles.push(`partition ${p}: ${nodes.join(", ")}`)
      await new Promise((r) => setTimeout(r, everyMs))
    }
  })()
  return {
    stop: async () => {
      running = false
      await loop
      return { doubles, samples }
    }
  }
}

/** Waits until every partition of `kind` is owned by exactly one of the workers; returns when. */
export const awaitFullOwnership = async (workers: ReadonlyArray<Worker>, kind: string, partitions: number, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const { owners, reports } = await ownership(workers, kind)
    const complete = owners.size === partitions && [...owners.values()].every((n) => n.length === 1)
    if (complete) return { at: Date.now(), reports }
    if (Date.now() > deadline) throw new Error(`ownership incomplete: ${JSON.stringify(reports)}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** Waits until each worker owns exactly what rendezvous hashing assigns it. */
export const awaitAssignment = async (workers: ReadonlyArray<Worker>, kind: string, partitions: number, timeoutMs = 20_000) => {
  const nodes = workers.map((w) => w.nodeId).sort()
  const expected = Object.fromEntries(nodes.map((n) => [n, assignedTo(n, nodes, kind, partitions)]))
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const { reports } = await ownership(workers, kind)
    if (nodes.every((n) => JSON.stringify(reports[n]) === JSON.stringify(expected[n]))) return { at: Date.now(), reports: expected }
    if (Date.now() > deadline) throw new Error(`assignment not reached: ${JSON.stringify(reports)} vs ${JSON.stringify(expected)}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}
