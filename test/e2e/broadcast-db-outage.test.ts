import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"
import { freePort, TcpProxy } from "../support/TcpProxy.ts"

// Postgres lost for a few seconds in the middle of a paced broadcast (docs/broadcasts.md,
// "Restart safety"). The node goes on living: a slice that was out when the database went away
// has its outcomes, and they are written once it is back. Given up on, they would leave the
// slice's targets claimed with no outcome, in doubt, and a stale claim with no delivery report
// in the window is sent again: the gateway drops the repeat, but it is a send too many, and under
// load (a pool with no free connection for seconds) a whole chunk of them. The node reaches
// Postgres through a proxy this file switches off and on; the simulator counts every send.

const N = 2_000
const RATE = 200
/** The simulator never answers a number ending in 0002: its slice waits out the gateway timeout. */
const UNANSWERED = 300
const HELD_MS = 3_000
const iso = useIsolation()
const db = useDb(iso)
let proxy: TcpProxy
let node: HeraldProcess
let simUrl: string
let token: string
let botId: string
let templateId: string

const call = (method: string, path: string, body?: unknown) => callJson(node.url, method, path, token, body)
const simTotals = async () => (await fetch(`${simUrl}/simulate/log`)).json() as Promise<{ messages: number; sends: number }>

beforeAll(async () => {
  proxy = await TcpProxy.reserve({ host: "127.0.0.1", port: 5432 })
  await proxy.up()
  const url = new URL(iso.databaseUrl)
  url.port = String(proxy.port)
  const simPort = await freePort()
  simUrl = `http://127.0.0.1:${simPort}`
  const env = envFor(iso, {
    DATABASE_URL: url.toString(),
    GATEWAY_SIM_PORT: String(simPort),
    // The unanswered send holds its slice this long. A claim goes stale after 3 + 2 + 5 s and the
    // window is short: given up on, the outcomes' targets would be sent again well within the test.
    GATEWAY_TIMEOUT_MS: String(HELD_MS),
    HERALD_BROADCAST_REPORT_WINDOW_MS: "2000",
    GATEWAY_SIM_DELIVERED_MS: "100",
    GATEWAY_SIM_READ_MS: "600000",
    LOG_LEVEL: "warning"
  })
  const cli = cliFor(env)
  node = await startHerald(env)
  const account = (await cli("admin", "create-account", "--email", "outage@bulk.io", "--password", "outage password", "--label", "outage")).account_id
  token = (await callJson(node.url, "POST", "/api/v1/rcs/auth/login", undefined, { email: "outage@bulk.io", password: "outage password" })).body.token
  botId = (await cli("admin", "create-bot", account, "--name", "Promo", "--use-case", "promotional", "--status", "active")).bot_id
  await cli("admin", "bot-throughput", botId, String(RATE))
  await cli("admin", "wallet-credit", account, "20000")
  const template = await call("POST", "/api/v1/rcs/templates", { bot_id: botId, name: "offer", type: "text", text: "Big sale today" })
  expect(template.status).toBe(200)
  templateId = template.body.template_id
}, 300_000)
afterAll(async () => {
  await node?.kill()
  await proxy?.down()
})

describe("Postgres lost mid-broadcast", () => {
  it("the outcomes of what was out are written once it is back: no target sent twice, counters exact", async () => {
    const created = await call("POST", "/api/v1/rcs/contact-lists", { name: "outage list" })
    const listId = created.body.list.list_id as string
    const phones = Array.from({ length: N }, (_, i) => `+917${String(i).padStart(5, "0")}${i === UNANSWERED ? "0002" : "1234"}`)
    const imported = await fetch(`${node.url}/api/v1/rcs/contact-lists/${listId}/contacts`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "text/csv" },
      body: "phone\n" + phones.join("\n") + "\n"
    })
    expect(imported.status).toBe(200)
    const before = await simTotals()
    const r = await call("POST", "/api/v1/rcs/broadcasts", { name: "Outage", bot_id: botId, template_id: templateId, contact_list_id: listId })
    expect(r.status).toBe(200)
    const id = r.body.broadcast.id as string

    // A slice (100 targets at 200/s) waits for the unanswered send for 3 s after it left: Postgres
    // goes away before that, so the slice's outcomes come while it is away.
    await eventually(async () => expect((await simTotals()).messages - before.messages).toBeGreaterThan(UNANSWERED + 5), { timeoutMs: 30_000, intervalMs: 20 }).catch(
      (error) => {
        // Seen once beside a heavily loaded suite (the sends stopped at the slice holding the
        // unanswered number) and not reproduced since: what the node said, to find out why.
        throw new Error(`${error}\nthe node's last warnings:\n${node.logs().slice(-30).map((l) => JSON.stringify(l)).join("\n")}`)
      }
    )
    await proxy.down()
    await new Promise((resolve) => setTimeout(resolve, 5_000))
    await proxy.up()

    const done = await eventually(async () => {
      const b = (await call("GET", `/api/v1/rcs/broadcasts/${id}`)).body.broadcast
      expect(b?.status).toBe("completed")
      return b
    }, { timeoutMs: 90_000, intervalMs: 250 })
    expect(done).toMatchObject({ total_count: N, sent_count: N - 1, failed_count: 1 })
    const after = await simTotals()
    expect(after.messages - before.messages).toBe(N)
    expect(after.sends - before.sends).toBe(N)
    const targets = await db<{ status: string; reason: string | null; n: number }>(
      "SELECT status, failure_reason AS reason, count(*)::int AS n FROM broadcast_targets WHERE broadcast_id = $1 GROUP BY 1, 2 ORDER BY 1",
      [id]
    )
    expect(targets.filter((t) => t.status !== "failed").reduce((n, t) => n + t.n, 0)).toBe(N - 1)
    expect(targets.filter((t) => t.status === "failed")).toEqual([{ status: "failed", reason: "send not confirmed", n: 1 }])
    const written = node.logs().filter((l) => l.msg === "broadcast outcomes not written yet; trying again")
    expect(written.length).toBeGreaterThan(0)
  }, 180_000)
})
