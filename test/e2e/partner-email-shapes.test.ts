import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Webhook } from "standardwebhooks"
import { startConsumer } from "../support/consumer.ts"
import { eventually, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { callJson, cliFor } from "../support/http.ts"
import { envFor } from "../support/isolation.ts"
import { freePort } from "../support/TcpProxy.ts"

// The partner e-mail API's answers, one shape each (issue 34, item 5; docs/partner-email.md and
// design/partner-email.md): every event row has every field of its shape wherever it appears (the
// events list, GET /emails/:id, an event destination's webhook), a SEND's recipient null rather
// than absent; every time is ISO 8601 to the millisecond, as in Herald's other answers; every
// answer carries success, the fixed-size ones (quotas, stats, reputation) included.

const iso = useIsolation()
let env: Record<string, string>
let node: HeraldProcess
let consumer: Awaited<ReturnType<typeof startConsumer>>
let key = ""
let secret = ""
const sent: Record<string, string> = {}

type Json = Record<string, any>

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
const EVENT_FIELDS = ["created_at", "detail", "event_id", "message_id", "recipient", "type"]

const call = (method: string, path: string, body?: unknown) => callJson(node.url, method, `/api/v1/partner/email${path}`, key, body)

beforeAll(async () => {
  const simPort = await freePort()
  env = envFor(iso, { GATEWAY_SIM_PORT: String(simPort), LOG_LEVEL: "warning" })
  node = await startHerald(env)
  consumer = await startConsumer()
  const cli = cliFor(env)
  const partner = await cli("admin", "create-partner", "--name", "shapes")
  key = partner.api_key
  await cli("admin", "email-quota", partner.partner_id, "--rate", "50")
  // Domains verified by the operator: the sender's, and the recipients' (the sandbox needs them verified too).
  for (const domain of ["brand.test", "inbox.test"]) {
    const created = await call("POST", "/identities", { identity: domain })
    expect(created.status).toBe(200)
    await cli("admin", "email-identity-verify", created.body.id)
  }
  await call("POST", "/templates", { name: "hello", subject: "Hi {{name}}", text: "Hi {{name}}" })
  await call("PUT", "/suppression/gone@inbox.test", {})
  await call("POST", "/production-access", { mail_type: "TRANSACTIONAL", website_url: "https://brand.test", use_case_description: "receipts" })
  const set = await call("POST", "/configuration-sets", {
    name: "tracked",
    event_destinations: [{ url: consumer.url("/events"), events: ["SEND", "DELIVERY", "BOUNCE", "COMPLAINT", "REJECT", "SUPPRESSED"] }]
  })
  expect(set.status).toBe(200)
  secret = set.body.event_destinations[0].secret
  for (const [name, to] of [["delivered", "ann@inbox.test"], ["bounced", "bounce1@inbox.test"], ["suppressed", "gone@inbox.test"]] as const) {
    const r = await call("POST", "/emails", { from: "news@brand.test", to: [to], subject: name, text: "x", configuration_set: "tracked" })
    expect(r.status, JSON.stringify(r.body)).toBe(202)
    sent[name] = r.body.message_id
  }
  await eventually(async () => {
    for (const id of Object.values(sent)) expect(["QUEUED", "SENT"]).not.toContain((await call("GET", `/emails/${id}`)).body.status)
  }, { timeoutMs: 20_000 })
}, 300_000)
afterAll(async () => {
  await node?.kill()
  await consumer?.close()
})

/** Every row has exactly the event's fields, recipient null on SEND (and on a message-level REJECT) and a string otherwise. */
const expectEventRows = (rows: Array<Json>, where: string) => {
  expect(rows.length, where).toBeGreaterThan(0)
  for (const row of rows) {
    expect(Object.keys(row).sort(), `${where}: ${JSON.stringify(row)}`).toEqual(EVENT_FIELDS)
    expect(row.created_at, where).toMatch(ISO_MS)
    if (row.type === "SEND") expect(row.recipient, where).toBeNull()
    else if (row.type !== "REJECT") expect(typeof row.recipient, where).toBe("string")
  }
}

describe("event rows carry every field", () => {
  it("GET /emails/:id: the SEND row has recipient null, every row every field, times in milliseconds", async () => {
    for (const [name, id] of Object.entries(sent)) {
      const row = (await call("GET", `/emails/${id}`)).body
      expect(row.created_at, name).toMatch(ISO_MS)
      expectEventRows(row.events, `GET /emails (${name})`)
    }
    const delivered = (await call("GET", `/emails/${sent.delivered}`)).body.events
    expect(delivered[0]).toEqual({ event_id: expect.any(String), message_id: sent.delivered, type: "SEND", recipient: null, detail: expect.any(String), created_at: expect.stringMatching(ISO_MS) })
  })

  it("GET /events: the same rows, every field, whatever the filter", async () => {
    const all = (await call("GET", "/events?limit=1000")).body
    expect(all.success).toBe(true)
    expectEventRows(all.events, "GET /events")
    const sends = (await call("GET", "/events?type=SEND")).body.events
    expect(sends.length).toBeGreaterThanOrEqual(2)
    expect(sends.every((e: Json) => "recipient" in e && e.recipient === null)).toBe(true)
    const one = (await call("GET", `/emails/${sent.delivered}`)).body.events
    const listed = (await call("GET", `/events?message_id=${sent.delivered}`)).body.events
    expect([...listed].reverse()).toEqual(one)
  })

  it("an event destination's webhook carries the row as the list shows it: SEND with recipient null, the same created_at", async () => {
    const listed = new Map<string, Json>(((await call("GET", "/events?limit=1000")).body.events as Array<Json>).map((e) => [e.event_id, e]))
    const envelopes = await eventually(async () => {
      const got = consumer.received.filter((r) => r.path === "/events").map((r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as Json)
      // Every event of the three messages reached the destination (SEND ×2, DELIVERY, BOUNCE, SUPPRESSED, REJECT).
      expect(got.length).toBe(listed.size)
      return got
    }, { timeoutMs: 20_000 })
    expectEventRows(envelopes.map((e) => e.data), "webhooks")
    for (const e of envelopes) expect(e.data, e.type).toEqual(listed.get(e.data.event_id))
    expect(envelopes.filter((e) => e.type === "email.send").map((e) => e.data.recipient)).toEqual([null, null])
    expect(consumer.undocumented).toEqual([])
  })
})

describe("one timestamp precision, success everywhere", () => {
  it("every answer's times are ISO 8601 to the millisecond", async () => {
    const lists: Array<[string, string]> = [
      ["/identities", "identities"],
      ["/configuration-sets", "configuration_sets"],
      ["/templates", "templates"],
      ["/suppression", "suppression"],
      ["/production-access", "production_access"],
      ["/events", "events"]
    ]
    for (const [path, name] of lists) {
      const page = (await call("GET", path)).body
      expect(page[name].length, path).toBeGreaterThan(0)
      for (const row of page[name]) expect(row.created_at, `${path}: ${JSON.stringify(row)}`).toMatch(ISO_MS)
    }
    const identity = (await call("GET", "/identities")).body.identities[0]
    expect((await call("GET", `/identities/${identity.id}`)).body.created_at).toMatch(ISO_MS)
    const created = await call("POST", "/identities", { identity: "later@brand.test" })
    expect(created.body.created_at).toMatch(ISO_MS)
  })

  it("the fixed-size answers carry success as the lists do: quotas, stats, reputation", async () => {
    for (const path of ["/quotas", "/stats", "/reputation"]) {
      const r = await call("GET", path)
      expect(r.status, path).toBe(200)
      expect(r.body.success, path).toBe(true)
    }
    expect((await call("GET", "/quotas")).body).toEqual({
      success: true,
      max_24_hour_send: 200,
      max_send_rate: 50,
      sent_last_24_hours: 3,
      production_access_enabled: false
    })
    expect(Object.keys((await call("GET", "/reputation")).body).sort()).toEqual(["bounce_rate", "complaint_rate", "status", "success"])
  })
})
