import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startGatewaySim, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"
import { freePort } from "../support/TcpProxy.ts"

// A worker stopped gracefully (SIGTERM, as an upgrade or a rolling restart does) in the middle of
// a paced broadcast: the slice it is sending finishes and its outcomes are written, its claim is
// given back at the slice's end, and the next worker sends the rest. No target is left in doubt
// (claimed with no outcome), so none is sent twice. The simulator sends no delivery reports here:
// a target left in doubt could only be sent again once the report window passed, which the
// simulator's log would show as a second send of its message_id.

const RATE = 100
const iso = useIsolation()
const db = useDb(iso)
const base = envFor(iso, {
  HERALD_PARTITIONS: "4",
  GATEWAY_TIMEOUT_MS: "1000",
  HERALD_BROADCAST_REPORT_WINDOW_MS: "1000",
  GATEWAY_SIM_CALLBACKS: "false"
})
const cli = cliFor(base)
let api: HeraldProcess
let first: HeraldProcess
let second: HeraldProcess | undefined
let simulator: Awaited<ReturnType<typeof startGatewaySim>>

beforeAll(async () => {
  const apiPort = await freePort()
  simulator = await startGatewaySim(await freePort(), `http://127.0.0.1:${apiPort}`, base)
  ;[api, first] = await Promise.all([
    startHerald({ ...base, PORT: String(apiPort), HERALD_ROLE: "api", GATEWAY_RBM_URL: simulator.url }),
    startHerald({ ...base, HERALD_ROLE: "worker", HERALD_NODE_ID: `gs-${iso.id}-1`, GATEWAY_RBM_URL: simulator.url })
  ])
})
afterAll(async () => {
  await Promise.all([api, first, second].map((n) => n?.kill()))
  await simulator?.kill()
})

describe("a worker stopped gracefully mid-broadcast", () => {
  it("leaves no target in doubt: the next worker sends the rest, each message once", async () => {
    const account = (await cli("admin", "create-account", "--email", "stop@bulk.io", "--password", "stop password", "--label", "Stop")).account_id
    const bot = (await cli("admin", "create-bot", account, "--name", "Stop", "--use-case", "promotional", "--status", "active")).bot_id as string
    await cli("admin", "bot-throughput", bot, String(RATE))
    await cli("admin", "wallet-credit", account, "1000")
    const token = (await callJson(api.url, "POST", "/api/v1/rcs/auth/login", undefined, { email: "stop@bulk.io", password: "stop password" })).body.token
    const call = (method: string, path: string, body?: unknown) => callJson(api.url, method, path, token, body)
    const template = await call("POST", "/api/v1/rcs/templates", { bot_id: bot, name: "offer", type: "text", text: "Big sale today" })
    expect(template.status, JSON.stringify(template.body)).toBe(200)
    const list = (await call("POST", "/api/v1/rcs/contact-lists", { name: "everyone" })).body.list.list_id as string
    const phones = Array.from({ length: 800 }, (_, i) => `+918${String(i).padStart(5, "0")}1234`)
    expect((await call("POST", `/api/v1/rcs/contact-lists/${list}/contacts`, { contacts: phones.map((phone) => ({ phone })) })).body.added).toBe(phones.length)

    const created = await call("POST", "/api/v1/rcs/broadcasts", { name: "Stop", bot_id: bot, template_id: template.body.template_id, contact_list_id: list })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    const id = created.body.broadcast.id as string
    // As a client reads it: a 503 (no database connection free within 5 s on a loaded machine,
    // nothing read) is asked again after its Retry-After.
    const get = async (): Promise<any> => {
      for (;;) {
        const r = await call("GET", `/api/v1/rcs/broadcasts/${id}`)
        if (r.status !== 503) {
          expect(r.status, JSON.stringify(r.body)).toBe(200)
          return r.body.broadcast
        }
        await new Promise((resolve) => setTimeout(resolve, 1_000))
      }
    }

    // At 100/s a slice (half a second of it) is almost always on its way when the signal comes.
    await eventually(async () => expect((await get()).sent_count).toBeGreaterThan(150), { timeoutMs: 60_000, intervalMs: 50 })
    const { code } = await first.stop()
    expect(code, first.output().slice(-3_000)).toBe(0)

    // Nothing claimed is left without an outcome.
    const inDoubt = await db<{ n: number }>(
      `SELECT count(*)::int AS n FROM broadcast_targets t JOIN broadcast_chunks c
         ON c.broadcast_id = t.broadcast_id AND c.chunk_no = t.target_no / 1000
       WHERE t.broadcast_id = $1 AND t.status = 'pending' AND t.target_no <= c.claimed_upto`,
      [id]
    )
    expect(inDoubt[0]!.n).toBe(0)

    second = await startHerald({ ...base, HERALD_ROLE: "worker", HERALD_NODE_ID: `gs-${iso.id}-2`, GATEWAY_RBM_URL: simulator.url })
    await eventually(async () => expect((await get()).status).toBe("completed"), { timeoutMs: 120_000, intervalMs: 200 })
    const done = await get()
    expect(done.sent_count).toBe(phones.length)
    const targets = await db<{ message_id: string }>("SELECT message_id FROM broadcast_targets WHERE broadcast_id = $1", [id])
    const twice: Array<string> = []
    for (const { message_id } of targets) {
      const log = (await (await fetch(`${simulator.url}/simulate/log?message_id=${message_id}`)).json()) as { sends: number }
      if (log.sends !== 1) twice.push(`${message_id}: ${log.sends} sends`)
    }
    expect(twice).toEqual([])
  }, 300_000)
})
