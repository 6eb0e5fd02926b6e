import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor, ownerSession } from "../support/http.ts"
import { startConsumer } from "../support/consumer.ts"
import { freePort } from "../support/TcpProxy.ts"
import { randomUUID } from "node:crypto"
import { DEV_WA_APP_SECRET } from "../../src/config/AppConfig.ts"
import { signWaBody } from "../../src/simulator/whatsapp/webhooks.ts"

// The app API (/api/v1/app, docs/app-api.md) end to end with secret keys: /me on every plan,
// Starter locked out of the rest, contacts (idempotent by phone, search, tag, segment, cursor),
// segments with a live count, billing, send-text through the public send path, the streamed
// customer import, AI agent definitions (Advanced and up) and their turns on inbound messages
// (FAQ answer, keyword and no-match handoffs with conversation.handoff), another account's ids 404.

const iso = useIsolation()
const db = useDb(iso)
let node: HeraldProcess
let simUrl: string
let consumer: Awaited<ReturnType<typeof startConsumer>>
const accounts: Record<string, string> = {}
const keys: Record<string, string> = {}
let numberA = ""

type Json = Record<string, any>

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const app = (method: string, path: string, body?: unknown, key = keys.a!) => callJson(node.url, method, `/api/v1/app${path}`, `Bearer ${key}`, body)
const paths = (body: Json) => (body.errors ?? []).map((e: Json) => e.path)
const customerCount = async (account: string) => Number((await db<{ n: string }>("SELECT count(*) AS n FROM customers WHERE account_id = $1", [account]))[0]!.n)

const importBody = (body: string, contentType: string, key = keys.a!) =>
  fetch(`${node.url}/api/v1/app/contacts/import`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": contentType }, body }).then(async (r) => ({
    status: r.status,
    body: (await r.json()) as Json
  }))

const inbound = async (from: string, text: string) => {
  const r = await fetch(`${simUrl}/simulate/wa/inbound`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ phone_number_id: numberA, from, text })
  })
  expect(r.status).toBe(202)
  return ((await r.json()) as { id: string }).id
}

beforeAll(async () => {
  const simPort = await freePort()
  simUrl = `http://127.0.0.1:${simPort}`
  const env = envFor(iso, { GATEWAY_SIM_PORT: String(simPort), GATEWAY_SIM_DELIVERED_MS: "100", LOG_LEVEL: "warning", WEBHOOK_ALLOW_PRIVATE: "true" })
  const cli = cliFor(env)
  consumer = await startConsumer()
  node = await startHerald(env)
  const plans = { a: "advanced", o: "advanced", g: "growth", s: "starter" } as const
  const made = await Promise.all(Object.entries(plans).map(([name, plan]) =>
    cli("admin", "create-account", "--email", `${name}@app.io`, "--password", `${name} password`, "--label", `label ${name}`, "--plan", plan)
  ))
  Object.keys(plans).forEach((name, i) => (accounts[name] = made[i].account_id))
  const [number] = await Promise.all([
    cli("admin", "create-wa-number", accounts.a!, "--phone", "+919800000901"),
    cli("admin", "wallet-credit", accounts.a!, "25.5")
  ])
  numberA = number.phone_number_id
  // The advanced plan's 600/minute would refuse this file's bursts (what `set-plan --rate` writes for Enterprise).
  await db("UPDATE accounts SET plan = 'enterprise', plan_rate_per_minute = 60000 WHERE account_id = $1", [accounts.a])
  const jwt: Record<string, string> = {}
  await Promise.all(Object.keys(plans).map(async (name) => {
    const session = await ownerSession(node.url, `${name}@app.io`, `${name} password`)
    jwt[name] = session.jwt
    keys[name] = session.key
  }))
  const dev = await callJson(node.url, "PUT", "/api/v1/app/developer/webhook", jwt.a, { url: consumer.url("/dev") })
  expect(dev.status).toBe(200)
}, 300_000)
afterAll(async () => {
  await node?.kill()
  await consumer?.close()
})

describe("/app/me and plan gating", () => {
  it("answers on every plan with the label, plan, rate and wallet", async () => {
    const [a, g, s] = await Promise.all([app("GET", "/me"), app("GET", "/me", undefined, keys.g), app("GET", "/me", undefined, keys.s)])
    expect(a).toEqual({
      status: 200,
      body: { success: true, account: { account_id: accounts.a, label: "label a", plan: "enterprise", rate_limit_per_minute: 60000, wallet: { balance: 25.5, currency: "INR" } } }
    })
    expect(g.body.account).toMatchObject({ plan: "growth", rate_limit_per_minute: 300, wallet: { balance: 0, currency: "INR" } })
    expect(s.body.account).toMatchObject({ label: "label s", plan: "starter", rate_limit_per_minute: 60 })
    expect((await app("GET", "/me", undefined, "sk_live_wrong")).status).toBe(401)
  })

  it("locks every other path on Starter with feature_locked, and AI agents below Advanced", async () => {
    const locked = await Promise.all([
      app("GET", "/contacts", undefined, keys.s),
      app("POST", "/contacts", { phone: "+919876500001" }, keys.s),
      app("GET", "/segments", undefined, keys.s),
      app("GET", "/billing", undefined, keys.s),
      app("POST", "/messages/send-text", { to: "+919876500001", text: "hi" }, keys.s),
      app("GET", "/ai-agents", undefined, keys.s),
      app("GET", "/integrations/logs", undefined, keys.s),
      importBody("phone\n+919876500001\n", "text/csv", keys.s)
    ])
    for (const r of locked) expect(r).toMatchObject({ status: 403, body: { success: false, code: "feature_locked" } })
    const growth = await Promise.all([app("GET", "/ai-agents", undefined, keys.g), app("POST", "/ai-agents", { name: "x" }, keys.g)])
    for (const r of growth) expect(r).toMatchObject({ status: 403, body: { code: "feature_locked", message: expect.stringContaining("growth") } })
    expect(await customerCount(accounts.s!)).toBe(0)
    expect((await app("GET", "/contacts", undefined, keys.g)).status).toBe(200)
  })

  it("gives Starter's /me its own bucket of 60 a minute", async () => {
    const answers = await Promise.all(Array.from({ length: 70 }, () => app("GET", "/me", undefined, keys.s)))
    const refused = answers.filter((r) => r.status === 429)
    expect(refused.length).toBeGreaterThan(0)
    expect(refused[0]!.body.code).toBe("rate_limited")
  })
})

describe("contacts", () => {
  it("creates by phone and updates the same contact on a repeat; reads, patches and deletes it", async () => {
    const first = await app("POST", "/contacts", { phone: "919876510001", name: " Asha ", user_id: "crm-1", traits: { plan: "gold", visits: 3 }, tags: ["vip"] })
    expect(first).toEqual({
      status: 200,
      body: {
        success: true,
        created: true,
        contact: {
          id: expect.stringMatching(UUID),
          phone: "+919876510001",
          name: "Asha",
          user_id: "crm-1",
          traits: { plan: "gold", visits: 3 },
          tags: ["vip"],
          created_at: expect.any(String),
          last_seen_at: null
        }
      }
    })
    const id = first.body.contact.id
    const again = await app("POST", "/contacts", { phone: "+91 98765 10001", traits: { visits: 4, plan: null }, tags: ["vip", "new"] })
    expect(again.body).toMatchObject({ created: false, contact: { id, name: "Asha", traits: { visits: 4 }, tags: ["vip", "new"] } })
    const patched = await app("PATCH", `/contacts/${id}`, { name: null, tags: ["only"], traits: { city: "Pune" } })
    expect(patched.body.contact).toMatchObject({ id, name: null, user_id: "crm-1", tags: ["only"], traits: { visits: 4, city: "Pune" } })
    expect((await app("GET", `/contacts/${id}`)).body.contact).toEqual(patched.body.contact)
    // Another account's key, a malformed id: not found.
    expect((await app("GET", `/contacts/${id}`, undefined, keys.o)).status).toBe(404)
    expect((await app("PATCH", `/contacts/${id}`, { name: "x" }, keys.o)).status).toBe(404)
    expect((await app("DELETE", `/contacts/${id}`, undefined, keys.o)).status).toBe(404)
    expect((await app("GET", "/contacts/not-a-uuid")).status).toBe(404)
    expect(await app("DELETE", `/contacts/${id}`)).toEqual({ status: 200, body: { success: true } })
    expect((await app("GET", `/contacts/${id}`)).status).toBe(404)
  })

  it("refuses bad input with 400 naming each field, and writes nothing", async () => {
    const before = await customerCount(accounts.a!)
    const bad = await app("POST", "/contacts", { phone: "12", name: "", traits: { "": 1 }, tags: [""] })
    expect(bad.status).toBe(400)
    expect(bad.body.code).toBe("invalid_request")
    expect(paths(bad.body)).toEqual(expect.arrayContaining(["phone", "name", "tags[0]"]))
    expect((await app("POST", "/contacts", { phone: "+919876510002", surname: "x" })).status).toBe(400)
    expect((await app("POST", "/contacts", { name: "no phone" })).status).toBe(400)
    const { body } = await app("POST", "/contacts", { phone: "+919876510003" })
    const tooMany = await app("PATCH", `/contacts/${body.contact.id}`, { tags: Array.from({ length: 101 }, (_, i) => `t${i}`) })
    expect(tooMany.status).toBe(400)
    expect((await app("PATCH", `/contacts/${body.contact.id}`, { phone: "+919876510004" })).status).toBe(400)
    expect(await customerCount(accounts.a!)).toBe(before + 1)
    expect((await app("GET", `/contacts/${body.contact.id}`)).body.contact.tags).toEqual([])
  })

  it("lists newest first by cursor, narrowed by search, tag and segment", async () => {
    const made: Array<string> = []
    for (let i = 0; i < 7; i++) {
      const r = await app("POST", "/contacts", { phone: `+9198765200${10 + i}`, name: i % 2 === 0 ? `Lister Even ${i}` : `Lister Odd ${i}`, tags: i % 2 === 0 ? ["list-even"] : [], traits: { rank: i } })
      made.unshift(r.body.contact.id)
    }
    const walked: Array<string> = []
    let cursor = ""
    do {
      const page = await app("GET", `/contacts?search=lister&limit=3${cursor ? `&cursor=${cursor}` : ""}`)
      expect(page.status).toBe(200)
      expect(page.body.contacts.length).toBeLessThanOrEqual(3)
      walked.push(...page.body.contacts.map((c: Json) => c.id))
      cursor = page.body.next_cursor
    } while (cursor !== "")
    expect(walked).toEqual(made)
    const byPhone = await app("GET", "/contacts?search=98765200")
    expect(byPhone.body.contacts).toHaveLength(7)
    const tagged = await app("GET", "/contacts?search=LISTER&tag=list-even")
    expect(tagged.body.contacts.map((c: Json) => c.name)).toEqual(["Lister Even 6", "Lister Even 4", "Lister Even 2", "Lister Even 0"])
    const segment = await app("POST", "/segments", { name: "high rank", filters: [{ trait: "rank", op: "gte", value: 4 }] })
    const inSegment = await app("GET", `/contacts?segment_id=${segment.body.segment.id}&tag=list-even`)
    expect(inSegment.body.contacts.map((c: Json) => c.name)).toEqual(["Lister Even 6", "Lister Even 4"])
    expect((await app("GET", `/contacts?segment_id=${segment.body.segment.id}`, undefined, keys.o)).status).toBe(404)
    expect((await app("GET", "/contacts?cursor=bogus")).status).toBe(400)
    expect((await app("GET", "/contacts?limit=0")).status).toBe(400)
  })
})

describe("segments", () => {
  it("saves a search with a live count, pages its members, changes and deletes it", async () => {
    const created = await app("POST", "/segments", { name: "gold buyers", filters: [{ trait: "tier", op: "eq", value: "gold" }], tags: ["buyer"] })
    expect(created).toEqual({
      status: 200,
      body: {
        success: true,
        segment: {
          id: expect.stringMatching(UUID),
          name: "gold buyers",
          filters: [{ trait: "tier", op: "eq", value: "gold" }],
          tags: ["buyer"],
          customer_count: 0,
          created_at: expect.any(String),
          updated_at: expect.any(String)
        }
      }
    })
    const id = created.body.segment.id
    await app("POST", "/contacts", { phone: "+919876530001", traits: { tier: "gold" }, tags: ["buyer"] })
    await app("POST", "/contacts", { phone: "+919876530002", traits: { tier: "gold" } })
    await app("POST", "/contacts", { phone: "+919876530003", traits: { tier: "gold" }, tags: ["buyer", "x"] })
    expect((await app("GET", `/segments/${id}`)).body.segment.customer_count).toBe(2)
    const members = await app("GET", `/segments/${id}/contacts?limit=1`)
    expect(members.body.contacts.map((c: Json) => c.phone)).toEqual(["+919876530003"])
    const rest = await app("GET", `/segments/${id}/contacts?limit=1&cursor=${members.body.next_cursor}`)
    expect(rest.body).toMatchObject({ contacts: [{ phone: "+919876530001" }], next_cursor: "" })
    const widened = await app("PATCH", `/segments/${id}`, { tags: [] })
    expect(widened.body.segment).toMatchObject({ name: "gold buyers", tags: [], customer_count: 3 })
    const listed = await app("GET", "/segments")
    expect(listed.body.segments.map((s: Json) => s.id)).toContain(id)
    expect((await app("POST", "/segments", { name: "gold buyers" })).status).toBe(409)
    expect((await app("GET", `/segments/${id}`, undefined, keys.o)).status).toBe(404)
    expect((await app("GET", `/segments/${id}/contacts`, undefined, keys.o)).status).toBe(404)
    expect(await app("DELETE", `/segments/${id}`)).toEqual({ status: 200, body: { success: true } })
    expect((await app("GET", `/segments/${id}`)).status).toBe(404)
  })

  it("checks filters with the public search's rules, naming each problem, and stores nothing", async () => {
    const before = (await app("GET", "/segments?limit=100")).body.segments.length
    const bad = await app("POST", "/segments", { name: "", filters: [{ trait: "age", op: "between", value: 1 }, { trait: "age", op: "gt", value: "old" }], tags: [""] })
    expect(bad.status).toBe(400)
    expect(paths(bad.body)).toEqual(expect.arrayContaining(["name", "filters[0].op", "filters[1].value", "tags[0]"]))
    expect((await app("GET", "/segments?limit=100")).body.segments.length).toBe(before)
  })
})

describe("billing and send-text", () => {
  it("shows the plan, wallet, the latest ledger rows and the prices", async () => {
    const r = await app("GET", "/billing")
    expect(r).toEqual({
      status: 200,
      body: {
        success: true,
        plan: "enterprise",
        rate_limit_per_minute: 60000,
        wallet: { balance: 25.5, currency: "INR" },
        transactions: [{ txn_id: expect.stringMatching(UUID), kind: "credit", amount: 25.5, balance_after: 25.5, reference: null, created_at: expect.any(String) }],
        prices: { rcs_message: expect.any(Number), wa_marketing: expect.any(Number), wa_utility: expect.any(Number), wa_authentication: expect.any(Number) }
      }
    })
  })

  it("sends a text through the public send path: the window, the number, the field names of this body", async () => {
    // Not one of the simulator's failing recipients (numbers ending 0001 to 0006).
    const customer = "+919876540011"
    const outside = await app("POST", "/messages/send-text", { to: customer, text: "hello" })
    expect(outside).toMatchObject({ status: 422, body: { code: "outside_service_window" } })
    expect((await app("POST", "/messages/send-text", { to: customer, text: "hello" }, keys.g)).body.code).toBe("no_wa_number")
    const bad = await app("POST", "/messages/send-text", { to: "12", text: "" })
    expect(bad.status).toBe(400)
    expect(paths(bad.body)).toEqual(expect.arrayContaining(["to", "text"]))
    await inbound(customer, "hi there")
    const sent = await eventually(async () => {
      const r = await app("POST", "/messages/send-text", { to: customer, text: "hello back" })
      expect(r.status).toBe(202)
      return r.body
    })
    expect(sent).toEqual({ success: true, message_id: expect.stringMatching(UUID), status: "queued" })
    await eventually(async () => {
      const [row] = await db<{ status: string }>("SELECT status FROM wa_messages WHERE message_id = $1", [sent.message_id])
      expect(row?.status).toMatch(/accepted|sent|delivered/)
    })
  })
})

describe("contacts import", () => {
  it("upserts CSV rows: added, updated, repeats as duplicates, invalid rows with reasons; traits from the other columns", async () => {
    await app("POST", "/contacts", { phone: "+919876550001", name: "Before", traits: { city: "Delhi", keep: "yes" } })
    const csv = [
      "phone,name,city,plan",
      "+919876550001,,Mumbai,",
      "+919876550002,New One,Pune,gold",
      "919876550002,Again,,silver",
      "12,Bad,,",
      ",No phone,,"
    ].join("\n")
    const r = await importBody(csv, "text/csv")
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      success: true,
      added: 1,
      updated: 1,
      duplicates: 1,
      invalid: [
        { row: 4, phone: "12", reason: expect.any(String) },
        { row: 5, phone: "", reason: "phone is missing" }
      ],
      invalid_count: 2
    })
    const existing = await app("GET", "/contacts?search=98765500")
    const byPhone = Object.fromEntries(existing.body.contacts.map((c: Json) => [c.phone, c]))
    expect(byPhone["+919876550001"]).toMatchObject({ name: "Before", traits: { city: "Mumbai", keep: "yes" } })
    expect(byPhone["+919876550002"]).toMatchObject({ name: "Again", traits: { city: "Pune", plan: "silver" } })
  })

  it("takes NDJSON lines of the POST body, across batches, and refuses what it cannot read with nothing written", async () => {
    const lines = [
      JSON.stringify({ phone: "+919876560001", name: "Nd", user_id: "u1", traits: { score: 9, vip: true }, tags: ["nd"] }),
      JSON.stringify({ phone: "+919876560001", traits: { score: null }, tags: ["two"] }),
      JSON.stringify({ phone: "+919876560002", nickname: "x" }),
      // A contact of the CSV import above: a null removes its trait.
      JSON.stringify({ phone: "+919876550001", traits: { keep: null } })
    ]
    const r = await importBody(lines.join("\n") + "\n", "application/x-ndjson")
    expect(r.body).toMatchObject({ added: 1, updated: 1, duplicates: 1, invalid_count: 1, invalid: [{ row: 3, reason: expect.stringContaining("nickname") }] })
    expect((await app("GET", "/contacts?search=919876550001")).body.contacts[0].traits).toEqual({ city: "Mumbai" })
    const [contact] = (await app("GET", "/contacts?search=98765600")).body.contacts
    expect(contact).toMatchObject({ name: "Nd", user_id: "u1", traits: { vip: true }, tags: ["nd", "two"] })
    const before = await customerCount(accounts.a!)
    const broken = await importBody(`${JSON.stringify({ phone: "+919876560003" })}\n{"phone": `, "application/x-ndjson")
    expect(broken).toMatchObject({ status: 400, body: { code: "invalid_request" } })
    expect((await importBody("phone\n+919876560004\n", "text/plain")).status).toBe(415)
    expect(await customerCount(accounts.a!)).toBe(before)
  })
})

describe("AI agents", () => {
  const faq = [{ question: "opening hours", answer: "We are open 9 to 6." }, { question: "price", answer: "Plans start at 499." }]

  it("defines, reads, lists, changes and deletes agents on Advanced and up, checking every field", async () => {
    const created = await app("POST", "/ai-agents", { name: "Desk", instructions: "Be brief.", faq, handoff_keywords: ["human", "Agent"] }, keys.o)
    expect(created).toEqual({
      status: 200,
      body: {
        success: true,
        ai_agent: {
          id: expect.stringMatching(UUID),
          name: "Desk",
          instructions: "Be brief.",
          faq,
          handoff_keywords: ["human", "Agent"],
          active: true,
          assignee: `ai:${created.body.ai_agent.id}`,
          created_at: expect.any(String),
          updated_at: expect.any(String)
        }
      }
    })
    const id = created.body.ai_agent.id
    expect((await app("GET", `/ai-agents/${id}`, undefined, keys.o)).body.ai_agent.name).toBe("Desk")
    expect((await app("GET", `/ai-agents/${id}`)).status).toBe(404)
    const off = await app("PATCH", `/ai-agents/${id}`, { active: false }, keys.o)
    expect(off.body.ai_agent).toMatchObject({ active: false, faq, name: "Desk" })
    expect((await app("GET", "/ai-agents", undefined, keys.o)).body.ai_agents.map((a: Json) => a.id)).toEqual([id])
    const bad = await app("POST", "/ai-agents", { name: "", faq: [{ question: "", answer: "x".repeat(5000) }], handoff_keywords: [""] }, keys.o)
    expect(bad.status).toBe(400)
    expect(paths(bad.body)).toEqual(expect.arrayContaining(["name", "faq[0].question", "faq[0].answer", "handoff_keywords[0]"]))
    expect((await app("GET", "/ai-agents", undefined, keys.o)).body.ai_agents).toHaveLength(1)
    expect(await app("DELETE", `/ai-agents/${id}`, undefined, keys.o)).toEqual({ status: 200, body: { success: true } })
    expect((await app("GET", `/ai-agents/${id}`, undefined, keys.o)).status).toBe(404)
  })

  it("answers FAQ questions through the send path, hands off on a keyword or an unmatched text, and an inactive agent stays silent", async () => {
    const agent = (await app("POST", "/ai-agents", { name: "Bot", faq, handoff_keywords: ["human"] })).body.ai_agent
    const customer = "+919876570011"
    const pub = (path: string, body: Json) => callJson(node.url, "POST", `/api/v1/public${path}`, `Basic ${keys.a}`, body)
    const assignToAgent = async () => {
      const r = await pub("/chats/assign", { fullPhoneNumber: customer, agentEmail: `ai:${agent.id}` })
      expect(r.status).toBe(200)
      expect(r.body.conversation.assignee_email).toBe(`ai:${agent.id}`)
    }
    const answers = () => db<{ body: string }>("SELECT content -> 'object' ->> 'body' AS body FROM wa_messages WHERE recipient = $1 ORDER BY created_at", [customer])
    const handoffs = () => consumer.received.filter((r) => r.path === "/dev").map((r) => JSON.parse(r.body)).filter((e) => e.type === "conversation.handoff")

    await inbound(customer, "hello")
    await eventually(assignToAgent)
    const graphql = await callJson(node.url, "POST", "/api/v1/graphql", `Bearer ${keys.a}`, {
      query: `{ conversations(filter: {assignee_email: "ai:${agent.id}"}) { edges { node { assignee { kind ai_agent_id email } } } } }`
    })
    expect(graphql.body.data.conversations.edges).toEqual([{ node: { assignee: { kind: "AI", ai_agent_id: agent.id, email: null } } }])
    // Another account's agent is no one this account can assign.
    const foreign = (await app("POST", "/ai-agents", { name: "Other" }, keys.o)).body.ai_agent
    expect((await pub("/chats/assign", { fullPhoneNumber: customer, agentEmail: `ai:${foreign.id}` })).body.code).toBe("agent_not_found")

    await inbound(customer, "What are your OPENING  hours and the price?")
    await eventually(async () => expect((await answers()).map((r) => r.body)).toEqual(["We are open 9 to 6."]))

    await inbound(customer, "I want a human please")
    const keyword = await eventually(async () => {
      const [event] = handoffs()
      expect(event).toBeDefined()
      return event
    })
    expect(keyword.data).toMatchObject({ ai_agent_id: agent.id, reason: "keyword", text: "I want a human please", conversation_id: expect.stringMatching(UUID) })
    const conversation = (await pub("/chats/assign", { fullPhoneNumber: customer, agentEmail: "" })).body.conversation
    expect(conversation.id).toBe(keyword.data.conversation_id)

    await assignToAgent()
    await inbound(customer, "do you ship to Goa?")
    await eventually(async () => expect(handoffs().map((e) => e.data.reason)).toEqual(["keyword", "no_match"]))
    const unassigned = await pub("/chats/assign", { fullPhoneNumber: customer, agentEmail: "" })
    expect(unassigned.body.conversation.assignee_email).toBeNull()

    await assignToAgent()
    await app("PATCH", `/ai-agents/${agent.id}`, { active: false })
    await inbound(customer, "price?")
    await inbound(customer, "human")
    await new Promise((r) => setTimeout(r, 1500))
    expect((await answers()).map((r) => r.body)).toEqual(["We are open 9 to 6."])
    expect(handoffs()).toHaveLength(2)
  })
})

describe("an AI agent's answer across a crash", () => {
  it("is sent once when Meta repeats the webhook of a message whose answer was recorded but never queued", async () => {
    const agent = (await app("POST", "/ai-agents", { name: "Crash", faq: [{ question: "status", answer: "All systems normal." }] })).body.ai_agent
    const customer = "+919876580011"
    await inbound(customer, "hello")
    await eventually(async () => {
      const r = await callJson(node.url, "POST", "/api/v1/public/chats/assign", `Basic ${keys.a}`, { fullPhoneNumber: customer, agentEmail: `ai:${agent.id}` })
      expect(r.status).toBe(200)
    })
    // Meta's webhook of a message, signed as Meta signs it; sent again, as Meta retries one it had
    // no answer to.
    const wamid = `wamid.crash-${Date.now()}`
    const webhook = new TextEncoder().encode(JSON.stringify({
      object: "whatsapp_business_account",
      entry: [{ id: "waba", changes: [{ field: "messages", value: {
        messaging_product: "whatsapp",
        metadata: { phone_number_id: numberA, display_phone_number: "919800000901" },
        contacts: [{ wa_id: customer.slice(1), profile: { name: "Crash" } }],
        messages: [{ id: wamid, from: customer.slice(1), timestamp: String(Math.floor(Date.now() / 1000)), type: "text", text: { body: "status please" } }]
      } }] }]
    }))
    const deliver = () =>
      fetch(`${node.url}/api/v1/public/gateway/whatsapp`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-hub-signature-256": signWaBody(webhook, DEV_WA_APP_SECRET) },
        body: webhook
      }).then((r) => r.status)
    const sends = () => db<{ messageId: string }>("SELECT message_id::text AS \"messageId\" FROM wa_messages WHERE recipient = $1", [customer])
    // The node recorded the message and its answer, then died before the answer reached the
    // number's sender: the transaction's rows are all that is left of it.
    const [conversation] = await db<{ conversationId: string; customerId: string }>(
      "SELECT conversation_id::text AS \"conversationId\", customer_id::text AS \"customerId\" FROM conversations WHERE customer_phone = $1",
      [customer]
    )
    const answerId = randomUUID()
    await db(
      `INSERT INTO wa_inbound (upstream_id, account_id, phone_number_id, conversation_id, customer_id, sender, type, text, payload, received_at, ai_reply)
       VALUES ($1, $2, $3, $4, $5, $6, 'Text', 'status please', '{}', now(), $7)`,
      [wamid, accounts.a, numberA, conversation!.conversationId, conversation!.customerId, customer, JSON.stringify({ agentId: agent.id, messageId: answerId, text: "All systems normal." })]
    )
    expect(await sends()).toEqual([])
    expect(await deliver()).toBe(200)
    await eventually(async () => expect((await sends()).map((r) => r.messageId)).toEqual([answerId]))
    // Once the sender has it, a further repeat sends nothing.
    expect(await deliver()).toBe(200)
    await new Promise((r) => setTimeout(r, 500))
    expect((await sends()).map((r) => r.messageId)).toEqual([answerId])
  })
})

describe("integration logs", () => {
  it("lists by cursor with the secret key", async () => {
    expect(await app("GET", "/integrations/logs")).toEqual({ status: 200, body: { success: true, logs: [], next_cursor: "" } })
  })
})

it("every event its consumer received is what the API reference's webhooks document (strictly)", () => {
  expect(consumer.received.length).toBeGreaterThan(0)
  expect(consumer.undocumented).toEqual([])
})
