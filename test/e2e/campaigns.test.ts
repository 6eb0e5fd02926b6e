import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { startConsumer } from "../support/consumer.ts"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"
import { freePort } from "../support/TcpProxy.ts"
import { body as tBody } from "../support/waTemplates.ts"

// WhatsApp campaigns end to end (docs/campaigns.md) through the in-process Cloud API simulator: a
// campaign over a segment with per-customer trait values, opted-out customers skipped (counted,
// never sent or charged), each delivered message charged once at its category's price, the
// counters and targets as a client reads them, broadcast.completed to the developer webhook, a
// scheduled campaign, customer ids as the audience, cancel, and every refusal before anything is
// written.

const iso = useIsolation()
const db = useDb(iso)
let node: HeraldProcess
let simUrl: string
let consumer: Awaited<ReturnType<typeof startConsumer>>
let number = ""
const keys: Record<string, string> = {}
const MARKETING_PRICE = "0.8000"

type Json = Record<string, any>
const pub = (method: string, path: string, body?: unknown, key = keys.a!) => callJson(node.url, method, `/api/v1/public${path}`, `Basic ${key}`, body)
const app = (method: string, path: string, body?: unknown, key = keys.a!) => callJson(node.url, method, `/api/v1/app${path}`, `Bearer ${key}`, body)
const simPost = (path: string, body: unknown) =>
  fetch(`${simUrl}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
const simSends = async (id: string) => ((await (await fetch(`${simUrl}/simulate/wa/log?id=${id}`)).json()) as { sends: number }).sends
const campaignRows = async () => Number((await db<{ n: number }>("SELECT count(*)::int AS n FROM broadcasts WHERE channel = 'whatsapp'"))[0]!.n)

/**
 * Customers of Pune: 0-5 with a first_name, 6-9 without; 10-11 opt out by sending STOP; the last
 * ends in 0001, which the simulator answers 131026 (undeliverable). The simulator's other rules go
 * by the last four digits too (0002-0006), which no other number here ends in.
 */
const PUNE = [...Array.from({ length: 12 }, (_, i) => `9198765${String(40_020 + i)}`), "919876540001"]
const OPTED = PUNE.slice(10, 12)
const UNDELIVERABLE = PUNE[12]!
const MUMBAI = ["919876550021", "919876550022"]

const TEMPLATE = { name: "diwali_offer", languageCode: "en", bodyValues: ["{{trait.first_name}}", "{{trait.discount}}%"] }
const FALLBACKS = { first_name: "there", discount: "10" }

const completed = (id: string, timeoutMs = 30_000) =>
  eventually(async () => {
    const r = await pub("GET", `/campaigns/${id}`)
    expect(r.body.campaign.status).toBe("completed")
    return r.body.campaign as Json
  }, { timeoutMs })

beforeAll(async () => {
  const simPort = await freePort()
  simUrl = `http://127.0.0.1:${simPort}`
  const env = envFor(iso, {
    GATEWAY_SIM_PORT: String(simPort),
    GATEWAY_TIMEOUT_MS: "2000",
    GATEWAY_SIM_DELIVERED_MS: "100",
    GATEWAY_SIM_READ_MS: "250",
    GATEWAY_SIM_TEMPLATE_REVIEW_MS: "300",
    HERALD_WA_UNCONFIRMED_EXPIRY_MS: "3000",
    LOG_LEVEL: "warning"
  })
  const cli = cliFor(env)
  consumer = await startConsumer()
  node = await startHerald(env)
  const [a, b] = await Promise.all([
    cli("admin", "create-account", "--email", "a@campaigns.io", "--password", "a password", "--label", "a", "--plan", "growth"),
    cli("admin", "create-account", "--email", "b@campaigns.io", "--password", "b password", "--label", "b", "--plan", "growth")
  ])
  const [made] = await Promise.all([
    cli("admin", "create-wa-number", a.account_id, "--phone", "+919800000301", "--throughput", "200"),
    cli("admin", "create-wa-number", b.account_id, "--phone", "+919800000401"),
    cli("admin", "wallet-credit", a.account_id, "100"),
    // The test polls campaigns as a client would: a plan bucket this file cannot run out of.
    cli("admin", "set-plan", a.account_id, "enterprise", "--rate", "60000"),
    cli("admin", "wallet-credit", b.account_id, "1")
  ])
  number = made.phone_number_id
  for (const name of ["a", "b"]) {
    const jwt = (await callJson(node.url, "POST", "/api/v1/rcs/auth/login", undefined, { email: `${name}@campaigns.io`, password: `${name} password` })).body.token
    keys[name] = (await callJson(node.url, "POST", "/api/v1/app/developer/secret-key", jwt)).body.secret_key
    if (name === "a") expect((await callJson(node.url, "PUT", "/api/v1/app/developer/webhook", jwt, { url: consumer.url("/dev") })).status).toBe(200)
  }
  const created = await pub("POST", "/templates", {
    name: "diwali_offer",
    language: "en",
    category: "MARKETING",
    components: [tBody("Hi {{1}}, {{2}} off everything this Diwali.", ["Asha", "20%"])]
  })
  expect(created.status).toBe(201)
  await eventually(async () => expect((await pub("GET", `/templates/${created.body.template.id}`)).body.template.status).toBe("APPROVED"))
  await Promise.all([
    ...PUNE.map((phone, i) =>
      pub("POST", "/track/users", { fullPhoneNumber: phone, traits: { city: "Pune", ...(i < 6 ? { first_name: `Name${i}`, discount: 20 + i } : {}) } })),
    ...MUMBAI.map((phone) => pub("POST", "/track/users", { fullPhoneNumber: phone, traits: { city: "Mumbai" } }))
  ])
  for (const phone of OPTED) expect((await simPost("/simulate/wa/inbound", { phone_number_id: number, from: phone, text: "STOP" })).status).toBe(202)
  await eventually(async () => {
    const rows = await db("SELECT 1 FROM customers WHERE traits->>'opted_out' = 'true'")
    expect(rows).toHaveLength(OPTED.length)
  })
}, 300_000)
afterAll(async () => {
  await node?.kill()
  await consumer?.close()
})

describe("a campaign over a segment", () => {
  let campaign: Json

  it("sends every customer of the segment their own values, skips the opted out, completes with exact counters", async () => {
    const segment = await app("POST", "/segments", { name: "pune", filters: [{ trait: "city", op: "eq", value: "Pune" }] })
    expect(segment.status).toBe(200)
    const r = await pub("POST", "/campaigns", { name: "Diwali", template: TEMPLATE, fallbackValues: FALLBACKS, audience: { segment_id: segment.body.segment.id } })
    expect(r.status).toBe(201)
    expect(r.body.campaign).toMatchObject({ name: "Diwali", status: "queued", phone_number_id: number, category: "MARKETING", fallback_values: FALLBACKS })
    campaign = await completed(r.body.campaign.id)
    expect(campaign.counters).toMatchObject({ total: 13, sent: 10, failed: 1, skipped: 2, waiting: 0, cancelled: 0 })
    const targets = await db<{ phone: string; status: string; message_id: string; vars: Json | null }>(
      "SELECT phone, status, message_id::text, vars FROM broadcast_targets WHERE broadcast_id = $1 ORDER BY phone",
      [campaign.id]
    )
    expect(targets).toHaveLength(13)
    for (const target of targets) {
      const i = PUNE.indexOf(target.phone.slice(1))
      if (target.phone.slice(1) === UNDELIVERABLE) {
        expect(target.status).toBe("failed")
        expect(await simSends(target.message_id)).toBe(1)
      } else if (OPTED.includes(target.phone.slice(1))) {
        expect(target.status).toBe("skipped")
        expect(await simSends(target.message_id)).toBe(0)
      } else {
        // Each message left once; the customer's own traits travel with the target (the rest take the fallbacks when sent).
        expect(await simSends(target.message_id)).toBe(1)
        expect(target.vars).toEqual(i < 6 ? { first_name: `Name${i}`, discount: 20 + i } : {})
        expect(target.status).not.toBe("failed")
      }
    }
  }, 60_000)

  it("each delivered message is charged once at the category's price; failed and skipped ones never", async () => {
    const final = await eventually(async () => {
      const r = await pub("GET", `/campaigns/${campaign.id}`)
      expect(r.body.campaign.counters.delivered).toBe(10)
      return r.body.campaign
    })
    expect(final.counters.read).toBeLessThanOrEqual(10)
    const charged = await db<{ reference: string; amount: string }>(
      "SELECT reference, amount::text FROM wallet_transactions WHERE kind = 'charge' AND reference IN (SELECT message_id::text FROM broadcast_targets WHERE broadcast_id = $1)",
      [campaign.id]
    )
    expect(charged).toHaveLength(10)
    expect(new Set(charged.map((c) => c.amount))).toEqual(new Set([MARKETING_PRICE]))
  })

  it("its targets page by cursor, and filter by status", async () => {
    const first = await pub("GET", `/campaigns/${campaign.id}/targets?limit=5`)
    expect(first.status).toBe(200)
    expect(first.body.targets).toHaveLength(5)
    expect(first.body.targets[0]).toMatchObject({ target_no: 12, customer_id: expect.any(String), phone: expect.stringMatching(/^\+91/) })
    const seen = new Set(first.body.targets.map((t: Json) => t.target_no))
    let cursor = first.body.next_cursor
    while (cursor !== "") {
      const next = await pub("GET", `/campaigns/${campaign.id}/targets?limit=5&cursor=${encodeURIComponent(cursor)}`)
      for (const t of next.body.targets) seen.add(t.target_no)
      cursor = next.body.next_cursor
    }
    expect(seen.size).toBe(13)
    const skipped = await pub("GET", `/campaigns/${campaign.id}/targets?status=skipped`)
    expect(skipped.body.targets.map((t: Json) => t.phone).sort()).toEqual(OPTED.map((p) => `+${p}`).sort())
  })

  it("broadcast.completed reaches the developer webhook with the campaign's final counts", async () => {
    const event = await eventually(async () => {
      const found = consumer.received.filter((r) => r.path === "/dev").map((r) => JSON.parse(r.body)).find((e) => e.type === "broadcast.completed")
      expect(found).toBeDefined()
      return found
    })
    expect(event.data).toMatchObject({ broadcast_id: campaign.id, status: "completed", total_count: 13, failed_count: 1, skipped_count: 2, channel: "whatsapp" })
  })

  it("is listed on both surfaces; another account's key finds nothing", async () => {
    const listed = await app("GET", "/campaigns")
    expect(listed.status).toBe(200)
    expect(listed.body.campaigns.map((c: Json) => c.id)).toContain(campaign.id)
    expect((await pub("GET", `/campaigns/${campaign.id}`, undefined, keys.b)).status).toBe(404)
    expect((await pub("GET", "/campaigns", undefined, keys.b)).body.campaigns).toEqual([])
    // RCS broadcasts are another list.
    expect((await db("SELECT 1 FROM broadcasts WHERE channel = 'rcs'"))).toHaveLength(0)
  })
})

describe("audiences and schedules", () => {
  it("customer ids: exactly those customers", async () => {
    const ids = (await db<{ customer_id: string }>("SELECT customer_id::text FROM customers WHERE traits->>'city' = 'Mumbai'")).map((r) => r.customer_id)
    const r = await pub("POST", "/campaigns", { name: "Mumbai", template: TEMPLATE, fallbackValues: FALLBACKS, audience: { customer_ids: ids } })
    expect(r.status).toBe(201)
    const done = await completed(r.body.campaign.id)
    expect(done.counters).toMatchObject({ total: 2, sent: 2, skipped: 0 })
  }, 60_000)

  it("a send whose answer never came is unconfirmed, never sent again, and fails after the expiry; the campaign then completes", async () => {
    // The simulator holds a send to a number ending in 0002 open and never answers it.
    const phone = "919876570002"
    await pub("POST", "/track/users", { fullPhoneNumber: phone, traits: { city: "Nowhere" } })
    const r = await pub("POST", "/campaigns", { name: "Silent", template: TEMPLATE, fallbackValues: FALLBACKS, audience: { filters: [{ trait: "city", op: "eq", value: "Nowhere" }] } })
    expect(r.status).toBe(201)
    const unconfirmed = await eventually(async () => {
      const t = await pub("GET", `/campaigns/${r.body.campaign.id}/targets`)
      expect(t.body.targets[0]?.status).toBe("unconfirmed")
      return t.body.targets[0]
    })
    expect(unconfirmed.error).toMatchObject({ message: "send not confirmed", retryable: false })
    const done = await completed(r.body.campaign.id)
    expect(done.counters).toMatchObject({ total: 1, sent: 0, failed: 1 })
    expect(await simSends(unconfirmed.message_id)).toBe(1)
    expect(await db("SELECT 1 FROM wallet_transactions WHERE reference = $1", [unconfirmed.message_id])).toHaveLength(0)
  }, 60_000)

  it("a scheduled campaign waits for its time, then sends", async () => {
    const at = new Date(Date.now() + 3_000).toISOString()
    const r = await pub("POST", "/campaigns", { name: "Later", template: TEMPLATE, fallbackValues: FALLBACKS, audience: { filters: [{ trait: "city", op: "eq", value: "Mumbai" }] }, scheduled_at: at })
    expect(r.status).toBe(201)
    expect(r.body.campaign).toMatchObject({ status: "scheduled", scheduled_at: at })
    const done = await completed(r.body.campaign.id)
    expect(new Date(done.started_at).getTime()).toBeGreaterThanOrEqual(new Date(at).getTime())
    expect(done.counters).toMatchObject({ total: 2, sent: 2 })
  }, 60_000)

  it("a cancelled scheduled campaign sends nothing; a second cancel is 409", async () => {
    const at = new Date(Date.now() + 60_000).toISOString()
    const r = await pub("POST", "/campaigns", { name: "Never", template: TEMPLATE, fallbackValues: FALLBACKS, audience: { tags: ["nobody-has-it"] }, scheduled_at: at })
    expect(r.status).toBe(201)
    const cancelled = await pub("POST", `/campaigns/${r.body.campaign.id}/cancel`)
    expect(cancelled.status).toBe(200)
    expect(cancelled.body.campaign.status).toBe("cancelled")
    const again = await pub("POST", `/campaigns/${r.body.campaign.id}/cancel`)
    expect(again.status).toBe(409)
    expect(again.body).toMatchObject({ code: "conflict", key: "status" })
    expect(await db("SELECT 1 FROM broadcast_targets WHERE broadcast_id = $1", [r.body.campaign.id])).toHaveLength(0)
  })
})

describe("retry-failed", () => {
  // 0003: Meta answers 500 (category gateway), tried five times then failed; 0001: undeliverable (recipient).
  const GATEWAY_FAILS = "919876580003"
  const UNDELIVERABLE_TOO = "919876580001"
  const FINE = "919876580020"
  let first: Json

  it("a new run over the targets that failed with a category worth retrying, and no other", async () => {
    await Promise.all([GATEWAY_FAILS, UNDELIVERABLE_TOO, FINE].map((phone) => pub("POST", "/track/users", { fullPhoneNumber: phone, traits: { city: "Retry" } })))
    const r = await pub("POST", "/campaigns", { name: "Flaky", template: TEMPLATE, fallbackValues: FALLBACKS, audience: { filters: [{ trait: "city", op: "eq", value: "Retry" }] } })
    expect(r.status).toBe(201)
    first = await completed(r.body.campaign.id)
    expect(first.counters).toMatchObject({ total: 3, sent: 1, failed: 2 })
    const retried = await pub("POST", `/campaigns/${first.id}/retry-failed`)
    expect(retried.status).toBe(201)
    expect(retried.body.campaign).toMatchObject({ name: "Flaky (retry)", status: "queued", audience: { retry_of: first.id }, template: TEMPLATE, fallback_values: FALLBACKS })
    const done = await completed(retried.body.campaign.id)
    expect(done.counters).toMatchObject({ total: 1, failed: 1 })
    const targets = (await pub("GET", `/campaigns/${done.id}/targets`)).body.targets
    expect(targets.map((t: Json) => t.phone)).toEqual([`+${GATEWAY_FAILS}`])
    // A new message id, sent its own five times; the first run's stays at its five.
    const original = (await pub("GET", `/campaigns/${first.id}/targets`)).body.targets.find((t: Json) => t.phone === `+${GATEWAY_FAILS}`)
    expect(targets[0].message_id).not.toBe(original.message_id)
    expect(await simSends(targets[0].message_id)).toBe(5)
    expect(await simSends(original.message_id)).toBe(5)
  }, 90_000)

  it("a campaign without such failures, or not finished, is 409 naming why; nothing written", async () => {
    const before = await campaignRows()
    const mumbai = (await pub("GET", "/campaigns?limit=1000")).body.campaigns.find((c: Json) => c.name === "Mumbai")
    const none = await pub("POST", `/campaigns/${mumbai.id}/retry-failed`)
    expect(none.status).toBe(409)
    expect(none.body).toMatchObject({ code: "conflict", key: "targets" })
    const later = await pub("POST", "/campaigns", { name: "Not yet", template: TEMPLATE, fallbackValues: FALLBACKS, audience: { tags: ["x"] }, scheduled_at: new Date(Date.now() + 600_000).toISOString() })
    const early = await pub("POST", `/campaigns/${later.body.campaign.id}/retry-failed`)
    expect(early.status).toBe(409)
    expect(early.body).toMatchObject({ code: "conflict", key: "status" })
    expect(await campaignRows()).toBe(before + 1)
    expect((await pub("POST", "/campaigns/00000000-0000-4000-8000-000000000000/retry-failed")).status).toBe(404)
  })
})

describe("refusals: nothing written", () => {
  it.each([
    ["a trait without a fallback", { name: "x", template: TEMPLATE, fallbackValues: { discount: "10" }, audience: { tags: ["vip"] } }, 400, "invalid_request", "fallbackValues.first_name"],
    ["a fallback naming no trait", { name: "x", template: TEMPLATE, fallbackValues: { ...FALLBACKS, cty: "Pune" }, audience: { tags: ["vip"] } }, 400, "invalid_request", "fallbackValues.cty"],
    ["no audience", { name: "x", template: TEMPLATE, fallbackValues: FALLBACKS, audience: {} }, 400, "invalid_request", "audience"],
    ["two audiences", { name: "x", template: TEMPLATE, fallbackValues: FALLBACKS, audience: { tags: ["a"], customer_ids: ["9f0c8a4e-1111-4a57-9a37-0d1a1f0c2a11"] } }, 400, "invalid_request", "audience"],
    ["a segment of no one", { name: "x", template: TEMPLATE, fallbackValues: FALLBACKS, audience: { segment_id: "9f0c8a4e-1111-4a57-9a37-0d1a1f0c2a11" } }, 400, "invalid_request", "audience.segment_id"],
    ["a bad filter", { name: "x", template: TEMPLATE, fallbackValues: FALLBACKS, audience: { filters: [{ trait: "city", op: "near", value: "Pune" }] } }, 400, "invalid_request", "audience.filters[0].op"],
    ["too few values for the template", { name: "x", template: { ...TEMPLATE, bodyValues: ["only one"] }, audience: { tags: ["vip"] } }, 400, "invalid_request", "template.bodyValues"],
    ["an unknown template", { name: "x", template: { name: "nope", languageCode: "en" }, audience: { tags: ["vip"] } }, 400, "template_not_usable", undefined],
    ["a number of another account", { name: "x", phoneNumberId: "100000000000000", template: TEMPLATE, fallbackValues: FALLBACKS, audience: { tags: ["vip"] } }, 400, "invalid_request", "phoneNumberId"]
  ])("%s", async (_, body, status, code, path) => {
    const before = await campaignRows()
    const r = await pub("POST", "/campaigns", body)
    expect(r.status).toBe(status)
    expect(r.body.code).toBe(code)
    if (path !== undefined) expect(r.body.errors.map((e: Json) => e.path)).toContain(path)
    expect(await campaignRows()).toBe(before)
  })

  it("a wallet that does not cover the audience at the category's price is 402", async () => {
    // Account b has 1.00 and the MARKETING price is 0.80: two customers cost 1.60.
    const t = await pub("POST", "/templates", { name: "b_offer", language: "en", category: "MARKETING", components: [tBody("Hello, an offer for you this week only.")] }, keys.b)
    expect(t.status).toBe(201)
    await eventually(async () => expect((await pub("GET", `/templates/${t.body.template.id}`, undefined, keys.b)).body.template.status).toBe("APPROVED"))
    await Promise.all(["919876560001", "919876560002"].map((phone) => pub("POST", "/track/users", { fullPhoneNumber: phone }, keys.b)))
    const before = await campaignRows()
    const r = await pub("POST", "/campaigns", { name: "too dear", template: { name: "b_offer", languageCode: "en" }, audience: { filters: [] } }, keys.b)
    expect(r.status).toBe(402)
    expect(r.body.code).toBe("insufficient_balance")
    expect(await campaignRows()).toBe(before)
  })
})
