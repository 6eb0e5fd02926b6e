import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { startConsumer } from "../support/consumer.ts"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"
import { freePort } from "../support/TcpProxy.ts"

// GET /api/v1/rcs/messages/{id} (a message, every status it went through, its Gateway error
// record) and RCS user messages as `message.received` webhook events, end to end: sends and user
// messages go through the in-process gateway simulator and the real RBM callback path.

const iso = useIsolation()
const db = useDb(iso)
let node: HeraldProcess
let consumer: Awaited<ReturnType<typeof startConsumer>>
let simUrl = ""
const tokens: Record<string, string> = {}
const bots = { one: "", two: "" }
let account = ""

const call = (method: string, path: string, token?: string, body?: unknown) => callJson(node.url, method, path, token, body)
const read = (id: string, token = tokens.owner) => call("GET", `/api/v1/rcs/messages/${id}`, token)
const simulate = async (path: string, body: unknown) => {
  const res = await fetch(`${simUrl}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
  return { status: res.status, body: (await res.json()) as Record<string, any> }
}
/** The simulator's callbacks still to go (queued, in flight or waiting to be retried): 0 once Herald has answered them all. */
const pendingCallbacks = async () => ((await (await fetch(`${simUrl}/simulate/log`)).json()) as { callbacks: { pending: number } }).callbacks.pending

const send = async (to: string, status = 200) => {
  const r = await call("POST", "/api/v1/rcs/messages/send", tokens.owner, { bot_id: bots.one, to, text: "hello" })
  expect(r.status, JSON.stringify(r.body)).toBe(status)
  return (r.body.message_id ?? "") as string
}

/** The envelopes of `message.received` a consumer path got. */
const received = (path: string) =>
  consumer.received.filter((r) => r.path === path).map((r) => JSON.parse(r.body)).filter((e) => e.type === "message.received")

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const hooks: Record<string, string> = {}

beforeAll(async () => {
  consumer = await startConsumer()
  const simPort = await freePort()
  simUrl = `http://127.0.0.1:${simPort}`
  // Reports a little after the send's answer: an unconfirmed send is recorded before its delivery report comes.
  const env = envFor(iso, { GATEWAY_SIM_PORT: String(simPort), GATEWAY_SIM_DELIVERED_MS: "300", GATEWAY_SIM_READ_MS: "500" })
  const cli = cliFor(env)
  node = await startHerald(env)
  account = (await cli("admin", "create-account", "--email", "mr@example.com", "--password", "mr password", "--label", "MR", "--plan", "growth")).account_id
  await cli("admin", "create-account", "--email", "mr-other@example.com", "--password", "other password", "--label", "Other")
  await cli("admin", "wallet-credit", account, "100")
  bots.one = (await cli("admin", "create-bot", account, "--name", "One", "--status", "active")).bot_id
  bots.two = (await cli("admin", "create-bot", account, "--name", "Two", "--status", "active")).bot_id
  const login = async (email: string, password: string) => (await call("POST", "/api/v1/rcs/auth/login", undefined, { email, password })).body.token as string
  tokens.owner = await login("mr@example.com", "mr password")
  tokens.other = await login("mr-other@example.com", "other password")
  for (const [name, scope] of [["viewer", ["*"]], ["scoped", [bots.two]]] as const) {
    const added = await call("POST", "/api/v1/rcs/team", tokens.owner, { email: `${name}@mr.example.com`, role: "viewer", assigned_bots: scope, password: "member password" })
    expect(added.status).toBe(200)
    tokens[name] = await login(`${name}@mr.example.com`, "member password")
  }
  // Who asked for message.received (every bot, or bot two only), and who did not.
  for (const [name, events, bot] of [["/received", ["message.received"], null], ["/two", ["message.received"], bots.two], ["/statuses", ["message.sent", "message.delivered"], null]] as const) {
    const created = await call("POST", "/api/v1/rcs/webhooks", tokens.owner, { url: consumer.url(name), events, bot_id: bot })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    hooks[name] = created.body.webhook_id
  }
}, 300_000)
afterAll(async () => {
  await node?.kill()
  await consumer?.close()
})

describe("GET /api/v1/rcs/messages/{id}", () => {
  it("answers the message as the reports show it, with every status it went through, oldest first", async () => {
    const id = await send("+919876540009")
    const done = await eventually(async () => {
      const r = await read(id, tokens.viewer)
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      expect(r.body.message.status).toBe("read")
      return r.body
    })
    const reported = (await call("GET", `/api/v1/rcs/reports/messages?bot_id=${bots.one}&limit=1000`, tokens.owner)).body.messages.find((m: any) => m.message_id === id)
    expect(done).toEqual({ success: true, message: reported, history: expect.any(Array) })
    expect(done.message).toMatchObject({ message_id: id, bot_id: bots.one, to: "+919876540009", status: "read", error: null })
    expect(done.history.map((h: any) => h.status)).toEqual(["queued", "sent", "delivered", "read"])
    for (const h of done.history) expect(h).toEqual({ status: h.status, at: expect.stringMatching(ISO), error: null })
    const at = (status: string) => done.history.find((h: any) => h.status === status).at
    expect([at("sent"), at("delivered"), at("read")]).toEqual([done.message.sent_at, done.message.delivered_at, done.message.read_at])
    expect(at("queued")).toBe(done.message.created_at)
    expect(Date.parse(at("sent"))).toBeLessThanOrEqual(Date.parse(at("delivered")))
    expect(Date.parse(at("delivered"))).toBeLessThanOrEqual(Date.parse(at("read")))
  })

  it("a message rejected after the gateway took it carries its Gateway error record, in the message and in its history", async () => {
    // 0006: accepted, then RBM's TTL_EXPIRATION_REVOKED.
    const id = await send("+919876540006")
    const done = await eventually(async () => {
      const r = await read(id)
      expect(r.body.message.status).toBe("failed")
      return r.body
    })
    expect(done.message.error).toEqual({ success: false, message: expect.any(String), detail: expect.any(String), category: expect.any(String), retryable: false })
    expect(done.message.failed_at).toMatch(ISO)
    expect(done.history).toEqual([
      { status: "queued", at: done.message.created_at, error: null },
      { status: "sent", at: done.message.sent_at, error: null },
      { status: "failed", at: done.message.failed_at, error: done.message.error }
    ])
  })

  it("a send that could not be confirmed and was delivered after all keeps its unconfirmed step and that step's error", async () => {
    // 0004: the simulator takes it, then cuts the connection instead of answering; the reports follow.
    const id = await send("+919876540004", 504)
    const done = await eventually(async () => {
      const r = await read(id)
      expect(r.body.message.status).toBe("read")
      return r.body
    })
    expect(done.history.map((h: any) => h.status)).toEqual(["queued", "unconfirmed", "delivered", "read"])
    expect(done.history[1].error).toMatchObject({ success: false, retryable: false, message_id: id })
    expect(done.message.error).toBeNull()
  })

  it("answers 404 for an unknown id or another account's message, 400 for an id that is not one, 403 out of a member's bots", async () => {
    const id = await send("+919876540019")
    expect((await read(id, tokens.viewer)).status).toBe(200)
    for (const [unknown, token] of [["00000000-0000-4000-8000-000000000404", tokens.owner], [id, tokens.other]] as const) {
      const r = await read(unknown, token)
      expect(r.status).toBe(404)
      expect(r.body).toEqual({ success: false, code: "not_found", message: expect.stringContaining(unknown) })
    }
    for (const bad of ["not-a-uuid", `${id}x`, "send"]) {
      const r = await read(bad)
      expect(r.status, bad).toBe(400)
      expect(r.body).toMatchObject({ success: false, code: "invalid_request", message: expect.stringMatching(/^id:? is not a message id/) })
    }
    const scoped = await read(id, tokens.scoped)
    expect(scoped.status).toBe(403)
    expect(scoped.body).toMatchObject({ success: false, code: "bot_not_in_scope", message: "bot not in scope" })
  })
})

describe("message.received", () => {
  it("a user's message reaches, once, the endpoints that asked for message.received on its bot, and no other", async () => {
    const r = await simulate("/simulate/inbound", { bot_id: bots.one, from: "+919800000123", text: "hello there" })
    expect(r.status).toBe(202)
    const upstream = r.body.message_id as string
    const [event] = await eventually(async () => {
      const events = received("/received").filter((e) => e.data.message_id === upstream)
      expect(events).toHaveLength(1)
      return events
    })
    expect(event).toEqual({
      event_id: expect.any(String),
      type: "message.received",
      occurred_at: expect.stringMatching(ISO),
      delivery_id: expect.stringMatching(/^wd_/),
      account_id: account,
      data: {
        message_id: upstream,
        channel: "rcs",
        bot_id: bots.one,
        from: "+919800000123",
        type: "text",
        text: "hello there",
        postback_data: null,
        received_at: expect.stringMatching(ISO)
      }
    })
    // One delivery, to the one endpoint that asked for it on every bot: none to bot two's, none to the statuses'.
    const deliveries = await db<{ webhook_id: string }>(
      "SELECT webhook_id::text FROM webhook_deliveries WHERE event_type = 'message.received' AND envelope -> 'data' ->> 'message_id' = $1",
      [upstream]
    )
    expect(deliveries).toEqual([{ webhook_id: hooks["/received"] }])
    expect(consumer.received.filter((x) => x.path !== "/received" && x.body.includes(upstream))).toEqual([])

    // RBM calls again with the same message (the simulator replays it): stored once, no second event.
    const again = await simulate("/simulate/replay-callback", { message_id: upstream })
    expect(again).toEqual({ status: 202, body: { message_id: upstream, event_type: "USER_MESSAGE" } })
    // Counted as pending from before the 202 until Herald has answered it.
    await eventually(async () => expect(await pendingCallbacks()).toBe(0))
    expect(await db("SELECT 1 FROM inbound_messages WHERE upstream_id = $1", [upstream])).toHaveLength(1)
    expect(await db("SELECT 1 FROM webhook_events WHERE type = 'message.received' AND data ->> 'message_id' = $1", [upstream])).toHaveLength(1)
    await new Promise((r) => setTimeout(r, 300))
    expect(received("/received").filter((e) => e.data.message_id === upstream)).toHaveLength(1)
  })

  it("a tapped suggestion arrives with its postback data, at the endpoint of its bot too", async () => {
    const r = await simulate("/simulate/inbound", { bot_id: bots.two, from: "+919800000124", text: "Yes", postback_data: "yes_1" })
    const upstream = r.body.message_id as string
    for (const path of ["/received", "/two"]) {
      const [event] = await eventually(async () => {
        const events = received(path).filter((e) => e.data.message_id === upstream)
        expect(events).toHaveLength(1)
        return events
      })
      expect(event.data).toEqual({
        message_id: upstream,
        channel: "rcs",
        bot_id: bots.two,
        from: "+919800000124",
        type: "suggestion_response",
        text: "Yes",
        postback_data: "yes_1",
        received_at: expect.stringMatching(ISO)
      })
    }
  })
})

it("every event its consumer received is what the API reference's webhooks document (strictly)", () => {
  expect(consumer.received.length).toBeGreaterThan(0)
  expect(consumer.undocumented).toEqual([])
})
