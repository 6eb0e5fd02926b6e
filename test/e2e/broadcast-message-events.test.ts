import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import http from "node:http"
import { Webhook } from "standardwebhooks"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"
import { freePort } from "../support/TcpProxy.ts"
import { undocumentedEvent } from "../support/consumer.ts"

// Per-recipient message.* events of broadcasts for endpoints that opt in (include_broadcast_messages;
// docs/webhooks.md, Broadcast messages), end to end through the in-process gateway simulator: every
// target's sent, delivered, read and failed events reach an opted-in endpoint exactly once by event
// id (a repeated batch is deduplicated, none is missing), in message.batch requests of up to
// HERALD_WEBHOOK_BATCH_MAX_EVENTS, signed and retried like any event; an endpoint without the flag,
// or for another bot, gets none of them; an account without an opted-in endpoint stages nothing.
// The flag's validation and who may set it.

const MAX_EVENTS = 100
const iso = useIsolation()
const db = useDb(iso)
let node: HeraldProcess
let cli: ReturnType<typeof cliFor>
const tokens: Record<string, string> = {}
const accounts: Record<string, string> = {}
const bots: Record<string, string> = {}
const templates: Record<string, string> = {}
const hooks: Record<string, { webhook_id: string; secret: string }> = {}

const call = (method: string, path: string, token = tokens.a, body?: unknown) => callJson(node.url, method, path, token, body)

// ---- a consumer: 200 at once, but on /flaky the first attempt of each delivery is answered 500 ----

interface Received {
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
  readonly status: number
}
const received: Array<Received> = []
const failedOnce = new Set<string>()
const consumer = http.createServer((req, res) => {
  let body = ""
  req.on("data", (chunk) => (body += chunk))
  req.on("end", () => {
    const path = req.url ?? "/"
    const id = String(req.headers["webhook-id"])
    const status = path.startsWith("/flaky") && !failedOnce.has(id) ? 500 : 200
    if (status === 500) failedOnce.add(id)
    received.push({ path, headers: req.headers, body, status })
    res.writeHead(status).end(status === 200 ? "ok" : "try again")
  })
})
let consumerUrl = ""

/** Requests an endpoint answered 200, parsed. */
const okAt = (path: string) =>
  received.filter((r) => r.path === path && r.status === 200).map((r) => {
    // Every request is what the API reference's webhooks say it is (message.batch included).
    expect(undocumentedEvent(r.body)).toBeUndefined()
    return { ...r, envelope: JSON.parse(r.body) }
  })

/** The events an endpoint took in message.batch requests, one per event id (a batch delivered twice counts once). */
const batchEventsAt = (path: string) => {
  const byId = new Map<string, any>()
  for (const r of okAt(path)) {
    if (r.envelope.type !== "message.batch") continue
    for (const event of r.envelope.data.events) {
      const seen = byId.get(event.event_id)
      // The same id always carries the same event.
      if (seen !== undefined) expect(seen).toEqual(event)
      byId.set(event.event_id, event)
    }
  }
  return [...byId.values()]
}

/** Indian mobile numbers ending in `suffix`, distinct by `n`. */
const phone = (n: number, suffix = "1234") => `+9197${String(n).padStart(4, "0")}${suffix}`

const listOf = async (phones: ReadonlyArray<string>, token: string) => {
  const created = await call("POST", "/api/v1/rcs/contact-lists", token, { name: `list ${Math.random().toString(36).slice(2)}` })
  expect(created.status).toBe(200)
  const id = created.body.list.list_id as string
  const r = await fetch(`${node.url}/api/v1/rcs/contact-lists/${id}/contacts`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "text/csv" },
    body: "phone\n" + phones.join("\n") + "\n"
  })
  expect(r.status).toBe(200)
  return id
}

const broadcastTo = async (phones: ReadonlyArray<string>, account: "a" | "b") => {
  const list = await listOf(phones, tokens[account]!)
  const r = await call("POST", "/api/v1/rcs/broadcasts", tokens[account], { name: "Sale", bot_id: bots[account], template_id: templates[account], contact_list_id: list })
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  const id = r.body.broadcast.id as string
  await eventually(async () => expect((await call("GET", `/api/v1/rcs/broadcasts/${id}`, tokens[account])).body.broadcast.status).toBe("completed"), {
    timeoutMs: 90_000,
    intervalMs: 250
  })
  return id
}

const allTargets = async (id: string, token: string) => {
  const out: Array<any> = []
  let cursor = ""
  for (;;) {
    const r = await call("GET", `/api/v1/rcs/broadcasts/${id}/targets?limit=1000${cursor ? `&cursor=${cursor}` : ""}`, token)
    expect(r.status).toBe(200)
    out.push(...r.body.targets)
    if (!r.body.next_cursor) return out
    cursor = r.body.next_cursor
  }
}

const createHook = async (name: string, body: Record<string, unknown>, token = tokens.a) => {
  const r = await call("POST", "/api/v1/rcs/webhooks", token, body)
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  hooks[name] = { webhook_id: r.body.webhook_id, secret: r.body.secret }
  return r.body
}

const MESSAGE_EVENTS = ["message.sent", "message.delivered", "message.read", "message.failed"]

beforeAll(async () => {
  await new Promise<void>((resolve) => consumer.listen(0, "127.0.0.1", resolve))
  consumerUrl = `http://127.0.0.1:${(consumer.address() as { port: number }).port}`
  const env = envFor(iso, {
    GATEWAY_SIM_PORT: String(await freePort()),
    // 0002's send is never answered: unconfirmed after 6 s, failed once the report window has passed.
    // (Shorter, a loaded machine answers an ordinary send too late now and then: it is failed as
    // unconfirmed, and then read when its reports come, as 0004 is by design.)
    GATEWAY_TIMEOUT_MS: "6000",
    HERALD_BROADCAST_REPORT_WINDOW_MS: "3000",
    GATEWAY_SIM_DELIVERED_MS: "100",
    GATEWAY_SIM_READ_MS: "300",
    HERALD_WEBHOOK_BATCH_MAX_EVENTS: String(MAX_EVENTS),
    HERALD_WEBHOOK_BATCH_WINDOW_MS: "500"
  })
  cli = cliFor(env)
  node = await startHerald(env)
  for (const name of ["a", "b"]) {
    accounts[name] = (await cli("admin", "create-account", "--email", `${name}@events.io`, "--password", `${name} password`, "--label", name)).account_id
    tokens[name] = (await call("POST", "/api/v1/rcs/auth/login", undefined, { email: `${name}@events.io`, password: `${name} password` })).body.token
    bots[name] = (await cli("admin", "create-bot", accounts[name]!, "--name", `Promo ${name}`, "--use-case", "promotional", "--status", "active")).bot_id
    await cli("admin", "bot-throughput", bots[name]!, "unlimited")
    await cli("admin", "wallet-credit", accounts[name]!, "1000")
    const t = await call("POST", "/api/v1/rcs/templates", tokens[name], { bot_id: bots[name], name: "offer", type: "text", text: "Big sale today" })
    expect(t.status).toBe(200)
    templates[name] = t.body.template_id
  }
  bots.other = (await cli("admin", "create-bot", accounts.a!, "--name", "Other", "--status", "active")).bot_id
  const login = async (email: string) => (await call("POST", "/api/v1/rcs/auth/login", undefined, { email, password: "member password" })).body.token as string
  for (const [name, role, scope] of [["viewer", "viewer", ["*"]], ["scoped", "operator", [bots.a]]] as const) {
    expect((await call("POST", "/api/v1/rcs/team", tokens.a, { email: `${name}@events.io`, role, assigned_bots: scope, password: "member password" })).status).toBe(200)
    tokens[name] = await login(`${name}@events.io`)
  }
  // Every staged event, as written (a test-only trigger): who stages what, and how often.
  await db(`CREATE TABLE test_staged (account_id uuid, webhook_id uuid, type text, message_id text)`)
  await db(`
    CREATE FUNCTION test_log_staged() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN INSERT INTO test_staged VALUES (NEW.account_id, NEW.webhook_id, NEW.type, NEW.data->>'message_id'); RETURN NULL; END $$`)
  await db(`CREATE TRIGGER test_log_staged AFTER INSERT ON webhook_batch_items FOR EACH ROW EXECUTE FUNCTION test_log_staged()`)
}, 300_000)
afterAll(async () => {
  await node?.kill()
  consumer.closeAllConnections()
  await new Promise<void>((resolve) => consumer.close(() => resolve()))
})

describe("include_broadcast_messages", () => {
  it("is false unless asked for, is shown in every read, and needs a message.* type among the events", async () => {
    const plain = await createHook("plain", { url: `${consumerUrl}/plain`, events: MESSAGE_EVENTS, bot_id: null })
    expect(plain).toMatchObject({ include_broadcast_messages: false, webhook: { include_broadcast_messages: false } })
    const before = (await db<{ n: number }>("SELECT count(*)::int AS n FROM webhooks"))[0]!.n
    for (const bad of [
      { include_broadcast_messages: "yes" },
      { include_broadcast_messages: 1 },
      { include_broadcast_messages: null },
      { include_broadcast_messages: true, events: ["broadcast.completed"] },
      { include_broadcast_messages: true, events: ["message.received"] }
    ]) {
      const r = await call("POST", "/api/v1/rcs/webhooks", tokens.a, { url: `${consumerUrl}/bad`, events: MESSAGE_EVENTS, ...bad })
      expect(r.status, JSON.stringify(bad)).toBe(400)
      expect(r.body).toMatchObject({ success: false, code: "invalid_request", errors: [{ path: "include_broadcast_messages" }] })
    }
    expect((await db<{ n: number }>("SELECT count(*)::int AS n FROM webhooks"))[0]!.n).toBe(before)

    const all = await createHook("all", {
      url: `${consumerUrl}/all`,
      events: [...MESSAGE_EVENTS, "broadcast.completed"],
      bot_id: null,
      include_broadcast_messages: true
    })
    expect(all).toMatchObject({ include_broadcast_messages: true, webhook: { include_broadcast_messages: true } })
    const listed = (await call("GET", "/api/v1/rcs/webhooks")).body.webhooks as Array<any>
    expect(listed.find((w) => w.webhook_id === all.webhook_id).include_broadcast_messages).toBe(true)
    expect(listed.find((w) => w.webhook_id === plain.webhook_id).include_broadcast_messages).toBe(false)
    const reader = (await call("POST", "/api/v1/rcs/api-keys", tokens.a, { name: "reader", scopes: ["webhooks:read"] })).body.raw_key
    expect(((await call("GET", "/api/v1/rcs/webhooks", reader)).body.webhooks as Array<any>).every((w) => typeof w.include_broadcast_messages === "boolean")).toBe(true)

    // PATCH: on and off; events that would leave the flag with no message.* type are refused,
    // unless the flag goes off in the same request.
    const patch = (id: string, body: unknown, token = tokens.a) => call("PATCH", `/api/v1/rcs/webhooks/${id}`, token, body)
    const probe = await createHook("probe", { url: `${consumerUrl}/probe`, events: ["message.sent"], bot_id: bots.a })
    expect((await patch(probe.webhook_id, { include_broadcast_messages: true })).body.webhook.include_broadcast_messages).toBe(true)
    const emptied = await patch(probe.webhook_id, { events: ["broadcast.completed"] })
    expect(emptied.status).toBe(400)
    expect(emptied.body.errors).toEqual([{ path: "include_broadcast_messages", message: expect.stringContaining("message.sent") }])
    expect((await patch(probe.webhook_id, { include_broadcast_messages: "no" })).status).toBe(400)
    const off = await patch(probe.webhook_id, { events: ["broadcast.completed"], include_broadcast_messages: false })
    expect(off.status).toBe(200)
    expect(off.body.webhook).toMatchObject({ events: ["broadcast.completed"], include_broadcast_messages: false })

    // Who may set it: whoever may change the endpoint.
    expect((await patch(probe.webhook_id, { include_broadcast_messages: false }, tokens.viewer)).status).toBe(403)
    const writer = (await call("POST", "/api/v1/rcs/api-keys", tokens.a, { name: "writer", scopes: ["webhooks:write"] })).body.raw_key
    const byKey = await patch(probe.webhook_id, { include_broadcast_messages: false }, writer)
    expect(byKey.status).toBe(403)
    expect(byKey.body.code).toBe("api_key_endpoint_not_allowed")
    expect((await call("POST", "/api/v1/rcs/webhooks", writer, { url: `${consumerUrl}/x`, events: MESSAGE_EVENTS, include_broadcast_messages: true })).status).toBe(403)
    expect((await call("POST", "/api/v1/rcs/webhooks", tokens.viewer, { url: `${consumerUrl}/x`, events: MESSAGE_EVENTS, include_broadcast_messages: true })).status).toBe(403)
    const scopedOn = await patch(probe.webhook_id, { events: ["message.sent"], include_broadcast_messages: true }, tokens.scoped)
    expect(scopedOn.status).toBe(200)
    expect(scopedOn.body.webhook.include_broadcast_messages).toBe(true)
    const outOfScope = await patch(all.webhook_id, { include_broadcast_messages: false }, tokens.scoped)
    expect(outOfScope.status).toBe(403)
    expect(outOfScope.body.code).toBe("bot_not_in_scope")
    expect((await patch(probe.webhook_id, { include_broadcast_messages: false })).status).toBe(200)
    // The developer webhook carries WhatsApp events only.
    const dev = await call("PUT", "/api/v1/app/developer/webhook", tokens.a, { url: `${consumerUrl}/dev` })
    expect(dev.status).toBe(200)
    const devPatch = await patch(dev.body.webhook_id, { include_broadcast_messages: true })
    expect(devPatch.status).toBe(400)
    expect(devPatch.body.code).toBe("invalid_request")
    expect((await call("DELETE", "/api/v1/app/developer/webhook", tokens.a)).status).toBe(200)
    expect((await call("DELETE", `/api/v1/rcs/webhooks/${probe.webhook_id}`)).status).toBe(200)
  })
})

describe("a broadcast's message events", () => {
  it("an account with no endpoint opted in stages nothing, and its endpoints get no message event of a broadcast", async () => {
    await createHook("bPlain", { url: `${consumerUrl}/b`, events: [...MESSAGE_EVENTS, "broadcast.completed"], bot_id: null }, tokens.b)
    const id = await broadcastTo(Array.from({ length: 300 }, (_, i) => phone(i, "7777")), "b")
    await eventually(async () => expect(okAt("/b").some((r) => r.envelope.type === "broadcast.completed" && r.envelope.data.broadcast_id === id)).toBe(true))
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    expect(await db("SELECT * FROM test_staged WHERE account_id = $1", [accounts.b])).toEqual([])
    expect(okAt("/b").map((r) => r.envelope.type)).toEqual(["broadcast.completed"])
    expect((await db<{ n: number }>("SELECT count(*)::int AS n FROM webhook_deliveries WHERE account_id = $1", [accounts.b]))[0]!.n).toBe(1)
  })

  it("reach an opted-in endpoint once each by event id, in few signed, retried batches; others get none", async () => {
    await createHook("sentOnly", { url: `${consumerUrl}/sent`, events: ["message.sent"], bot_id: bots.a, include_broadcast_messages: true })
    await createHook("flaky", { url: `${consumerUrl}/flaky`, events: MESSAGE_EVENTS, bot_id: null, include_broadcast_messages: true })
    await createHook("otherBot", { url: `${consumerUrl}/other`, events: MESSAGE_EVENTS, bot_id: bots.other, include_broadcast_messages: true })
    // 0001 refused, 0002 never answered (failed after the window), 0003 refused five times, 0004
    // taken then cut (unconfirmed, then its reports count it sent), 0005 delivered never read, 0006
    // taken then revoked (failed by its report); the rest sent, delivered, read.
    const special = ["0001", "0002", "0003", "0004", "0005", "0006"].flatMap((suffix, s) => [phone(5000 + s * 2, suffix), phone(5001 + s * 2, suffix)])
    const phones = [...Array.from({ length: 1_200 }, (_, i) => phone(i)), ...special]
    const id = await broadcastTo(phones, "a")
    // Delivered and read keep coming after completion.
    const expectedReads = phones.filter((p) => !/(0001|0002|0003|0005|0006)$/.test(p)).length
    await eventually(async () => expect((await call("GET", `/api/v1/rcs/broadcasts/${id}`)).body.broadcast.read_count).toBe(expectedReads), {
      timeoutMs: 60_000,
      intervalMs: 250
    })
    const targets = await allTargets(id, tokens.a!)
    expect(targets).toHaveLength(phones.length)

    // What each target's transitions make: sent when it is counted sent (the gateway took it, or a
    // report showed it reached the recipient: 0004), but for 0006 only if the send's outcome was
    // recorded before its revocation came (else it went from claimed to failed); failed when it ends
    // failed (and a 0004, or any target that reached the recipient, at most once more: on a loaded
    // machine a send's answer may come after the gateway timeout, and its report window end before
    // its reports do: it is failed as unconfirmed before they move it on); read when read;
    // delivered when delivered (and, for a read one, once at most: a read report may overtake its
    // delivery report).
    type Times = "once" | "at most once" | "never"
    const expected = new Map<string, { sent: Times; delivered: Times; read: boolean; failed: Times }>()
    for (const t of targets) {
      const suffix = t.phone.slice(-4)
      expected.set(t.message_id, {
        sent: ["0001", "0002", "0003"].includes(suffix) ? "never" : suffix === "0006" ? "at most once" : "once",
        delivered: t.status === "delivered" ? "once" : t.status === "read" ? "at most once" : "never",
        read: t.status === "read",
        failed: t.status === "failed" ? "once" : suffix === "0004" || t.status === "delivered" || t.status === "read" ? "at most once" : "never"
      })
    }
    const wanted = [...expected.values()].reduce((n, e) => n + Number(e.sent === "once") + Number(e.read) + Number(e.failed === "once") + Number(e.delivered === "once"), 0)
    const times = (count: number, expect_: Times, what: string) => {
      if (expect_ === "once") expect(count, what).toBe(1)
      else if (expect_ === "never") expect(count, what).toBe(0)
      else expect(count, what).toBeLessThanOrEqual(1)
    }

    const check = (events: Array<any>, types: ReadonlyArray<string>) => {
      const byKey = new Map<string, number>()
      for (const e of events) {
        expect(types).toContain(e.type)
        expect(e.data).toMatchObject({ message_id: expect.any(String), bot_id: bots.a, broadcast_id: id, to: expect.stringMatching(/^\+91/), status: e.type.slice(8) })
        expect(e.occurred_at).toMatch(/Z$/)
        if (e.type === "message.failed") expect(e.data).toMatchObject({ message: expect.any(String), category: expect.any(String) })
        const key = `${e.data.message_id} ${e.type}`
        byKey.set(key, (byKey.get(key) ?? 0) + 1)
      }
      for (const [messageId, e] of expected) {
        const count = (type: string) => byKey.get(`${messageId} ${type}`) ?? 0
        const what = `${messageId} ${JSON.stringify(e)}`
        if (types.includes("message.sent")) times(count("message.sent"), e.sent, what)
        if (types.includes("message.read")) expect(count("message.read"), what).toBe(Number(e.read))
        if (types.includes("message.failed")) times(count("message.failed"), e.failed, what)
        if (types.includes("message.delivered")) times(count("message.delivered"), e.delivered, what)
      }
      for (const key of byKey.keys()) expect(expected.has(key.split(" ")[0]!), key).toBe(true)
    }

    // Until every event has come (the check fails while one is missing), then once more a while later.
    for (const path of ["/all", "/flaky"]) await eventually(async () => check(batchEventsAt(path), MESSAGE_EVENTS), { timeoutMs: 30_000, intervalMs: 250 })
    await eventually(async () => check(batchEventsAt("/sent"), ["message.sent"]), { timeoutMs: 30_000, intervalMs: 250 })
    expect(batchEventsAt("/all").length).toBeGreaterThanOrEqual(wanted)
    // Nothing more comes once everything has.
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    check(batchEventsAt("/all"), MESSAGE_EVENTS)

    // Few requests, each a signed message.batch of at most MAX_EVENTS events for this broadcast.
    const batches = okAt("/all").filter((r) => r.envelope.type === "message.batch")
    const events = batchEventsAt("/all")
    expect(batches.length).toBeLessThanOrEqual(Math.ceil(events.length / 10))
    for (const r of batches) {
      const verified = new Webhook(hooks.all!.secret).verify(r.body, {
        "webhook-id": String(r.headers["webhook-id"]),
        "webhook-timestamp": String(r.headers["webhook-timestamp"]),
        "webhook-signature": String(r.headers["webhook-signature"])
      }) as any
      expect(verified).toMatchObject({
        type: "message.batch",
        delivery_id: r.headers["webhook-id"],
        account_id: accounts.a,
        event_id: expect.any(String),
        occurred_at: expect.any(String),
        data: { broadcast_id: id, bot_id: bots.a, count: r.envelope.data.events.length }
      })
      expect(r.envelope.data.events.length).toBeGreaterThan(0)
      expect(r.envelope.data.events.length).toBeLessThanOrEqual(MAX_EVENTS)
    }
    // broadcast.completed is its own event, as before.
    expect(okAt("/all").filter((r) => r.envelope.type === "broadcast.completed")).toHaveLength(1)

    // Retried: every batch to /flaky was refused once and taken on its second attempt (1 s later).
    const flaky = received.filter((r) => r.path === "/flaky")
    const deliveries = new Set(flaky.map((r) => String(r.headers["webhook-id"])))
    for (const deliveryId of deliveries) {
      expect(flaky.filter((r) => r.headers["webhook-id"] === deliveryId).map((r) => r.status), deliveryId).toEqual([500, 200])
    }
    const attempts = (await call("GET", `/api/v1/rcs/webhooks/${hooks.flaky!.webhook_id}/deliveries?limit=500`)).body.deliveries as Array<any>
    expect(attempts.filter((a) => a.event_type === "message.batch").length).toBe(2 * deliveries.size)

    // Others: the endpoint without the flag and the one of another bot get none.
    expect(okAt("/plain")).toEqual([])
    expect(received.filter((r) => r.path === "/other")).toEqual([])

    // Staged once per event and endpoint that asked for it, and nothing left staged.
    const staged = await db<{ webhook_id: string; type: string; message_id: string; n: number }>(
      "SELECT webhook_id::text, type, message_id, count(*)::int AS n FROM test_staged WHERE account_id = $1 GROUP BY 1, 2, 3",
      [accounts.a]
    )
    expect(staged.filter((r) => r.n !== 1)).toEqual([])
    expect(new Set(staged.map((r) => r.webhook_id))).toEqual(new Set([hooks.all!.webhook_id, hooks.flaky!.webhook_id, hooks.sentOnly!.webhook_id]))
    expect(staged.filter((r) => r.webhook_id === hooks.all!.webhook_id)).toHaveLength(events.length)
    expect((await db<{ n: number }>("SELECT count(*)::int AS n FROM webhook_batch_items"))[0]!.n).toBe(0)
  }, 180_000)
})
