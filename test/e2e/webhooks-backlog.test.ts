import http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"

// A full endpoint lane puts attempts off: one endpoint with one request in flight and room for two
// more in its lane gets a burst of deliveries while it answers slowly, so most of the burst finds
// the lane full and must wait for a durable timer instead of queueing in memory.

const CONCURRENCY = 1
const BACKLOG = 2
const ANSWER_MS = 300
const BURST = 12

const iso = useIsolation()
const db = useDb(iso)
const env = envFor(iso, {
  HERALD_WEBHOOK_TIMEOUT_MS: "1000",
  HERALD_WEBHOOK_ENDPOINT_CONCURRENCY: String(CONCURRENCY),
  HERALD_WEBHOOK_LANE_BACKLOG: String(BACKLOG)
})
const cli = cliFor(env)
let node: HeraldProcess
let token: string
let webhookId: string

const call = (method: string, path: string, body?: unknown) => callJson(node.url, method, path, token, body)

/** A consumer that answers 200 after ANSWER_MS, so the lane backs up; it counts requests in flight. */
const received: Array<{ deliveryId: string; at: number }> = []
let inFlight = 0
let maxInFlight = 0
const server = http.createServer((req, res) => {
  inFlight++
  maxInFlight = Math.max(maxInFlight, inFlight)
  received.push({ deliveryId: String(req.headers["webhook-id"]), at: Date.now() })
  req.resume()
  setTimeout(() => {
    inFlight--
    res.writeHead(200, { "content-type": "text/plain" }).end("ok")
  }, ANSWER_MS)
})

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  node = await startHerald(env)
  await cli("admin", "create-account", "--email", "backlog@example.com", "--password", "backlog password", "--label", "Backlog", "--plan", "growth")
  token = (await callJson(node.url, "POST", "/api/v1/rcs/auth/login", undefined, { email: "backlog@example.com", password: "backlog password" })).body.token
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/slow`
  const created = await call("POST", "/api/v1/rcs/webhooks", { url, events: ["message.sent"] })
  expect(created.status).toBe(200)
  webhookId = created.body.webhook_id
})
afterAll(async () => {
  await node?.kill()
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

interface Sample {
  readonly at: number
  readonly attempted: number
  /** Deferral timers (attempt 1 is only ever timed when put off) with the state written with them. */
  readonly timers: ReadonlyArray<{ key: string; attempt: number; delayMs: number; fireAt: number; deferrals: number | null }>
}

// One statement, one snapshot: a deferral's timer and the state it leads to are one commit, so each
// timer is seen with the `deferrals` count that chose its delay.
const sample = async (): Promise<Sample> => {
  const [row] = await db<{ attempted: number; timers: Sample["timers"] }>(
    `SELECT
       (SELECT count(*)::int FROM webhook_attempts WHERE webhook_id = $1) AS attempted,
       (SELECT coalesce(json_agg(json_build_object(
           'key', t.actor_key,
           'attempt', (t.command->>'attempt')::int,
           'delayMs', extract(epoch FROM t.fire_at - t.created_at) * 1000,
           'fireAt', extract(epoch FROM t.fire_at) * 1000,
           'deferrals', (s.state->>'deferrals')::int)), '[]'::json)
        FROM actor_timers t LEFT JOIN actor_delivery s ON s.actor_key = t.actor_key
        WHERE t.kind = 'delivery') AS timers`,
    [webhookId]
  )
  return { at: Date.now(), attempted: row!.attempted, timers: row!.timers }
}

interface Burst {
  readonly deliveryIds: ReadonlyArray<string>
  /** When every POST …/test had answered: each delivery's Start was in the outbox by then. */
  readonly postedAt: number
  readonly samples: ReadonlyArray<Sample>
}

/** Fires the burst once and watches the database until every delivery has an attempt row. */
let burstOnce: Promise<Burst> | undefined
const burst = () =>
  burstOnce ??= (async () => {
    const sent = await Promise.all(Array.from({ length: BURST }, () => call("POST", `/api/v1/rcs/webhooks/${webhookId}/test`)))
    for (const r of sent) expect(r.status).toBe(200)
    const postedAt = Date.now()
    const samples: Array<Sample> = []
    // A deferral timer lives about 750 ms at least, so a 50 ms poll cannot miss one.
    await eventually(async () => {
      const s = await sample()
      samples.push(s)
      expect(s.attempted).toBe(BURST)
    }, { timeoutMs: 60_000, intervalMs: 50 })
    return { deliveryIds: sent.map((r) => r.body.delivery_id as string), postedAt, samples }
  })()

describe("an endpoint lane holding HERALD_WEBHOOK_LANE_BACKLOG attempts", () => {
  it("loses nothing: every delivery ends with one attempt, attempt 1, status 200", async () => {
    const { deliveryIds } = await burst()
    expect(new Set(deliveryIds).size).toBe(BURST)
    const rows = await db<{ delivery_id: string; attempt: number; status_code: number }>(
      "SELECT delivery_id, attempt, status_code FROM webhook_attempts WHERE webhook_id = $1 ORDER BY delivery_id",
      [webhookId]
    )
    // Being put off is not a failure: no attempt 2, no status 0, no dead letter.
    expect(rows).toEqual([...deliveryIds].sort().map((id) => ({ delivery_id: id, attempt: 1, status_code: 200 })))
    const listed = (await call("GET", `/api/v1/rcs/webhooks/${webhookId}/deliveries?limit=500`)).body.deliveries as Array<any>
    expect(listed.map((d) => [d.delivery_id, d.attempt, d.status_code]).sort()).toEqual([...deliveryIds].sort().map((id) => [id, 1, 200]))
    expect((await db("SELECT count(*)::int AS n FROM webhook_dead_letters"))[0]!.n).toBe(0)
    const states = await db<{ actor_key: string; state: any }>("SELECT actor_key, state FROM actor_delivery WHERE actor_key = ANY($1::text[])", [deliveryIds])
    expect(states).toHaveLength(BURST)
    for (const { actor_key, state } of states) {
      expect(state, actor_key).toMatchObject({ phase: "delivered", attempt: 1, deferrals: 0 })
    }
  })

  it("puts the rest off with durable timers, 1 s doubling, jittered, rather than queueing them", async () => {
    const { deliveryIds, samples } = await burst()
    const timers = samples.flatMap((s) => s.timers)
    // With concurrency 1 and a lane of 2, at most 3 of the 12 fit in the lane: the rest must be put off.
    const putOff = new Set(timers.map((t) => t.key))
    expect(putOff.size).toBeGreaterThanOrEqual(1)
    for (const key of putOff) expect(deliveryIds).toContain(key)
    for (const t of timers) {
      // A put-off attempt keeps its number: it is still attempt 1, not the next one.
      expect(t.attempt).toBe(1)
      expect(t.deferrals).toBeGreaterThanOrEqual(1)
      const base = Math.min(30_000, 1_000 * 2 ** (t.deferrals! - 1))
      // fire_at is computed in the behaviour, before the commit whose transaction stamps
      // created_at: the row shows the delay less that wait, which a loaded machine makes
      // hundreds of milliseconds. Only the ceiling is read here; the delay's range (1 s doubling,
      // ±25%) is deliveryRules.test.ts's, where the timer is seen as the behaviour asks for it.
      expect(t.delayMs, `${t.key} after ${t.deferrals} deferrals`).toBeLessThanOrEqual(base * 1.25 + 50)
    }

    // A put-off delivery really waited for its timer: it went out no earlier than the timer was due.
    const sentAt = new Map(
      (await db<{ delivery_id: string; sent_ms: number; created_ms: number }>(
        `SELECT a.delivery_id, extract(epoch FROM a.sent_at) * 1000 AS sent_ms, extract(epoch FROM d.created_at) * 1000 AS created_ms
         FROM webhook_attempts a JOIN webhook_deliveries d USING (delivery_id) WHERE a.webhook_id = $1`,
        [webhookId]
      )).map((r) => [r.delivery_id, { sent: Number(r.sent_ms), created: Number(r.created_ms) }])
    )
    for (const key of putOff) {
      const lastDue = Math.max(...timers.filter((t) => t.key === key).map((t) => t.fireAt))
      expect(sentAt.get(key)!.sent, key).toBeGreaterThanOrEqual(lastDue - 20)
      expect(sentAt.get(key)!.sent - sentAt.get(key)!.created, key).toBeGreaterThanOrEqual(700)
    }

    // How many wait in the lane at once is the lane's rule, checked where it can be seen
    // (test/webhooks/dispatcherLanes.test.ts): from here a delivery in the lane and one whose Start
    // is not applied yet look alike (held commands write nothing), and a sample's time says nothing
    // about which, on a loaded machine.
    expect(maxInFlight).toBe(CONCURRENCY)
  })

  it("the consumer gets each delivery_id exactly once", async () => {
    const { deliveryIds } = await burst()
    expect(received.map((r) => r.deliveryId).sort()).toEqual([...deliveryIds].sort())
  })
})
