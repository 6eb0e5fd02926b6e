import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type Client, createClient } from "graphql-ws"
import { connect, type NatsConnection } from "nats"
import WebSocket from "ws"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startGatewaySim, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor, ownerSession } from "../support/http.ts"
import { freePort } from "../support/TcpProxy.ts"

// GraphQL over WebSocket (graphql-ws) across a cluster: two API nodes and a worker, with the
// gateway simulator as a process of its own calling API node A back. Subscribers sit on API node B,
// so every event they get crossed nodes on core NATS: inbound messages and payments (Meta's
// webhook on A), send statuses (the worker's send, Meta's status webhook on A), broadcast progress
// (the worker's chunks, delivery reports on A). Also: connection_init auth (4403, 4408), queries
// and mutations over the socket, the Starter lock, tenant isolation, a slow consumer dropped at its
// buffer limit, and subscriptions completed on SIGTERM.

const iso = useIsolation()
const db = useDb(iso)
const BUFFER = 20
const base = envFor(iso, { GATEWAY_RBM_CLIENT_TOKEN: "live-client-token", GATEWAY_SIM_DELIVERED_MS: "50", GATEWAY_SIM_READ_MS: "150", LOG_LEVEL: "warning" })
const cli = cliFor(base)
let apiA: HeraldProcess
let apiB: HeraldProcess
let worker: HeraldProcess
let simulator: Awaited<ReturnType<typeof startGatewaySim>>
let nats: NatsConnection
const accounts: Record<string, string> = {}
const keys: Record<string, string> = {}
const jwt: Record<string, string> = {}
let numberA = ""
const clients: Array<Client> = []

type Json = Record<string, any>

const wsUrl = (node: HeraldProcess) => `${node.url.replace(/^http/, "ws")}/api/v1/graphql`

/** A graphql-ws client on `node` with account `name`'s key. */
const clientOf = (node: HeraldProcess, name: string) => {
  const client = createClient({ url: wsUrl(node), webSocketImpl: WebSocket, connectionParams: { Authorization: `Bearer ${keys[name]}` }, retryAttempts: 0 })
  clients.push(client)
  return client
}

/** A subscription's results as they come, and how it ended. */
const subscribe = (client: Client, query: string, variables?: Json) => {
  const results: Array<Json> = []
  const state = { completed: false, error: undefined as unknown }
  const stop = client.subscribe({ query, ...(variables ? { variables } : {}) }, {
    next: (result) => results.push(result as Json),
    error: (error) => (state.error = error),
    complete: () => (state.completed = true)
  })
  return { results, state, stop, data: () => results.filter((r) => r.data).map((r) => r.data as Json) }
}

/** One operation over the socket: its result. */
const once = (client: Client, query: string, variables?: Json) =>
  new Promise<Json>((resolve, reject) => {
    let result: Json | undefined
    client.subscribe({ query, ...(variables ? { variables } : {}) }, {
      next: (r) => (result = r as Json),
      error: (e) => (Array.isArray(e) ? resolve({ errors: e }) : reject(e)),
      complete: () => resolve(result ?? {})
    })
  })

/** The node's live listeners (GraphQL subscriptions) as its /metrics reports them. */
const listenersOn = async (node: HeraldProcess) => {
  const text = await (await fetch(`${node.metricsUrl}/metrics`)).text()
  const line = text.split("\n").find((l) => l.startsWith("herald_live_listeners"))
  return line === undefined ? 0 : Number(line.split(" ").at(-1))
}
/** Waits until node B holds at least `n` subscriptions (their NATS interest is then in place). */
const listening = async (n: number) => {
  await eventually(async () => expect(await listenersOn(apiB)).toBeGreaterThanOrEqual(n), { timeoutMs: 10_000, intervalMs: 50 })
  await new Promise((r) => setTimeout(r, 100))
}

const sim = async (path: string, body: Json) => {
  const r = await fetch(`${simulator.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
  expect(r.status, await r.clone().text()).toBe(202)
  return (await r.json()) as { id: string }
}
const gql = (node: HeraldProcess, query: string, variables?: Json, key = keys.a!) =>
  callJson(node.url, "POST", "/api/v1/graphql", `Bearer ${key}`, { query, ...(variables ? { variables } : {}) })

/** Opens a raw socket speaking graphql-transport-ws; resolves once open. */
const rawSocket = (node: HeraldProcess) =>
  new Promise<WebSocket>((resolve, reject) => {
    const socket = new WebSocket(wsUrl(node), "graphql-transport-ws")
    socket.once("open", () => resolve(socket))
    socket.once("error", reject)
  })
const closeOf = (socket: WebSocket) => new Promise<{ code: number; reason: string }>((resolve) => socket.once("close", (code, reason) => resolve({ code, reason: String(reason) })))

beforeAll(async () => {
  const [portA, simPort] = await Promise.all([freePort(), freePort()])
  simulator = await startGatewaySim(simPort, `http://127.0.0.1:${portA}`, base)
  const gateways = { GATEWAY_RBM_URL: simulator.url, GATEWAY_WA_URL: simulator.url }
  ;[apiA, apiB, worker] = await Promise.all([
    startHerald({ ...base, ...gateways, PORT: String(portA), HERALD_ROLE: "api" }),
    startHerald({ ...base, ...gateways, HERALD_ROLE: "api", HERALD_GRAPHQL_SUBSCRIPTION_BUFFER: String(BUFFER) }),
    startHerald({ ...base, ...gateways, HERALD_ROLE: "worker" })
  ])
  const clusterCli = cliFor({ ...base, ...gateways })
  const plans: Record<string, string> = { a: "enterprise", b: "enterprise", c: "enterprise", s: "starter" }
  const made = await Promise.all(
    Object.entries(plans).map(([name, plan]) => cli("admin", "create-account", "--email", `${name}@live.io`, "--password", `${name} password`, "--label", name, "--plan", plan))
  )
  Object.keys(plans).forEach((name, i) => (accounts[name] = made[i].account_id))
  const [number] = await Promise.all([
    clusterCli("admin", "create-wa-number", accounts.a!, "--phone", "+919800000501"),
    cli("admin", "wallet-credit", accounts.a!, "1000"),
    db("UPDATE accounts SET plan_rate_per_minute = 60000 WHERE account_id = ANY($1::uuid[])", [[accounts.a, accounts.b, accounts.c]])
  ])
  numberA = number.phone_number_id
  await Promise.all(Object.keys(plans).map(async (name) => {
    const session = await ownerSession(apiA.url, `${name}@live.io`, `${name} password`)
    jwt[name] = session.jwt
    keys[name] = session.key
  }))
  nats = await connect({ servers: base.NATS_URL })
}, 300_000)
afterAll(async () => {
  for (const client of clients) await client.dispose()
  await nats?.close()
  await Promise.all([apiA, apiB, worker].map((n) => n?.kill()))
  await simulator?.kill()
})

describe("the socket", () => {
  it("connection_init: a wrong key closes with 4403, none within 10 s with 4408", async () => {
    const silent = await rawSocket(apiB)
    const silentClosed = closeOf(silent)
    const wrong = await rawSocket(apiB)
    const wrongClosed = closeOf(wrong)
    wrong.send(JSON.stringify({ type: "connection_init", payload: { Authorization: "Bearer sk_live_0000000000000000000000000000000000000000" } }))
    expect((await wrongClosed).code).toBe(4403)
    const started = Date.now()
    expect((await silentClosed).code).toBe(4408)
    expect(Date.now() - started).toBeGreaterThan(8_000)
  }, 20_000)

  it("a path other than /api/v1/graphql is not upgraded", async () => {
    const socket = new WebSocket(`${apiB.url.replace(/^http/, "ws")}/api/v1/other`)
    const failed = await new Promise<string>((resolve) => socket.once("error", (e) => resolve(String(e))))
    expect(failed).toContain("404")
  })

  it("queries and mutations over the socket; errors keep their codes; the Starter plan is FEATURE_LOCKED", async () => {
    const client = clientOf(apiB, "a")
    const me = await once(client, "{ me { label plan } }")
    expect(me).toEqual({ data: { me: { label: "a", plan: "ENTERPRISE" } } })
    const created = await once(client, `mutation { createContact(input: {phone: "+919811100001", name: "Socket"}) { name phone } }`)
    expect(created.data).toEqual({ createContact: { name: "Socket", phone: "+919811100001" } })
    const missing = await once(client, `{ conversation(id: "00000000-0000-4000-8000-000000000000") { id } }`)
    expect(missing.errors[0].extensions.code).toBe("NOT_FOUND")
    const invalid = await once(client, "{ nope }")
    expect(invalid.errors[0].extensions.code).toBe("VALIDATION_ERROR")
    const expensive = await once(client, "{ contacts(page: {limit: 100}) { edges { node { conversations(page: {limit: 100}) { edges { node { id } } } } } } }")
    expect(expensive.errors[0].extensions).toMatchObject({ code: "QUERY_TOO_EXPENSIVE", maximum: 1000 })

    const starter = await once(clientOf(apiB, "s"), "{ me { label } }")
    expect(starter.errors[0].extensions.code).toBe("FEATURE_LOCKED")
    // And a subscription over HTTP is refused: it needs the socket.
    const overHttp = await gql(apiA, "subscription { messageStatusUpdated { message_id } }")
    expect(overHttp.body.errors[0].extensions.code).toBe("VALIDATION_ERROR")
  })
})

describe("subscriptions across nodes", () => {
  it("messageReceived, on node B, of Meta's webhook on node A: per conversation, never another account's", async () => {
    const before = await listenersOn(apiB)
    const all = subscribe(clientOf(apiB, "a"), "subscription { messageReceived { id conversation_id direction type text } }")
    const other = subscribe(clientOf(apiB, "b"), "subscription { messageReceived { id } }")
    await listening(before + 2)
    const first = await sim("/simulate/wa/inbound", { phone_number_id: numberA, from: "919811100002", text: "hello there" })
    await eventually(async () => expect(all.data()).toHaveLength(1))
    const received = all.data()[0]!.messageReceived
    expect(received).toMatchObject({ id: first.id, direction: "INBOUND", type: "Text", text: "hello there" })
    const conversationId = received.conversation_id as string

    const one = subscribe(clientOf(apiB, "a"), "subscription ($c: ID) { messageReceived(conversationId: $c) { id text } }", { c: conversationId })
    await listening(before + 3)
    await sim("/simulate/wa/inbound", { phone_number_id: numberA, from: "919811100003", text: "someone else" })
    const second = await sim("/simulate/wa/inbound", { phone_number_id: numberA, from: "919811100002", text: "again" })
    await eventually(async () => expect(all.data()).toHaveLength(3))
    await eventually(async () => expect(one.data().map((d) => d.messageReceived)).toEqual([{ id: second.id, text: "again" }]))
    expect(other.results).toEqual([])

    // Another account's conversation id: NOT_FOUND, as for a read.
    const foreign = await once(clientOf(apiB, "b"), "subscription ($c: ID) { messageReceived(conversationId: $c) { id } }", { c: conversationId })
    expect(foreign.errors[0].extensions.code).toBe("NOT_FOUND")
    for (const s of [all, other, one]) s.stop()
  })

  it("messageStatusUpdated: a sendText from node A, sent by the worker, its statuses on node B", async () => {
    await sim("/simulate/wa/inbound", { phone_number_id: numberA, from: "919811100004", text: "open the window" })
    const before = await listenersOn(apiB)
    const statuses = subscribe(clientOf(apiB, "a"), "subscription { messageStatusUpdated { message_id status callback_data occurred_at } }")
    const other = subscribe(clientOf(apiB, "b"), "subscription { messageStatusUpdated { message_id } }")
    await listening(before + 2)
    const sent = await eventually(async () => {
      const r = await gql(apiA, `mutation { sendText(input: {to: "919811100004", text: "hi", callback_data: "order-7"}) { message_id status } }`)
      expect(r.body.errors, JSON.stringify(r.body)).toBeUndefined()
      return r.body.data.sendText.message_id as string
    })
    await eventually(async () => expect(statuses.data().map((d) => d.messageStatusUpdated.status)).toEqual(["SENT", "DELIVERED", "READ"]), { timeoutMs: 20_000 })
    for (const d of statuses.data()) expect(d.messageStatusUpdated).toMatchObject({ message_id: sent, callback_data: "order-7" })
    expect(other.results).toEqual([])
    statuses.stop()
    other.stop()
  })

  it("paymentReceived with its contact", async () => {
    const before = await listenersOn(apiB)
    const payments = subscribe(clientOf(apiB, "a"), "subscription { paymentReceived { id reference_id amount currency contact { phone } created_at } }")
    await listening(before + 1)
    await sim("/simulate/wa/payment", { phone_number_id: numberA, from: "919811100005", reference_id: "order-42", amount: 499.5, currency: "INR" })
    await eventually(async () => expect(payments.data()).toHaveLength(1))
    expect(payments.data()[0]!.paymentReceived).toMatchObject({ reference_id: "order-42", amount: 499.5, currency: "INR", contact: { phone: "+919811100005" } })
    payments.stop()
  })

  it("broadcastProgress: the counters now, as they change, COMPLETED with the final counts as REST reads them", async () => {
    const bot = (await cli("admin", "create-bot", accounts.a!, "--name", "Live", "--use-case", "promotional", "--status", "active")).bot_id as string
    const call = (method: string, path: string, body?: unknown) => callJson(apiA.url, method, path, jwt.a, body)
    const template = (await call("POST", "/api/v1/rcs/templates", { bot_id: bot, name: "live offer", type: "text", text: "Sale" })).body.template_id as string
    const list = (await call("POST", "/api/v1/rcs/contact-lists", { name: "live" })).body.list.list_id as string
    // Ordinary numbers (no simulator rule: every one delivered).
    const phones = Array.from({ length: 1_500 }, (_, i) => `+9177${String(i).padStart(4, "0")}1234`)
    expect((await call("POST", `/api/v1/rcs/contact-lists/${list}/contacts`, { contacts: phones.map((phone) => ({ phone })) })).body.added).toBe(phones.length)
    await cli("admin", "bot-throughput", bot, "1000")
    const created = await call("POST", "/api/v1/rcs/broadcasts", { name: "Live", bot_id: bot, template_id: template, contact_list_id: list, scheduled_at: new Date(Date.now() + 2_000).toISOString() })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    const id = created.body.broadcast.id as string

    const progress = subscribe(clientOf(apiB, "a"), "subscription ($id: ID!) { broadcastProgress(broadcastId: $id) { id status total_count sent_count delivered_count read_count failed_count } }", { id })
    // The first event is the broadcast as it is now.
    await eventually(async () => expect(progress.data()[0]?.broadcastProgress).toMatchObject({ id, status: "SCHEDULED", sent_count: 0 }))
    const finalRest = await eventually(async () => {
      const b = (await call("GET", `/api/v1/rcs/broadcasts/${id}`)).body.broadcast
      expect(b.status, JSON.stringify(b)).toBe("completed")
      expect(b.delivered_count + b.failed_count).toBe(phones.length)
      return b
    }, { timeoutMs: 60_000, intervalMs: 250 })
    await eventually(async () => {
      const last = progress.data().at(-1)!.broadcastProgress
      expect(last).toMatchObject({ status: "COMPLETED", total_count: phones.length, sent_count: finalRest.sent_count, delivered_count: finalRest.delivered_count, failed_count: finalRest.failed_count })
    }, { timeoutMs: 10_000 })
    const events = progress.data().map((d) => d.broadcastProgress)
    // Progress, not a flood: a few events a second at most, the sent count never going back.
    expect(events.length).toBeGreaterThan(2)
    expect(events.length).toBeLessThan(200)
    events.slice(1).forEach((e, i) => expect(e.sent_count).toBeGreaterThanOrEqual(events[i]!.sent_count))
    expect(progress.state.completed).toBe(false)

    const foreign = await once(clientOf(apiB, "b"), "subscription ($id: ID!) { broadcastProgress(broadcastId: $id) { id } }", { id })
    expect(foreign.errors[0].extensions.code).toBe("NOT_FOUND")
    progress.stop()
  }, 90_000)
})

describe("limits and shutdown", () => {
  it("a subscriber that stops reading is dropped at its buffer limit (4429), the node's memory bounded", async () => {
    const socket = await rawSocket(apiB)
    socket.send(JSON.stringify({ type: "connection_init", payload: { Authorization: `Bearer ${keys.c}` } }))
    await new Promise((resolve) => socket.once("message", resolve))
    const before = await listenersOn(apiB)
    socket.send(JSON.stringify({ id: "1", type: "subscribe", payload: { query: "subscription { messageStatusUpdated { message_id callback_data } }" } }))
    await listening(before + 1)
    const closed = closeOf(socket)
    // The client reads nothing more: the kernel's buffers fill, then the subscription's.
    ;(socket as unknown as { _socket: { pause: () => void } })._socket.pause()
    const padding = "x".repeat(4_000)
    const subject = `${iso.natsPrefix}.live.${accounts.c}.message_status`
    for (let i = 0; i < 20_000; i++) {
      nats.publish(subject, new TextEncoder().encode(JSON.stringify({ message_id: `m${i}`, status: "sent", callback_data: padding, occurred_at: new Date().toISOString() })))
      if (i % 1_000 === 0) await nats.flush()
    }
    await nats.flush()
    await eventually(async () => {
      const text = await (await fetch(`${apiB.metricsUrl}/metrics`)).text()
      expect(text).toMatch(/herald_graphql_slow_consumers_dropped_total(\{[^}]*\})? [1-9]/)
    }, { timeoutMs: 20_000 })
    ;(socket as unknown as { _socket: { resume: () => void } })._socket.resume()
    const { code } = await closed
    expect([4429, 1006]).toContain(code)
    await eventually(async () => expect(await listenersOn(apiB)).toBe(before))
  }, 60_000)

  it("SIGTERM: each subscription is completed, the socket closed with 1001, the node exits 0", async () => {
    const socket = await rawSocket(apiB)
    const messages: Array<Json> = []
    socket.on("message", (data) => messages.push(JSON.parse(String(data))))
    socket.send(JSON.stringify({ type: "connection_init", payload: { Authorization: `Bearer ${keys.a}` } }))
    await eventually(async () => expect(messages.map((m) => m.type)).toContain("connection_ack"))
    const before = await listenersOn(apiB)
    socket.send(JSON.stringify({ id: "s1", type: "subscribe", payload: { query: "subscription { paymentReceived { id } }" } }))
    await listening(before + 1)
    const closed = closeOf(socket)
    const stopped = await apiB.stop()
    expect(stopped.code).toBe(0)
    expect(messages).toContainEqual({ id: "s1", type: "complete" })
    expect((await closed).code).toBe(1001)
  }, 30_000)
})
