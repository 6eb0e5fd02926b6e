import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ownerOf, partitionOf } from "../../src/actors/runtime/partitioning.ts"
import { startConsumer } from "../support/consumer.ts"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startGatewaySim, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"
import { freePort } from "../support/TcpProxy.ts"

// kill -9, twice, of the worker running a bot's sender actor in the middle of a paced broadcast
// (issue 15; docs/broadcasts.md, "Restart safety"). One API node, three workers, and the gateway
// simulator as a process of its own: the witness of what reached each recipient. The targets the
// dead node left in flight (claimed, no outcome) get their real outcome from the gateway's
// delivery reports, or, with no report once the claim is stale and the report window has passed,
// are sent again with the same message_id (which the gateway drops if it had taken it). For every
// target the final outcome must be what the simulator did with its number, no recipient may be
// reached twice, and counters, targets and charges must agree; broadcast.completed comes once,
// with the final counters.

const TOKEN = "broadcast-crash-client-token"
const PARTITIONS = 8
const RATE = 300
const WINDOW_MS = 3_000
const PRICE = 0.1
const iso = useIsolation()
const db = useDb(iso)
const base = envFor(iso, {
  HERALD_PARTITIONS: String(PARTITIONS),
  GATEWAY_RBM_CLIENT_TOKEN: TOKEN,
  // Small, so that a dead node's claim goes stale in ~8 s (ChunkRunner's staleAfterMs).
  GATEWAY_TIMEOUT_MS: "1000",
  HERALD_BROADCAST_REPORT_WINDOW_MS: String(WINDOW_MS),
  GATEWAY_SIM_DELIVERED_MS: "100",
  // Never read within the test: one report per message, so "delivered" is every reached
  // recipient's final status.
  GATEWAY_SIM_READ_MS: "600000"
})
const cli = cliFor(base)
const nodeIds = [1, 2, 3].map((n) => `bc-${iso.id}-${n}`)
let api: HeraldProcess
const workers = new Map<string, HeraldProcess>()
let simUrl = ""
let simulator: Awaited<ReturnType<typeof startGatewaySim>>
let consumer: Awaited<ReturnType<typeof startConsumer>>

// Recipients: mostly ordinary numbers, and some of each simulator rule that ends in one try
// (DESIGN.md): 0001 refused at once, 0002 never answered, 0004 taken then the connection cut, 0005
// delivered, never read, 0006 taken then revoked (an asynchronous failure). (0003, refused five
// times with backoff, holds a paced bot's slice for seconds; broadcasts.test.ts covers it.)
const RULES = ["0001", "0002", "0004", "0005", "0006"]
const phones = Array.from({ length: 3_000 }, (_, i) => `+917${String(i).padStart(5, "0")}${i % 50 < RULES.length ? RULES[i % 50] : "1234"}`)

const simLog = async (messageId: string) => (await fetch(`${simUrl}/simulate/log?message_id=${messageId}`)).json() as Promise<{ sends: number; deliveries: number }>

/** Partitions of `kind` each live worker reports owning (none for one that does not answer). */
const ownersOf = async (kind: string, partition: number) => {
  const answers = await Promise.all([...workers].map(async ([nodeId, node]) => {
    const owned = await fetch(`${node.url}/health/ready`, { signal: AbortSignal.timeout(2_000) }).then(
      async (r) => ((await r.json()) as { partitions_owned?: Record<string, Array<number>> }).partitions_owned?.[kind] ?? [],
      () => [] as Array<number>
    )
    return owned.includes(partition) ? [nodeId] : []
  }))
  return answers.flat()
}

beforeAll(async () => {
  const apiPort = await freePort()
  simulator = await startGatewaySim(await freePort(), `http://127.0.0.1:${apiPort}`, base)
  simUrl = simulator.url
  consumer = await startConsumer()
  const [apiNode, ...started] = await Promise.all([
    startHerald({ ...base, PORT: String(apiPort), HERALD_ROLE: "api", GATEWAY_RBM_URL: simUrl }),
    ...nodeIds.map((nodeId) => startHerald({ ...base, HERALD_ROLE: "worker", HERALD_NODE_ID: nodeId, GATEWAY_RBM_URL: simUrl, LOG_LEVEL: "warning" }))
  ])
  api = apiNode!
  started.forEach((node, i) => workers.set(nodeIds[i]!, node))
})
afterAll(async () => {
  await Promise.all([api, ...workers.values()].map((n) => n?.kill()))
  await simulator?.kill()
  await consumer?.close()
})

describe("workers killed mid-broadcast", () => {
  it("every target ends as the gateway says, no recipient is reached twice, counters = targets = charges, broadcast.completed once", async () => {
    const account = (await cli("admin", "create-account", "--email", "crash@bulk.io", "--password", "crash password", "--label", "Crash")).account_id
    const bot = (await cli("admin", "create-bot", account, "--name", "Crash", "--use-case", "promotional", "--status", "active")).bot_id as string
    await cli("admin", "bot-throughput", bot, String(RATE))
    await cli("admin", "wallet-credit", account, "5000")
    const token = (await callJson(api.url, "POST", "/api/v1/rcs/auth/login", undefined, { email: "crash@bulk.io", password: "crash password" })).body.token
    const call = (method: string, path: string, body?: unknown) => callJson(api.url, method, path, token, body)

    const template = await call("POST", "/api/v1/rcs/templates", { bot_id: bot, name: "offer", type: "text", text: "Big sale today" })
    expect(template.status, JSON.stringify(template.body)).toBe(200)
    expect((await call("POST", "/api/v1/rcs/webhooks", { url: consumer.url("/ok"), events: ["broadcast.completed"], bot_id: null })).status).toBe(200)
    const list = (await call("POST", "/api/v1/rcs/contact-lists", { name: "everyone" })).body.list.list_id as string
    const imported = await call("POST", `/api/v1/rcs/contact-lists/${list}/contacts`, { contacts: phones.map((phone) => ({ phone })) })
    expect(imported.body.added, JSON.stringify(imported.body).slice(0, 300)).toBe(phones.length)

    // Every worker settled on the rendezvous assignment, so the sender moves only when killed.
    const partition = partitionOf(bot, PARTITIONS)
    await eventually(async () => expect(await ownersOf("sender", partition)).toEqual([ownerOf(nodeIds, "sender", partition)]), { timeoutMs: 30_000, intervalMs: 200 })

    const created = await call("POST", "/api/v1/rcs/broadcasts", { name: "Crash", bot_id: bot, template_id: template.body.template_id, contact_list_id: list })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    const id = created.body.broadcast.id as string
    const createdAt = Date.now()
    const since = () => Math.round((Date.now() - createdAt) / 100) / 10
    const get = async () => (await call("GET", `/api/v1/rcs/broadcasts/${id}`)).body.broadcast

    // Two kills of whichever worker sends for the bot, each once it has made progress.
    const kills: Array<{ victim: string; atS: number; sentAtKill: number; inDoubt: number; takenOverS?: number }> = []
    for (const threshold of [600, 1_500]) {
      await eventually(async () => expect((await get()).sent_count).toBeGreaterThan(threshold), { timeoutMs: 60_000, intervalMs: 100 })
      const [victim] = await ownersOf("sender", partition)
      expect(victim).toBeDefined()
      await workers.get(victim!)!.kill()
      workers.delete(victim!)
      await new Promise((resolve) => setTimeout(resolve, 300))
      const [inDoubt] = await db<{ n: number }>(
        `SELECT count(*)::int AS n FROM broadcast_targets t
         JOIN broadcast_chunks c ON c.broadcast_id = t.broadcast_id AND t.target_no BETWEEN c.chunk_no * 1000 AND c.claimed_upto
         WHERE t.broadcast_id = $1 AND t.status IN ('pending', 'unconfirmed')`,
        [id]
      )
      const atKill = await get()
      expect(atKill.status).toBe("running")
      const kill = { victim: victim!, atS: since(), sentAtKill: atKill.sent_count, inDoubt: inDoubt!.n }
      kills.push(kill)
      await eventually(async () => expect(await ownersOf("sender", partition)).toHaveLength(1), { timeoutMs: 30_000, intervalMs: 200 })
      Object.assign(kill, { takenOverS: since() })
    }

    const done = await eventually(async () => {
      const b = await get()
      expect(b.status).toBe("completed")
      return b
    }, { timeoutMs: 120_000, intervalMs: 250 })
    const completedS = since()

    // Every target's outcome is what the simulator did with it: reached (once) and delivered, or
    // never reached and failed. Reports lag the sends a little: wait for them.
    const targets = await eventually(async () => {
      const rows = await db<{ target_no: number; phone: string; message_id: string; status: string; failure_reason: string | null; detail: string | null }>(
        "SELECT target_no, phone, message_id::text, status, failure_reason, error->>'detail' AS detail FROM broadcast_targets WHERE broadcast_id = $1 ORDER BY target_no",
        [id]
      )
      expect(rows).toHaveLength(phones.length)
      expect(rows.filter((t) => t.status === "sent")).toEqual([])
      return rows
    }, { timeoutMs: 30_000, intervalMs: 500 })
    const mismatches: Array<string> = []
    let resent = 0
    for (let i = 0; i < targets.length; i += 100) {
      await Promise.all(targets.slice(i, i + 100).map(async (t) => {
        const seen = await simLog(t.message_id)
        if (seen.deliveries > 1) mismatches.push(`${t.phone}: reached ${seen.deliveries} times`)
        const want = seen.deliveries === 1 ? "delivered" : "failed"
        if (t.status !== want) mismatches.push(`${t.phone} (#${t.target_no}): ${t.status} (${t.failure_reason}), the gateway ${seen.deliveries === 1 ? "delivered it" : "never delivered it"}`)
        if (seen.sends > 1) resent++
      }))
    }
    expect(mismatches).toEqual([])
    // Each rule ends as it should. A refusal the sending node did not get within GATEWAY_TIMEOUT_MS
    // (1 s here, so claims go stale quickly; a simulator process starved by a loaded machine can
    // answer later) is, rightly, not confirmed: allowed only with the detail that says so.
    const timedOut = (t: (typeof targets)[number]) =>
      t.status === "failed" && t.failure_reason === "send not confirmed" && /did not answer within 1000 ms|did not confirm the send made again/.test(t.detail ?? "")
    const statusOf = (suffix: string, allowTimeouts = false) =>
      [...new Set(targets.filter((t) => t.phone.endsWith(suffix) && !(allowTimeouts && timedOut(t))).map((t) => `${t.status} ${t.failure_reason ?? ""}`.trim()))].sort()
    const answeredLate = (suffix: string) => targets.filter((t) => t.phone.endsWith(suffix) && timedOut(t)).length
    if (answeredLate("0001") + answeredLate("0006") > 0) console.log(JSON.stringify({ refused_but_answer_late: answeredLate("0001"), revoked_but_answer_late: answeredLate("0006") }))
    expect(statusOf("0001", true)).toEqual(["failed recipient not reachable over RCS"])
    expect(statusOf("0002")).toEqual(["failed send not confirmed"])
    expect(statusOf("0004")).toEqual(["delivered"])
    expect(statusOf("0005")).toEqual(["delivered"])
    // Taken, then revoked: its revoke report gives it its reason, unless the node did not hear the
    // gateway take it in time and the report came after the window (failed as not confirmed).
    expect(statusOf("0006", true)).toEqual(["failed message expired undelivered"])
    expect(statusOf("1234")).toEqual(["delivered"])

    // Counters = targets, now and at completion (the reports came within the window).
    const count = (status: string) => targets.filter((t) => t.status === status).length
    const final = await get()
    expect(final).toMatchObject({
      total_count: phones.length,
      sent_count: count("delivered"),
      delivered_count: count("delivered"),
      read_count: 0,
      failed_count: count("failed"),
      cancelled_count: 0
    })
    expect(done).toMatchObject({ sent_count: final.sent_count, failed_count: final.failed_count })

    // Charges = what reached the gateway and was not rejected after: once each, however recorded.
    const [money] = await db<{ charged: string; refunded: string }>(
      `SELECT coalesce(sum(amount) FILTER (WHERE kind = 'charge'), 0)::text AS charged, coalesce(sum(amount) FILTER (WHERE kind = 'refund'), 0)::text AS refunded
       FROM wallet_transactions
       WHERE reference LIKE $1 OR reference IN (SELECT message_id::text FROM broadcast_targets WHERE broadcast_id = $2)`,
      [`broadcast:${id}:%`, id]
    )
    expect(Number(money!.charged) - Number(money!.refunded)).toBeCloseTo(final.sent_count * PRICE, 4)

    // broadcast.completed once, with the final counters.
    const completed = () => consumer.received.map((r) => JSON.parse(r.body)).filter((e) => e.type === "broadcast.completed" && e.data.broadcast_id === id)
    await eventually(async () => expect(completed()).toHaveLength(1), { timeoutMs: 20_000 })
    expect(completed()[0].data).toMatchObject({
      status: "completed",
      total_count: phones.length,
      sent_count: final.sent_count,
      failed_count: final.failed_count,
      cancelled_count: 0
    })
    console.log(JSON.stringify({ kills, completed_s: completedS, resent_after_no_report: resent, sent: final.sent_count, failed: final.failed_count }))
    // Both kills left targets in doubt: the scenario the rules are for happened.
    expect(kills.reduce((n, k) => n + k.inDoubt, 0)).toBeGreaterThan(0)
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    expect(completed()).toHaveLength(1)
  }, 240_000)
})

it("every event its consumer received is what the API reference's webhooks document (strictly)", () => {
  expect(consumer.received.length).toBeGreaterThan(0)
  expect(consumer.undocumented).toEqual([])
})
