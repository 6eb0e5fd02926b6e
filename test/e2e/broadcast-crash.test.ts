import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ownerOf, partitionOf } from "../../src/actors/runtime/partitioning.ts"
import { startConsumer } from "../support/consumer.ts"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startGatewaySim, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"
import { freePort } from "../support/TcpProxy.ts"

// kill -9 of the worker running a bot's sender actor in the middle of a paced broadcast (issue 7,
// "Restart safety"). The other worker takes the sender over, fails as "send not confirmed" exactly
// the targets the dead node had claimed without recording their outcome (they may have left, so
// they are never sent again), and sends the rest. The simulator, a process of its own, is the
// witness: no message_id reached it twice, every target sent is one it took, the counters match
// the rows, the wallet is charged once per sent target and broadcast.completed comes once.

const TOKEN = "broadcast-crash-client-token"
const PARTITIONS = 8
const RECIPIENTS = 4_000
const RATE = 300
const iso = useIsolation()
const db = useDb(iso)
const base = envFor(iso, {
  HERALD_PARTITIONS: String(PARTITIONS),
  GATEWAY_RBM_CLIENT_TOKEN: TOKEN,
  // Small, so a claim left by the dead node goes stale in ~14 s (ChunkRunner's staleAfterMs).
  GATEWAY_TIMEOUT_MS: "1000",
  GATEWAY_SIM_DELIVERED_MS: "100",
  // Never read within the test: one callback per message, which two CPUs running three nodes
  // apply as fast as the bot sends.
  GATEWAY_SIM_READ_MS: "600000"
})
const cli = cliFor(base)
const nodeIds = [`bc-${iso.id}-1`, `bc-${iso.id}-2`]
let api: HeraldProcess
const workers = new Map<string, HeraldProcess>()
let simulator: Awaited<ReturnType<typeof startGatewaySim>>
let simUrl = ""
let consumer: Awaited<ReturnType<typeof startConsumer>>

const simTotals = async () => (await fetch(`${simUrl}/simulate/log`)).json() as Promise<{ messages: number; sends: number; deliveries: number }>
const simLog = async (messageId: string) => (await fetch(`${simUrl}/simulate/log?message_id=${messageId}`)).json() as Promise<{ sends: number; deliveries: number }>

/** Partitions of `kind` each live worker reports owning (none for one that does not answer). */
const owned = async (kind: string) =>
  Object.fromEntries(
    await Promise.all(
      [...workers].map(async ([nodeId, node]) => {
        const partitions = await fetch(`${node.url}/health/ready`, { signal: AbortSignal.timeout(2_000) }).then(
          async (r) => ((await r.json()) as { partitions_owned?: Record<string, Array<number>> }).partitions_owned?.[kind] ?? [],
          () => [] as Array<number>
        )
        return [nodeId, partitions] as const
      })
    )
  )

/** The worker(s) reporting `partition` of `kind` as theirs. */
const ownersOf = async (kind: string, partition: number) =>
  Object.entries(await owned(kind)).filter(([, ps]) => ps.includes(partition)).map(([nodeId]) => nodeId)

beforeAll(async () => {
  const apiPort = await freePort()
  const simPort = await freePort()
  simulator = await startGatewaySim(simPort, `http://127.0.0.1:${apiPort}`, base)
  simUrl = simulator.url
  consumer = await startConsumer()
  const [apiNode, ...started] = await Promise.all([
    startHerald({ ...base, PORT: String(apiPort), HERALD_ROLE: "api", GATEWAY_RBM_URL: simUrl }),
    ...nodeIds.map((nodeId) => startHerald({ ...base, HERALD_ROLE: "worker", HERALD_NODE_ID: nodeId, GATEWAY_RBM_URL: simUrl, LOG_LEVEL: "warning" }))
  ])
  api = apiNode!
  started.forEach((node, i) => workers.set(nodeIds[i]!, node))
}, 90_000)
afterAll(async () => {
  await Promise.all([api, ...workers.values()].map((n) => n?.kill()))
  simulator?.child.kill("SIGKILL")
  await consumer?.close()
})

describe("a worker killed mid-broadcast", () => {
  it("no target reaches the gateway twice, none is skipped, counters exact, broadcast.completed once", async () => {
    const account = (await cli("admin", "create-account", "--email", "crash@bulk.io", "--password", "crash password", "--label", "Crash")).account_id
    const bot = (await cli("admin", "create-bot", account, "--name", "Crash", "--use-case", "promotional", "--status", "active")).bot_id as string
    await cli("admin", "bot-throughput", bot, String(RATE))
    await cli("admin", "wallet-credit", account, "5000")
    const token = (await callJson(api.url, "POST", "/api/v1/rcs/auth/login", undefined, { email: "crash@bulk.io", password: "crash password" })).body.token
    const call = (method: string, path: string, body?: unknown) => callJson(api.url, method, path, token, body)

    const template = await call("POST", "/api/v1/rcs/templates", { bot_id: bot, name: "offer", type: "text", text: "Big sale today" })
    expect(template.status, JSON.stringify(template.body)).toBe(200)
    const hook = await call("POST", "/api/v1/rcs/webhooks", { url: consumer.url("/ok"), events: ["broadcast.completed"], bot_id: null })
    expect(hook.status, JSON.stringify(hook.body)).toBe(200)
    const list = await call("POST", "/api/v1/rcs/contact-lists", { name: "everyone" })
    expect(list.status).toBe(200)
    const listId = list.body.list.list_id as string
    const phones = Array.from({ length: RECIPIENTS }, (_, i) => `+917${String(i).padStart(5, "0")}1234`)
    const imported = await fetch(`${api.url}/api/v1/rcs/contact-lists/${listId}/contacts`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "text/csv" },
      body: "phone\n" + phones.join("\n") + "\n"
    })
    expect(imported.status).toBe(200)
    expect(((await imported.json()) as { added: number }).added).toBe(RECIPIENTS)

    // Both workers settled on the rendezvous assignment, so the sender's owner does not move
    // during the broadcast for any reason but the kill.
    const partition = partitionOf(bot, PARTITIONS)
    const expectedOwner = ownerOf(nodeIds, "sender", partition)!
    await eventually(async () => expect(await ownersOf("sender", partition)).toEqual([expectedOwner]), { timeoutMs: 30_000, intervalMs: 200 })

    const before = await simTotals()
    const created = await call("POST", "/api/v1/rcs/broadcasts", { name: "Crash", bot_id: bot, template_id: template.body.template_id, contact_list_id: listId })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    const id = created.body.broadcast.id as string
    const get = async () => (await call("GET", `/api/v1/rcs/broadcasts/${id}`)).body.broadcast
    await eventually(async () => expect((await get()).sent_count).toBeGreaterThan(1_000), { timeoutMs: 30_000, intervalMs: 100 })

    const [victimId] = await ownersOf("sender", partition)
    expect(victimId).toBe(expectedOwner)
    const survivorId = nodeIds.find((n) => n !== victimId)!
    const broadcastOwner = ownerOf(nodeIds, "broadcast", partitionOf(id, PARTITIONS))
    const killedAt = Date.now()
    await workers.get(victimId!)!.kill()
    workers.delete(victimId!)
    // A statement the dead node had already sent may still commit; then nothing writes these
    // targets until the claim goes stale.
    await new Promise((resolve) => setTimeout(resolve, 500))
    const atKill = await get()
    expect(atKill.status).toBe("running")
    expect(atKill.sent_count).toBeLessThan(RECIPIENTS - 1_000)
    // Claimed by the dead node with no outcome: the only targets allowed to end failed.
    const inDoubt = (await db<{ target_no: number }>(
      `SELECT t.target_no FROM broadcast_targets t
       JOIN broadcast_chunks c ON c.broadcast_id = t.broadcast_id AND t.target_no BETWEEN c.chunk_no * 1000 AND c.claimed_upto
       WHERE t.broadcast_id = $1 AND t.status = 'pending' ORDER BY t.target_no`,
      [id]
    )).map((r) => r.target_no)
    // One slice (half a second of the bot's rate) is claimed at a time.
    expect(inDoubt.length).toBeLessThanOrEqual(RATE / 2)

    await eventually(async () => expect(await ownersOf("sender", partition)).toEqual([survivorId]), { timeoutMs: 30_000, intervalMs: 200 })
    const done = await eventually(async () => {
      const b = await get()
      expect(b.status).toBe("completed")
      return b
    }, { timeoutMs: 60_000, intervalMs: 250 })

    // Counters exact, and the rows say the same: every target has an outcome.
    expect(done.total_count).toBe(RECIPIENTS)
    expect(done.cancelled_count).toBe(0)
    expect(done.failed_count).toBe(inDoubt.length)
    expect(done.sent_count).toBe(RECIPIENTS - inDoubt.length)
    const statuses = async () =>
      Object.fromEntries(
        (await db<{ status: string; n: number }>("SELECT status, count(*)::int AS n FROM broadcast_targets WHERE broadcast_id = $1 GROUP BY status", [id]))
          .map((r) => [r.status, r.n])
      )
    const rows = await statuses()
    expect(rows.pending ?? 0).toBe(0)
    expect(rows.cancelled ?? 0).toBe(0)
    expect((rows.sent ?? 0) + (rows.delivered ?? 0) + (rows.read ?? 0)).toBe(done.sent_count)
    expect(rows.failed ?? 0).toBe(done.failed_count)
    // The delivery report of everything sent is applied (they lag the sends), each counted once;
    // those of the unconfirmed targets that did leave move nothing.
    await eventually(async () => {
      const b = await get()
      expect(b).toMatchObject({ sent_count: done.sent_count, delivered_count: done.sent_count, read_count: 0, failed_count: done.failed_count })
      expect(await statuses()).toEqual({ delivered: done.sent_count, ...(done.failed_count > 0 ? { failed: done.failed_count } : {}) })
    }, { timeoutMs: 30_000, intervalMs: 250 })

    // The failed ones are exactly those in doubt at the kill, failed as unconfirmed, not re-sent.
    const failed = await db<{ target_no: number; message_id: string; failure_reason: string; error: any }>(
      "SELECT target_no, message_id::text, failure_reason, error FROM broadcast_targets WHERE broadcast_id = $1 AND status = 'failed' ORDER BY target_no",
      [id]
    )
    expect(failed.map((t) => t.target_no)).toEqual(inDoubt)
    let failedReached = 0
    for (const t of failed) {
      expect(t.failure_reason).toBe("send not confirmed")
      expect(t.error).toMatchObject({ message: "send not confirmed", retryable: false, message_id: t.message_id })
      const seen = await simLog(t.message_id)
      expect(seen.sends).toBeLessThanOrEqual(1)
      failedReached += seen.sends
    }
    console.log(JSON.stringify({
      sent_at_kill: atKill.sent_count,
      in_doubt: inDoubt.length,
      in_doubt_reached_gateway: failedReached,
      broadcast_actor_on_victim: broadcastOwner === victimId,
      kill_to_completed_s: (Date.parse(done.completed_at) - killedAt) / 1000
    }))

    // The simulator's side: each message_id it saw came once; it saw every sent target, and of
    // the failed ones only those that left before the kill.
    const after = await simTotals()
    expect(after.sends - before.sends).toBe(after.messages - before.messages)
    expect(after.messages - before.messages).toBe(done.sent_count + failedReached)
    expect(after.deliveries - before.deliveries).toBe(done.sent_count + failedReached)
    // Per message_id, around the crash (the chunk cut, and its neighbours) and a spread sample.
    const cut = inDoubt[0] ?? atKill.sent_count
    const sample = await db<{ message_id: string }>(
      `SELECT message_id::text FROM broadcast_targets WHERE broadcast_id = $1 AND status <> 'failed'
       AND (target_no BETWEEN $2 AND $3 OR target_no % 97 = 0)`,
      [id, Math.max(0, cut - 1_000), cut + 1_000]
    )
    expect(sample.length).toBeGreaterThan(1_000)
    await Promise.all(sample.map(async (t) => expect(await simLog(t.message_id), t.message_id).toMatchObject({ sends: 1, deliveries: 1 })))

    // Charged once per sent target, nothing for the unconfirmed ones.
    const [charged] = await db<{ total: string }>(
      "SELECT coalesce(sum(amount), 0)::text AS total FROM wallet_transactions WHERE kind = 'charge' AND reference LIKE $1",
      [`broadcast:${id}:%`]
    )
    expect(Number(charged!.total)).toBeCloseTo(done.sent_count * 0.1, 4)

    // broadcast.completed once, with the final outcome counters.
    const completed = () => consumer.received.map((r) => JSON.parse(r.body)).filter((e) => e.type === "broadcast.completed" && e.data.broadcast_id === id)
    await eventually(async () => expect(completed()).toHaveLength(1), { timeoutMs: 20_000 })
    expect(completed()[0].data).toMatchObject({
      broadcast_id: id,
      status: "completed",
      total_count: RECIPIENTS,
      sent_count: done.sent_count,
      failed_count: done.failed_count,
      cancelled_count: 0
    })
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    expect(completed()).toHaveLength(1)
    expect((await simTotals()).sends).toBe(after.sends)
  }, 150_000)
})
