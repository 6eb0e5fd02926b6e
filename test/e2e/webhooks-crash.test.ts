import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { partitionOf } from "../../src/actors/runtime/partitioning.ts"
import { startConsumer } from "../support/consumer.ts"
import { eventually, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"

// kill -9 of the worker that owns a delivery, between its attempts 2 and 3: the next owner fires
// attempts 3 and 4 from the durable timers, on schedule (within 2 s), allowing for the takeover: a
// lease lapses 4-6 s after its holder dies, so attempt 3, due 5 s after attempt 2, may only be
// sent once the survivor owns the partition.

const PARTITIONS = 8
const iso = useIsolation()
const env = envFor(iso, { HERALD_PARTITIONS: String(PARTITIONS) })
const cli = cliFor(env)
let api: HeraldProcess
const workers: Array<HeraldProcess> = []
let consumer: Awaited<ReturnType<typeof startConsumer>>
let token = ""

const call = (method: string, path: string, body?: unknown) => callJson(api.url, method, path, token, body)

const owned = async (worker: HeraldProcess) =>
  ((await (await fetch(`${worker.url}/health/ready`)).json()) as { partitions_owned?: Record<string, Array<number>> }).partitions_owned?.delivery ?? []

beforeAll(async () => {
  consumer = await startConsumer()
  api = await startHerald({ ...env, HERALD_ROLE: "api" })
  for (let i = 0; i < 2; i++) workers.push(await startHerald({ ...env, HERALD_ROLE: "worker" }))
  await cli("admin", "create-account", "--email", "crash@example.com", "--password", "crash password", "--label", "Crash")
  token = (await call("POST", "/api/v1/rcs/auth/login", { email: "crash@example.com", password: "crash password" })).body.token
  await eventually(async () => {
    const all = (await Promise.all(workers.map(owned))).flat()
    expect(new Set(all).size).toBe(PARTITIONS)
  }, { timeoutMs: 30_000 })
})
afterAll(async () => {
  await Promise.all([api, ...workers].map((n) => n?.kill()))
  await consumer?.close()
})

describe("a worker killed between attempts 2 and 3", () => {
  it("the delivery still makes attempts 3 and 4 on time, and no attempt number repeats", async () => {
    const endpoint = (await call("POST", "/api/v1/rcs/webhooks", { url: consumer.url("/status/500"), events: ["message.sent"] })).body
    const deliveryId = (await call("POST", `/api/v1/rcs/webhooks/${endpoint.webhook_id}/test`)).body.delivery_id as string
    const partition = partitionOf(deliveryId, PARTITIONS)
    const attempts = async () => ((await call("GET", `/api/v1/rcs/webhooks/${endpoint.webhook_id}/deliveries`)).body.deliveries as Array<any>)
      .filter((a) => a.delivery_id === deliveryId)
      .sort((a, b) => a.attempt - b.attempt)

    await eventually(async () => expect(await attempts()).toHaveLength(2), { timeoutMs: 15_000, intervalMs: 50 })
    const owners = await Promise.all(workers.map(owned))
    const victim = workers[owners.findIndex((list) => list.includes(partition))]!
    const survivor = workers.find((w) => w !== victim)!
    await victim.kill()
    // The takeover: the victim's lease has to lapse (TTL 6 s) before the survivor may start.
    const takenOverAt = await eventually(async () => {
      expect(await owned(survivor)).toContain(partition)
      return Date.now()
    }, { timeoutMs: 30_000, intervalMs: 100 })

    const rows = await eventually(async () => {
      const r = await attempts()
      expect(r.length).toBeGreaterThanOrEqual(4)
      return r
    }, { timeoutMs: 60_000, intervalMs: 250 })
    expect(rows.map((a) => a.attempt)).toEqual([1, 2, 3, 4])
    const finished = (i: number) => Date.parse(rows[i].sent_at) + rows[i].took_ms
    const late = (i: number, delay: number) => Date.parse(rows[i].sent_at) - (finished(i - 1) + delay)
    expect(late(2, 5_000)).toBeGreaterThanOrEqual(-300)
    // On schedule, or at once after the takeover when that came later than the schedule.
    expect(Date.parse(rows[2].sent_at) - Math.max(finished(1) + 5_000, takenOverAt)).toBeLessThanOrEqual(2_000)
    expect(Math.abs(late(3, 30_000))).toBeLessThanOrEqual(2_000)
    // The consumer saw no attempt twice: every request it got for this delivery is one of the four.
    expect(consumer.received.filter((r) => r.headers["webhook-id"] === deliveryId)).toHaveLength(4)
  }, 90_000)
})

it("every event its consumer received is what the API reference's webhooks document (strictly)", () => {
  expect(consumer.received.length).toBeGreaterThan(0)
  expect(consumer.undocumented).toEqual([])
})
