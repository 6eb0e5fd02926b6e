import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { encodeRbmCallback } from "../../src/gateway/rbm/callbacks.ts"
import { startConsumer } from "../support/consumer.ts"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"
import { freePort } from "../support/TcpProxy.ts"

// Single sends end to end through the in-process gateway simulator: every recipient-number rule
// of DESIGN.md, the lifecycle from callbacks (duplicates, late reports), charging exactly once,
// events as webhooks, throughput, reports, previews and recipients.

const CLIENT_TOKEN = "messaging-test-client-token"
const iso = useIsolation()
const db = useDb(iso)
let env: Record<string, string>
let cli: ReturnType<typeof cliFor>
let node: HeraldProcess
let simUrl: string
let consumer: Awaited<ReturnType<typeof startConsumer>>
const tokens: Record<string, string> = {}
const accounts: Record<string, string> = {}
const bots: Record<string, string> = {}

const call = (method: string, path: string, token?: string, body?: unknown) => callJson(node.url, method, path, token, body)
const send = (body: Record<string, unknown>, token = tokens.owner) => call("POST", "/api/v1/rcs/messages/send", token, { bot_id: bots.main, ...body })
const simLog = async (messageId: string) => (await fetch(`${simUrl}/simulate/log?message_id=${messageId}`)).json() as Promise<{ sends: number; deliveries: number }>
const message = async (id: string) =>
  (await db<{ status: string; error: any; attempts: number }>("SELECT status, error, attempts FROM messages WHERE message_id = $1", [id]))[0]
const charges = async (id: string) =>
  (await db<{ kind: string; amount: string }>("SELECT kind, amount::text FROM wallet_transactions WHERE reference = $1 ORDER BY kind", [id]))
const balance = async (account: string) => Number((await db<{ b: string }>("SELECT wallet_balance::text AS b FROM accounts WHERE account_id = $1", [account]))[0]!.b)

/** A callback signed as RBM would sign it (or with another token), posted to the node. */
const postCallback = (event: Record<string, unknown>, clientToken = CLIENT_TOKEN) => {
  const signed = encodeRbmCallback({
    event: JSON.stringify(event),
    pubsubMessageId: String(Math.random()),
    publishTime: new Date().toISOString(),
    subscription: "projects/test/subscriptions/test",
    clientToken
  })
  return fetch(`${node.url}/api/v1/rcs/gateway/rbm/events`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-goog-signature": signed.signature },
    body: signed.body
  })
}

const events = (type: string, messageId: string) =>
  consumer.received.map((r) => JSON.parse(r.body)).filter((e) => e.type === type && e.data.message_id === messageId)

beforeAll(async () => {
  const simPort = await freePort()
  simUrl = `http://127.0.0.1:${simPort}`
  env = envFor(iso, {
    GATEWAY_SIM_PORT: String(simPort),
    GATEWAY_RBM_CLIENT_TOKEN: CLIENT_TOKEN,
    GATEWAY_TIMEOUT_MS: "1500",
    GATEWAY_SIM_DELIVERED_MS: "100",
    GATEWAY_SIM_READ_MS: "300"
  })
  cli = cliFor(env)
  consumer = await startConsumer()
  node = await startHerald(env)
  for (const name of ["a", "b", "poor"]) {
    accounts[name] = (await cli("admin", "create-account", "--email", `${name}@send.io`, "--password", `${name} password`, "--label", name)).account_id
  }
  tokens.owner = (await call("POST", "/api/v1/rcs/auth/login", undefined, { email: "a@send.io", password: "a password" })).body.token
  tokens.b = (await call("POST", "/api/v1/rcs/auth/login", undefined, { email: "b@send.io", password: "b password" })).body.token
  tokens.poor = (await call("POST", "/api/v1/rcs/auth/login", undefined, { email: "poor@send.io", password: "poor password" })).body.token
  bots.main = (await cli("admin", "create-bot", accounts.a!, "--name", "Main", "--status", "active")).bot_id
  bots.pending = (await cli("admin", "create-bot", accounts.a!, "--name", "Pending")).bot_id
  bots.other = (await cli("admin", "create-bot", accounts.b!, "--name", "Other", "--status", "active")).bot_id
  bots.poor = (await cli("admin", "create-bot", accounts.poor!, "--name", "Poor", "--status", "active")).bot_id
  await cli("admin", "bot-throughput", bots.main!, "unlimited")
  await cli("admin", "wallet-credit", accounts.a!, "100")
  await cli("admin", "wallet-credit", accounts.b!, "100")
  const hook = await call("POST", "/api/v1/rcs/webhooks", tokens.owner, {
    url: consumer.url("/ok"),
    events: ["message.sent", "message.delivered", "message.read", "message.failed"],
    bot_id: null
  })
  expect(hook.status).toBe(200)
}, 300_000)
afterAll(async () => {
  node?.kill()
  await consumer?.close()
})

describe("a normal recipient", () => {
  it("is sent, then delivered, then read; charged once; message.* webhooks in order", async () => {
    const before = await balance(accounts.a!)
    const r = await send({ to: "+919876541234", text: "Hello" })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ success: true, message_id: expect.any(String), status: "sent" })
    const id = r.body.message_id
    // Answered once the outcome is committed: the report shows it at once.
    expect((await message(id))!.status).toMatch(/^(sent|delivered|read)$/)
    await eventually(async () => expect((await message(id))!.status).toBe("read"))
    expect(await charges(id)).toEqual([{ kind: "charge", amount: "0.1000" }])
    expect(await balance(accounts.a!)).toBeCloseTo(before - 0.1, 4)
    expect(await simLog(id)).toMatchObject({ sends: 1, deliveries: 1 })
    await eventually(async () => {
      expect(events("message.sent", id)).toHaveLength(1)
      expect(events("message.delivered", id)).toHaveLength(1)
      expect(events("message.read", id)).toHaveLength(1)
    })
    expect(events("message.sent", id)[0].data).toMatchObject({ message_id: id, bot_id: bots.main, to: "+919876541234", status: "sent" })
  })

  it("a duplicated callback charges nothing more and emits nothing more", async () => {
    const r = await send({ to: "+919876541235", text: "Twice" })
    const id = r.body.message_id
    await eventually(async () => expect((await message(id))!.status).toBe("read"))
    await eventually(async () => expect(events("message.read", id)).toHaveLength(1))
    const replay = await fetch(`${simUrl}/simulate/replay-callback`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message_id: id }) })
    expect(replay.ok).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 700))
    expect(await charges(id)).toHaveLength(1)
    expect(events("message.read", id)).toHaveLength(1)
    expect((await message(id))!.status).toBe("read")
  })

  it("a late 'delivered' never moves 'read' back", async () => {
    const r = await send({ to: "+919876541236", text: "Late" })
    const id = r.body.message_id
    await eventually(async () => expect((await message(id))!.status).toBe("read"))
    const answer = await postCallback({ senderPhoneNumber: "+919876541236", eventType: "DELIVERED", eventId: `late-${id}`, messageId: id, sendTime: new Date().toISOString(), agentId: bots.main })
    expect(answer.status).toBe(200)
    expect((await message(id))!.status).toBe("read")
    expect(events("message.delivered", id)).toHaveLength(1)
  })

  it("a callback with a wrong signature is refused and changes nothing", async () => {
    const r = await send({ to: "+919876541237", text: "Forged" })
    const id = r.body.message_id
    const answer = await postCallback(
      { senderPhoneNumber: "+919876541237", eventType: "READ", eventId: `forged-${id}`, messageId: id, sendTime: new Date().toISOString(), agentId: bots.main },
      "not the token"
    )
    expect(answer.status).toBe(401)
  })
})

describe("recipient-number rules", () => {
  it("0001: rejected in the answer → 422 recipient record, failed, not charged", async () => {
    const r = await send({ to: "+919876540001", text: "Hi" })
    expect(r.status).toBe(422)
    expect(r.body).toMatchObject({ success: false, code: "send_rejected", category: "recipient", retryable: false })
    expect(r.body.message_id).toBeUndefined()
    const [row] = await db<{ message_id: string; status: string; error: any }>(
      "SELECT message_id, status, error FROM messages WHERE recipient = '+919876540001'"
    )
    expect(row!.status).toBe("failed")
    expect(row!.error).toMatchObject({ success: false, category: "recipient", message: r.body.message })
    expect(await charges(row!.message_id)).toEqual([])
    await eventually(async () => expect(events("message.failed", row!.message_id)).toHaveLength(1))
    expect(events("message.failed", row!.message_id)[0].data).toMatchObject({ success: false, category: "recipient", detail: expect.any(String), retryable: false })
  })

  it("0002: no answer → 504 with message_id, retryable false; unconfirmed; never charged", async () => {
    const r = await send({ to: "+919876540002", text: "Hi" })
    expect(r.status).toBe(504)
    expect(r.body).toMatchObject({ success: false, code: "send_unconfirmed", retryable: false, message_id: expect.any(String) })
    const id = r.body.message_id
    expect((await message(id))!.status).toBe("unconfirmed")
    await new Promise((resolve) => setTimeout(resolve, 800))
    expect(await charges(id)).toEqual([])
    // Never resent: one send request carried the id.
    expect((await simLog(id)).sends).toBe(1)
  })

  it("0003: gateway failures are retried with backoff, then 502 gateway record", async () => {
    const started = Date.now()
    const r = await send({ to: "+919876540003", text: "Hi" })
    expect(r.status).toBe(502)
    expect(r.body).toMatchObject({ success: false, code: "gateway_error", category: "gateway", retryable: true })
    // Backoff 250 + 500 + 1000 + 2000 ms between the five tries.
    expect(Date.now() - started).toBeGreaterThanOrEqual(3_700)
    const [row] = await db<{ message_id: string; status: string; attempts: number }>(
      "SELECT message_id, status, attempts FROM messages WHERE recipient = '+919876540003'"
    )
    expect(row).toMatchObject({ status: "failed", attempts: 5 })
    expect(await simLog(row!.message_id)).toMatchObject({ sends: 5, deliveries: 0 })
  })

  it("0004: connection cut after accepting → 504 unconfirmed; charged when the delivery report comes", async () => {
    const r = await send({ to: "+919876540004", text: "Hi" })
    expect(r.status).toBe(504)
    expect(r.body).toMatchObject({ code: "send_unconfirmed", retryable: false, message_id: expect.any(String) })
    const id = r.body.message_id
    await eventually(async () => expect((await message(id))!.status).toMatch(/^(delivered|read)$/))
    await eventually(async () => expect(await charges(id)).toEqual([{ kind: "charge", amount: "0.1000" }]))
    expect(await simLog(id)).toMatchObject({ sends: 1, deliveries: 1 })
  })

  it("0005: delivered, never read", async () => {
    const r = await send({ to: "+919876540005", text: "Hi" })
    const id = r.body.message_id
    await eventually(async () => expect((await message(id))!.status).toBe("delivered"))
    await new Promise((resolve) => setTimeout(resolve, 600))
    expect((await message(id))!.status).toBe("delivered")
  })

  it("0006: accepted, then rejected asynchronously: failed with the record, message.failed, charge refunded", async () => {
    const r = await send({ to: "+919876540006", text: "Hi" })
    expect(r.status).toBe(200)
    const id = r.body.message_id
    await eventually(async () => expect((await message(id))!.status).toBe("failed"))
    expect((await message(id))!.error).toMatchObject({ success: false, category: expect.any(String), message: expect.any(String), detail: expect.any(String) })
    await eventually(async () => expect(events("message.failed", id)).toHaveLength(1))
    expect(events("message.failed", id)[0].data).toMatchObject({ success: false, message_id: id, retryable: false })
    expect((await charges(id)).map((c) => c.kind)).toEqual(["charge", "refund"])
  })
})

describe("what is refused before anything is sent", () => {
  it("402 insufficient_balance, and nothing is written", async () => {
    const r = await send({ bot_id: bots.poor, to: "+919876541240", text: "Hi" }, tokens.poor)
    expect(r.status).toBe(402)
    expect(r.body).toMatchObject({ success: false, code: "insufficient_balance" })
    expect(await db("SELECT 1 FROM messages WHERE account_id = $1", [accounts.poor])).toHaveLength(0)
  })

  it("403 bot_not_active for a pending bot and for another account's bot", async () => {
    for (const bot of [bots.pending, bots.other]) {
      const r = await send({ bot_id: bot, to: "+919876541241", text: "Hi" })
      expect(r.status).toBe(403)
      expect(r.body).toMatchObject({ success: false, code: "bot_not_active" })
    }
  })

  it("400 for a bad number, for no or two contents, and for content past the RBM limits", async () => {
    const bad = [
      { to: "12", text: "Hi" },
      { to: "+919876541242" },
      { to: "+919876541242", text: "Hi", template_id: "00000000-0000-0000-0000-000000000000" },
      { to: "+919876541242", text: "x".repeat(3073) },
      { to: "+919876541242", rich_card: { title: "t".repeat(201) } }
    ]
    for (const body of bad) {
      const r = await send(body)
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(400)
      expect(r.body).toMatchObject({ success: false, code: "invalid_request" })
    }
    expect(await db("SELECT 1 FROM messages WHERE recipient = '+919876541242'")).toHaveLength(0)
    expect((await send({ to: "+919876541243", text: "x".repeat(3072) })).status).toBe(200)
  })

  it("viewers cannot send; API keys cannot send", async () => {
    const key = await call("POST", "/api/v1/rcs/api-keys", tokens.owner, { name: "k", scopes: ["messages:send", "contacts:read"] })
    const r = await send({ to: "+919876541244", text: "Hi" }, key.body.raw_key)
    expect(r.status).toBe(403)
    expect(r.body.code).toBe("api_key_endpoint_not_allowed")
  })
})

describe("templates, rich content and throughput", () => {
  it("sends a template and rich cards", async () => {
    const template = await call("POST", "/api/v1/rcs/templates", tokens.owner, { bot_id: bots.main, name: "welcome", type: "text", text: "Welcome!" })
    expect(template.status).toBe(200)
    const r = await send({ to: "+919876541250", template_id: template.body.template_id })
    expect(r.status).toBe(200)
    const [row] = await db<{ content: any; template_id: string }>("SELECT content, template_id FROM messages WHERE message_id = $1", [r.body.message_id])
    expect(row).toMatchObject({ template_id: template.body.template_id, content: { type: "text", text: "Welcome!" } })
    const card = await send({
      to: "+919876541251",
      rich_card: { title: "Sale", description: "50% off", media: { url: "https://cdn.example.com/a.png", height: "medium" } },
      suggestions: [{ type: "url", text: "Shop", url: "https://shop.example.com" }, { type: "reply", text: "Stop" }]
    })
    expect(card.status).toBe(200)
    const preview = await call("GET", `/api/v1/rcs/reports/messages/${card.body.message_id}/preview`, tokens.owner)
    expect(preview.status).toBe(200)
    expect(preview.body.preview).toContain("Sale")
    expect(preview.body.preview).toContain("[Shop]")
    expect(preview.body.rbm.contentMessage.richCard.standaloneCard.cardContent.title).toBe("Sale")
  })

  it("a bot's sends are paced at its throughput", async () => {
    await cli("admin", "bot-throughput", bots.main!, "5")
    try {
      const started = Date.now()
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => send({ to: `+91987654130${i}`, text: `paced ${i}` })))
      expect(results.every((r) => r.status === 200)).toBe(true)
      // One token at a time at 5/s: the 8th leaves about 7 × 200 ms after the first.
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_300)
    } finally {
      await cli("admin", "bot-throughput", bots.main!, "unlimited")
    }
  })
})

describe("reads", () => {
  it("reports filter by status and bot, page by cursor; API keys need contacts:read", async () => {
    const first = await call("GET", "/api/v1/rcs/reports/messages?limit=2", tokens.owner)
    expect(first.status).toBe(200)
    expect(first.body.messages).toHaveLength(2)
    expect(first.body.next_cursor).not.toBe("")
    const second = await call("GET", `/api/v1/rcs/reports/messages?limit=2&cursor=${first.body.next_cursor}`, tokens.owner)
    expect(second.body.messages[0].created_at <= first.body.messages[1].created_at).toBe(true)
    expect(second.body.messages.map((m: any) => m.message_id)).not.toContain(first.body.messages[0].message_id)
    const failed = await call("GET", `/api/v1/rcs/reports/messages?status=failed&bot_id=${bots.main}`, tokens.owner)
    expect(failed.body.messages.length).toBeGreaterThan(0)
    expect(failed.body.messages.every((m: any) => m.status === "failed" && m.bot_id === bots.main)).toBe(true)
    const all = await call("GET", "/api/v1/rcs/reports/messages?limit=1000", tokens.owner)
    expect(all.body.next_cursor).toBe("")
    const withScope = await call("POST", "/api/v1/rcs/api-keys", tokens.owner, { name: "reader", scopes: ["contacts:read"] })
    const without = await call("POST", "/api/v1/rcs/api-keys", tokens.owner, { name: "nosy", scopes: ["broadcasts:read"] })
    expect((await call("GET", "/api/v1/rcs/reports/messages", withScope.body.raw_key)).status).toBe(200)
    const refused = await call("GET", "/api/v1/rcs/reports/messages", without.body.raw_key)
    expect(refused.status).toBe(403)
    expect(refused.body.code).toBe("missing_scope")
    // Another account sees none of them.
    expect((await call("GET", "/api/v1/rcs/reports/messages", tokens.b)).body.messages).toEqual([])
  })

  it("a recipient: E.164 checked, capability from the gateway, last messages", async () => {
    const bad = await call("GET", "/api/v1/rcs/recipients/12345", tokens.owner)
    expect(bad.status).toBe(400)
    const r = await call("GET", "/api/v1/rcs/recipients/919876541234", tokens.owner)
    expect(r.status).toBe(200)
    expect(r.body.phone).toBe("+919876541234")
    expect(r.body.capability).toMatchObject({ reachable: true, features: expect.arrayContaining(["RICHCARD_STANDALONE"]) })
    expect(r.body.last_messages[0]).toMatchObject({ to: "+919876541234", status: "read" })
    const unreachable = await call("GET", "/api/v1/rcs/recipients/+919876540001", tokens.owner)
    expect(unreachable.body.capability).toMatchObject({ reachable: false })
  })

  it("the owner reads the wallet: balance and ledger, newest first, paged", async () => {
    const first = await call("GET", "/api/v1/rcs/wallet?limit=2", tokens.owner)
    expect(first.status).toBe(200)
    expect(first.body).toMatchObject({ success: true, currency: "INR" })
    expect(first.body.balance).toBeCloseTo(await balance(accounts.a!), 4)
    expect(first.body.transactions).toHaveLength(2)
    expect(first.body.next_cursor).not.toBe("")
    const all = await call("GET", "/api/v1/rcs/wallet?limit=1000", tokens.owner)
    const kinds = all.body.transactions.map((t: any) => t.kind)
    expect(kinds.at(-1)).toBe("credit")
    const charged = all.body.transactions.filter((t: any) => t.kind === "charge").length
    const refunded = all.body.transactions.filter((t: any) => t.kind === "refund").length
    // The balance is the credit less what the ledger charged and refunded, nothing else.
    expect(all.body.balance).toBeCloseTo(100 - 0.1 * (charged - refunded), 4)
  })

  it("another account's message preview is not found", async () => {
    const mine = (await call("GET", "/api/v1/rcs/reports/messages?limit=1", tokens.owner)).body.messages[0].message_id
    expect((await call("GET", `/api/v1/rcs/reports/messages/${mine}/preview`, tokens.b)).status).toBe(404)
  })
})

it("every event its consumer received is what the API reference's webhooks document (strictly)", () => {
  expect(consumer.received.length).toBeGreaterThan(0)
  expect(consumer.undocumented).toEqual([])
})
