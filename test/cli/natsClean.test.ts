import { describe, expect, it } from "@effect/vitest"
import { planClean, type StreamSummary } from "../../src/cli/natsCleanRun.ts"

// Which streams `herald admin nats-clean` takes for the deployment's: by name and by what they
// hold, since names alone mix deployments whose prefixes start alike (prefixes may hold `_`) or
// differ only in case (stream names are upper case).

const stream = (name: string, subjects: ReadonlyArray<string>, messages = 0, consumers = 0): StreamSummary => ({ name, subjects, messages, consumers })

const server: ReadonlyArray<StreamSummary> = [
  // herald's own: one stream per actor kind, two buckets.
  stream("HERALD_DELIVERY", ["herald.delivery.>"], 3, 8),
  stream("HERALD_SENDER", ["herald.sender.>"], 0, 8),
  stream("KV_herald_leases", ["$KV.herald_leases.>"]),
  stream("KV_herald_nodes", ["$KV.herald_nodes.>"]),
  // herald_b's: its names start as herald's do.
  stream("HERALD_B_DELIVERY", ["herald_b.delivery.>"]),
  stream("KV_herald_b_nodes", ["$KV.herald_b_nodes.>"]),
  // Herald's (another case): the same stream name space, other subjects.
  stream("HERALD_BROADCAST", ["Herald.broadcast.>"]),
  // Unrelated.
  stream("heraldic", ["heraldic.>"]),
  stream("ORDERS", ["orders.>"]),
  stream("KV_other_nodes", ["$KV.other_nodes.>"])
]

describe("planClean", () => {
  it("takes the prefix's kind streams and its buckets, and nothing of a prefix that starts alike", () => {
    const plan = planClean("herald", server)
    expect(plan.streams.map((s) => s.name)).toEqual(["HERALD_DELIVERY", "HERALD_SENDER"])
    expect(plan.buckets.map((b) => b.bucket)).toEqual(["herald_leases", "herald_nodes"])
    expect(plan.skipped.map((s) => s.name)).toEqual(["HERALD_B_DELIVERY", "HERALD_BROADCAST", "KV_herald_b_nodes"])
  })

  it("for herald_b, takes herald_b's alone", () => {
    const plan = planClean("herald_b", server)
    expect(plan.streams.map((s) => s.name)).toEqual(["HERALD_B_DELIVERY"])
    expect(plan.buckets.map((b) => b.bucket)).toEqual(["herald_b_nodes"])
    expect(plan.skipped).toEqual([])
  })

  it("tells a prefix from the same letters in another case by the subjects", () => {
    const plan = planClean("Herald", server)
    expect(plan.streams.map((s) => s.name)).toEqual(["HERALD_BROADCAST"])
    expect(plan.buckets).toEqual([])
  })

  it("takes nothing for a prefix with no streams", () => {
    expect(planClean("t0123456789", server)).toEqual({ streams: [], buckets: [], skipped: [] })
  })
})
