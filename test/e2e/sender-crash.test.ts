import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { connect, createServer, type Server, type Socket } from "node:net"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startGatewaySim, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"
import { freePort } from "../support/TcpProxy.ts"

// kill -9 of the worker owning a bot's sender actor while a send is out and its answer lost: the
// gateway (a separate `herald gateway-sim`) took the message and delivered it, but the answer
// never came back (a proxy swallows it). The next owner finds the message unanswered; its delivery
// report came meanwhile, so the gateway took it: it is recorded sent and charged once, and not
// sent again (a send with no report is sent again with the same message_id only once the report
// window has passed: test/messaging/senderRules.test.ts).

const TOKEN = "sender-crash-client-token"
const iso = useIsolation()
const db = useDb(iso)
const base = envFor(iso, { GATEWAY_RBM_CLIENT_TOKEN: TOKEN, GATEWAY_SIM_DELIVERED_MS: "100", GATEWAY_SIM_READ_MS: "200" })
const cli = cliFor(base)
let api: HeraldProcess
let victim: HeraldProcess
let survivor: HeraldProcess | undefined
let simulator: Awaited<ReturnType<typeof startGatewaySim>>
let simUrl = ""
let blackHole: Server
const held = new Set<Socket>()

/** Forwards requests to the simulator and drops every answer: the send arrives, its answer never does. */
const startBlackHole = async (target: number) => {
  const server = createServer((client) => {
    const upstream = connect(target, "127.0.0.1")
    held.add(client).add(upstream)
    upstream.on("data", () => {}).on("error", () => {})
    client.on("error", () => {})
    client.pipe(upstream)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { server, port: (server.address() as { port: number }).port }
}

beforeAll(async () => {
  const apiPort = await freePort()
  const simPort = await freePort()
  simulator = await startGatewaySim(simPort, `http://127.0.0.1:${apiPort}`, base)
  simUrl = simulator.url
  const hole = await startBlackHole(simPort)
  blackHole = hole.server
  api = await startHerald({ ...base, PORT: String(apiPort), HERALD_ROLE: "api", GATEWAY_RBM_URL: simUrl, GATEWAY_TIMEOUT_MS: "1000" })
  // Its gateway calls go through the black hole, and it waits long for them.
  victim = await startHerald({ ...base, HERALD_ROLE: "worker", GATEWAY_RBM_URL: `http://127.0.0.1:${hole.port}`, GATEWAY_TIMEOUT_MS: "8000" })
})
afterAll(async () => {
  await Promise.all([api, victim, survivor].map((n) => n?.kill()))
  simulator?.child.kill("SIGKILL")
  for (const socket of held) socket.destroy()
  blackHole?.close()
})

describe("a worker killed while a send's answer is lost", () => {
  it("the next owner finds its delivery report: sent, charged once, not sent to the gateway again", async () => {
    const account = (await cli("admin", "create-account", "--email", "crash@send.io", "--password", "crash password", "--label", "Crash")).account_id
    const bot = (await cli("admin", "create-bot", account, "--name", "Crash", "--status", "active")).bot_id
    await cli("admin", "wallet-credit", account, "10")
    const token = (await callJson(api.url, "POST", "/api/v1/rcs/auth/login", undefined, { email: "crash@send.io", password: "crash password" })).body.token
    // The caller gives up (504 unconfirmed with the message_id) long before the outcome is known.
    const answer = callJson(api.url, "POST", "/api/v1/rcs/messages/send", token, { bot_id: bot, to: "+919876541234", text: "once" })
    const [row] = await eventually(async () => {
      const rows = await db<{ message_id: string }>("SELECT message_id FROM messages WHERE account_id = $1", [account])
      expect(rows).toHaveLength(1)
      return rows
    })
    const id = row!.message_id
    const log = async () => (await (await fetch(`${simUrl}/simulate/log?message_id=${id}`)).json()) as { sends: number; deliveries: number }
    await eventually(async () => expect(await log()).toMatchObject({ sends: 1, deliveries: 1 }))
    await victim.kill()
    const replied = await answer
    expect(replied.status).toBe(504)
    expect(replied.body).toMatchObject({ code: "send_unconfirmed", message_id: id, retryable: false })

    survivor = await startHerald({ ...base, HERALD_ROLE: "worker", GATEWAY_RBM_URL: simUrl, GATEWAY_TIMEOUT_MS: "1000" })
    // Takeover (the lease lapses), then the sweep finds the unanswered send with its reports in
    // and records it sent (its sent_at).
    await eventually(async () => {
      const [settled] = await db<{ sent: boolean }>("SELECT sent_at IS NOT NULL AS sent FROM messages WHERE message_id = $1", [id])
      expect(settled).toEqual({ sent: true })
    }, { timeoutMs: 40_000, intervalMs: 200 })
    const charges = await db<{ kind: string }>("SELECT kind FROM wallet_transactions WHERE reference = $1", [id])
    expect(charges).toEqual([{ kind: "charge" }])
    const [message] = await db<{ status: string }>("SELECT status FROM messages WHERE message_id = $1", [id])
    // The delivery and read reports came first; the sweep's "sent" does not move the message back.
    expect(message).toMatchObject({ status: "read" })
    const history = await db<{ status: string }>("SELECT status FROM message_status_history WHERE message_id = $1 ORDER BY herald_message_status_rank(status)", [id])
    expect(history.map((h) => h.status)).toEqual(["queued", "sent", "delivered", "read"])
    expect(await log()).toMatchObject({ sends: 1, deliveries: 1 })
  }, 300_000)
})
