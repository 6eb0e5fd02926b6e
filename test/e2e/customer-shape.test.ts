import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { eventually, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor, ownerSession } from "../support/http.ts"
import { freePort } from "../support/TcpProxy.ts"

// One customer, one shape (issue 34, item 5; docs/customers.md, "One customer shape"): the public
// API, /api/v1/app and GraphQL answer a customer with the same fields under the same names, times
// to the millisecond; each takes the other surface's spelling of a customer field on input when it
// is unambiguous (the same value, or only one given). And the secret key's conversions answer
// Interakt's `result` on their failures as on their successes.

const iso = useIsolation()
let node: HeraldProcess
let simUrl: string
let key = ""
let numberId = ""

type Json = Record<string, any>

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
const SHAPE = ["id", "phone", "name", "user_id", "traits", "tags", "created_at", "last_seen_at"]
/** Interakt's names the public API answers beside the shared ones. */
const INTERAKT = ["fullPhoneNumber", "userId"]
const withoutInterakt = ({ fullPhoneNumber: _p, userId: _u, ...shared }: Json) => shared

const pub = (method: string, path: string, body?: unknown) => callJson(node.url, method, `/api/v1/public${path}`, `Basic ${key}`, body)
const app = (method: string, path: string, body?: unknown) => callJson(node.url, method, `/api/v1/app${path}`, `Bearer ${key}`, body)
const gql = async (query: string, variables?: Json) => {
  const r = await callJson(node.url, "POST", "/api/v1/graphql", `Bearer ${key}`, { query, ...(variables ? { variables } : {}) })
  expect(r.body.errors, JSON.stringify(r.body.errors)).toBeUndefined()
  return r.body.data as Json
}
const paths = (body: Json) => (body.errors ?? []).map((e: Json) => e.path)
const CONTACT_FIELDS = "id phone name user_id traits tags created_at last_seen_at"

beforeAll(async () => {
  const simPort = await freePort()
  simUrl = `http://127.0.0.1:${simPort}`
  const env = envFor(iso, { GATEWAY_SIM_PORT: String(simPort), LOG_LEVEL: "warning" })
  const cli = cliFor(env)
  node = await startHerald(env)
  const account = (await cli("admin", "create-account", "--email", "a@shape.io", "--password", "a password", "--label", "Shape", "--plan", "enterprise")).account_id
  numberId = (await cli("admin", "create-wa-number", account, "--phone", "+919800000501")).phone_number_id
  key = (await ownerSession(node.url, "a@shape.io", "a password")).key
}, 300_000)
afterAll(async () => {
  await node?.kill()
})

describe("one customer shape", () => {
  it("the public API, /api/v1/app and GraphQL answer one customer alike: phone (E.164), user_id, times in milliseconds", async () => {
    const tracked = await pub("POST", "/track/users", { fullPhoneNumber: "91 98765 50001", userId: "crm-9", name: "Meera", traits: { city: "Pune" }, tags: ["vip"] })
    expect(tracked.status, JSON.stringify(tracked.body)).toBe(200)
    const id = tracked.body.id as string
    const publicOne = (await pub("GET", `/customers/${id}`)).body.customer
    const searched = (await pub("POST", "/customers/search", { tags: ["vip"] })).body.customers.find((c: Json) => c.id === id)
    const appOne = (await app("GET", `/contacts/${id}`)).body.contact
    const appListed = (await app("GET", "/contacts?search=Meera")).body.contacts.find((c: Json) => c.id === id)
    const graphOne = (await gql(`query($id: ID!) { contact(id: $id) { ${CONTACT_FIELDS} } }`, { id })).contact
    const graphListed = (await gql(`{ contacts(filter: {tags: ["vip"]}) { edges { node { ${CONTACT_FIELDS} } } } }`)).contacts.edges.map((e: Json) => e.node)
      .find((c: Json) => c.id === id)
    const expected = {
      id,
      phone: "+919876550001",
      name: "Meera",
      user_id: "crm-9",
      traits: { city: "Pune" },
      tags: ["vip"],
      created_at: expect.stringMatching(ISO_MS),
      last_seen_at: null
    }
    for (const [where, customer] of Object.entries({ appOne, appListed, graphOne, graphListed })) {
      expect(customer, where).toEqual(expected)
      expect(Object.keys(customer).sort(), where).toEqual([...SHAPE].sort())
    }
    // The public API answers the same fields, and Interakt's names beside them (design/whatsapp.md).
    for (const [where, customer] of Object.entries({ publicOne, searched })) {
      expect(customer, where).toEqual({ ...expected, fullPhoneNumber: "919876550001", userId: "crm-9" })
      expect(Object.keys(customer).sort(), where).toEqual([...SHAPE, ...INTERAKT].sort())
    }
    expect(new Set([publicOne, searched, appOne, appListed, graphOne, graphListed].map((c) => c.created_at)).size).toBe(1)
  })

  it("a customer who wrote in: last_seen_at alike everywhere, and a conversation's customer under the same names", async () => {
    const from = "919876550002"
    const r = await fetch(`${simUrl}/simulate/wa/inbound`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ phone_number_id: numberId, from, text: "hi", name: "Dev" })
    })
    expect(r.status).toBe(202)
    const conversation = await eventually(async () => {
      const assigned = await pub("POST", "/chats/assign", { phone: `+${from}`, agentEmail: "" })
      expect(assigned.status, JSON.stringify(assigned.body)).toBe(200)
      return assigned.body.conversation as Json
    })
    expect(conversation.customer).toEqual({ id: expect.any(String), phone: `+${from}`, name: "Dev" })
    const id = conversation.customer.id as string
    const publicOne = (await pub("GET", `/customers/${id}`)).body.customer
    expect(publicOne).toMatchObject({ phone: `+${from}`, name: "Dev", last_seen_at: expect.stringMatching(ISO_MS) })
    expect(publicOne).toMatchObject({ fullPhoneNumber: from, userId: null })
    const shared = withoutInterakt(publicOne)
    expect((await app("GET", `/contacts/${id}`)).body.contact).toEqual(shared)
    expect((await gql(`query($id: ID!) { contact(id: $id) { ${CONTACT_FIELDS} } }`, { id })).contact).toEqual(shared)
    const resolved = await pub("POST", "/chats/resolve", { phone: from })
    expect(resolved.body.conversation).toMatchObject({ id: conversation.id, status: "resolved", customer: conversation.customer })
  })
})

describe("either spelling on input, when unambiguous", () => {
  it("track/users takes phone and user_id (the answers' names) as well as fullPhoneNumber and userId", async () => {
    const first = await pub("POST", "/track/users", { phone: "+919876550010", user_id: "crm-10" })
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    const again = await pub("POST", "/track/users", { fullPhoneNumber: "919876550010", phone: "+91 98765 50010", userId: "crm-11", user_id: "crm-11" })
    expect(again.body).toEqual({ result: true, success: true, id: first.body.id })
    expect((await pub("GET", `/customers/${first.body.id}`)).body.customer).toMatchObject({ phone: "+919876550010", user_id: "crm-11" })
  })

  it("two spellings that differ, or none, are 400 invalid_request naming the field, and nothing is written", async () => {
    for (const [body, path] of [
      [{ fullPhoneNumber: "919876550020", phone: "919876550021" }, "fullPhoneNumber"],
      [{ fullPhoneNumber: "919876550020", userId: "a", user_id: "b" }, "userId"],
      [{ name: "nobody" }, "fullPhoneNumber"],
      [{ phone: "12" }, "phone"]
    ] as const) {
      const r = await pub("POST", "/track/users", body)
      expect(r.status, JSON.stringify(body)).toBe(400)
      expect(r.body, JSON.stringify(body)).toMatchObject({ result: false, success: false, code: "invalid_request" })
      expect(paths(r.body), JSON.stringify(body)).toContain(path)
    }
    const appBoth = await app("POST", "/contacts", { phone: "+919876550020", fullPhoneNumber: "+919876550021" })
    expect(appBoth.status).toBe(400)
    expect(paths(appBoth.body)).toContain("phone")
    const missing = await app("POST", "/contacts", { name: "x" })
    expect(missing.status).toBe(400)
    expect(paths(missing.body)).toContain("phone")
    expect((await pub("POST", "/customers/search", {})).body.customers.map((c: Json) => c.phone)).not.toContain("+919876550020")
    const assign = await pub("POST", "/chats/assign", { fullPhoneNumber: "919876550002", phone: "919876550003", agentEmail: "" })
    expect(assign.status).toBe(400)
    expect(paths(assign.body)).toContain("fullPhoneNumber")
  })

  it("/api/v1/app/contacts takes fullPhoneNumber and userId (the public API's names) on POST, PATCH and import", async () => {
    const created = await app("POST", "/contacts", { fullPhoneNumber: "919876550030", userId: "crm-30", name: "Asha" })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    expect(created.body.contact).toMatchObject({ phone: "+919876550030", user_id: "crm-30", name: "Asha" })
    const patched = await app("PATCH", `/contacts/${created.body.contact.id}`, { userId: "crm-31" })
    expect(patched.body.contact).toMatchObject({ user_id: "crm-31" })
    const refused = await app("PATCH", `/contacts/${created.body.contact.id}`, { userId: "crm-32", user_id: "crm-33" })
    expect(refused.status).toBe(400)
    expect(paths(refused.body)).toContain("user_id")
    const imported = await fetch(`${node.url}/api/v1/app/contacts/import`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/x-ndjson" },
      body: `{"fullPhoneNumber":"+919876550031","userId":"crm-34"}\n{"phone":"+919876550032","fullPhoneNumber":"+919876550033"}\n`
    })
    const report = (await imported.json()) as Json
    expect(imported.status, JSON.stringify(report)).toBe(200)
    expect(report).toMatchObject({ added: 1, invalid_count: 1 })
    expect(report.invalid[0]).toMatchObject({ row: 2 })
    const listed = (await app("GET", "/contacts?search=9876550031")).body.contacts
    expect(listed).toEqual([expect.objectContaining({ phone: "+919876550031", user_id: "crm-34" })])
  })

  it("GraphQL's createContact takes user_id, and answers it", async () => {
    const made = (await gql(`mutation($input: CreateContactInput!) { createContact(input: $input) { ${CONTACT_FIELDS} } }`, {
      input: { phone: "+919876550040", user_id: "crm-40" }
    })).createContact
    expect(made).toMatchObject({ phone: "+919876550040", user_id: "crm-40" })
    expect(withoutInterakt((await pub("GET", `/customers/${made.id}`)).body.customer)).toEqual(made)
  })
})

describe("Interakt's result on the secret key's conversions", () => {
  it("a refused conversion answers result false beside success false (409 capi_not_configured, 400 invalid_request)", async () => {
    const one = await app("POST", "/meta-ads/capi/events", { event_name: "Lead", fullPhoneNumber: "+919876550050" })
    expect(one.status).toBe(409)
    expect(one.body).toMatchObject({ result: false, success: false, code: "capi_not_configured" })
    const batch = await app("POST", "/meta-ads/capi/events/batch", { events: [{ event_name: "Lead", fullPhoneNumber: "+919876550050" }] })
    expect(batch.status).toBe(409)
    expect(batch.body).toMatchObject({ result: false, success: false, code: "capi_not_configured" })
    const bad = await app("POST", "/meta-ads/capi/events", { event_name: 5 })
    expect(bad.status).toBe(400)
    expect(bad.body).toMatchObject({ result: false, success: false, code: "invalid_request" })
  })
})
