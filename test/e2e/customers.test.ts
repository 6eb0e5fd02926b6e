import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { CUSTOMERS_LIMIT_MAX } from "../../src/customers/Customers.ts"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor, ownerSession } from "../support/http.ts"
import { freePort } from "../support/TcpProxy.ts"

// Customers and conversations on the public API end to end: track/users (upsert by phone, trait
// merge, limits), one customer, the trait and tag search with every operator and its newest-first
// cursor, and assigning and resolving a customer's WhatsApp conversation. Auth is the account's
// secret key with HTTP Basic, as in whatsapp.test.ts.

const iso = useIsolation()
const db = useDb(iso)
let node: HeraldProcess
let simUrl: string
const accounts: Record<string, string> = {}
const keys: Record<string, string> = {}
let numberA = ""

type Json = Record<string, any>

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

const call = (method: string, path: string, token?: string, body?: unknown) => callJson(node.url, method, path, token, body)
const pub = (method: string, path: string, body?: unknown, key = keys.a!) => callJson(node.url, method, `/api/v1/public${path}`, `Basic ${key}`, body)
const track = (body: Json, key?: string) => pub("POST", "/track/users", body, key)
const search = (body: Json, key?: string) => pub("POST", "/customers/search", body, key)
const getCustomer = (id: string, key?: string) => pub("GET", `/customers/${id}`, undefined, key)
const assign = (body: Json, key?: string) => pub("POST", "/chats/assign", body, key)
const resolve = (body: Json, key?: string) => pub("POST", "/chats/resolve", body, key)
const paths = (body: Json) => (body.errors ?? []).map((e: Json) => e.path)

/** A tracked customer's id (the call must succeed). */
const tracked = async (body: Json, key?: string): Promise<string> => {
  const r = await track(body, key)
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  return r.body.id
}

/** The customer writes to account A's number, through the gateway simulator (as whatsapp.test.ts does); its wamid. */
const inbound = async (from: string, name?: string) => {
  const r = await fetch(`${simUrl}/simulate/wa/inbound`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ phone_number_id: numberA, from, text: "hello", ...(name ? { name } : {}) })
  })
  expect(r.status).toBe(202)
  return ((await r.json()) as { id: string }).id
}

/** The open conversation once Herald recorded the message `wamid` (unassigning it meanwhile). */
const openConversation = (from: string, wamid: string) =>
  eventually(async () => {
    const r = await assign({ fullPhoneNumber: from, agentEmail: "" })
    expect(r.status).toBe(200)
    expect(r.body.conversation.last_message?.id).toBe(wamid)
    return r.body.conversation as Json
  })

beforeAll(async () => {
  const simPort = await freePort()
  simUrl = `http://127.0.0.1:${simPort}`
  const env = envFor(iso, { GATEWAY_SIM_PORT: String(simPort), LOG_LEVEL: "warning" })
  const cli = cliFor(env)
  node = await startHerald(env)
  // a: the main account; p: the paginated one, and "another account" for a's checks.
  const made = await Promise.all(
    ["a", "p"].map((name) => cli("admin", "create-account", "--email", `${name}@customers.io`, "--password", `${name} password`, "--label", name, "--plan", "enterprise"))
  )
  ;["a", "p"].forEach((name, i) => (accounts[name] = made[i].account_id))
  numberA = (await cli("admin", "create-wa-number", accounts.a!, "--phone", "+919800000301")).phone_number_id
  // What `herald admin set-plan <id> enterprise --rate 60000` writes, without two more CLI processes
  // (the suite's slowest part): the plan bucket must not refuse this file's bursts.
  await db("UPDATE accounts SET plan_rate_per_minute = 60000 WHERE account_id = ANY($1::uuid[])", [[accounts.a, accounts.p]])
  const jwt: Record<string, string> = {}
  await Promise.all(["a", "p"].map(async (name) => {
    const session = await ownerSession(node.url, `${name}@customers.io`, `${name} password`)
    jwt[name] = session.jwt
    keys[name] = session.key
  }))
  const members = await Promise.all([
    call("POST", "/api/v1/rcs/team", jwt.a, { email: "Agent.One@Customers.io", role: "operator", assigned_bots: ["*"], password: "agent password" }),
    call("POST", "/api/v1/rcs/team", jwt.p, { email: "other.agent@customers.io", role: "operator", assigned_bots: ["*"], password: "agent password" })
  ])
  expect(members.map((m) => m.status)).toEqual([200, 200])
}, 300_000)
afterAll(async () => {
  await node?.kill()
})

describe("track/users and one customer", () => {
  const phone = "919876520001"
  let id = ""

  it("upserts by phone: the same phone is the same customer; traits merge, null removes one, tags are added once", async () => {
    const first = await track({ fullPhoneNumber: phone, userId: "crm-1", name: "Asha Rao", traits: { plan: "gold", visits: 3, temp: "x" }, tags: ["t-new"] })
    expect(first).toEqual({ status: 200, body: { result: true, success: true, id: expect.stringMatching(UUID) } })
    id = first.body.id
    // Written another way (+, spaces), without name or userId: they stay.
    const again = await track({ fullPhoneNumber: "+91 98765 20001", traits: { visits: 4, city: "Pune", temp: null, never: null }, tags: ["t-new", "t-paid", "t-paid"] })
    expect(again.body).toEqual({ result: true, success: true, id })
    const got = await getCustomer(id)
    expect(got).toEqual({
      status: 200,
      body: {
        result: true,
        success: true,
        customer: {
          id,
          phone: `+${phone}`,
          name: "Asha Rao",
          user_id: "crm-1",
          traits: { plan: "gold", visits: 4, city: "Pune" },
          tags: ["t-new", "t-paid"],
          created_at: expect.stringMatching(ISO),
          last_seen_at: null,
          fullPhoneNumber: phone,
          userId: "crm-1"
        }
      }
    })
    // A later name and userId replace the earlier ones; the tags already there are not repeated.
    expect(await tracked({ fullPhoneNumber: `+${phone}`, name: "Asha R.", userId: "crm-2", tags: ["t-paid"] })).toBe(id)
    const later = (await getCustomer(id)).body.customer
    expect(later).toMatchObject({ name: "Asha R.", user_id: "crm-2", tags: ["t-new", "t-paid"], traits: { plan: "gold", visits: 4, city: "Pune" }, created_at: got.body.customer.created_at })
  })

  it("concurrent calls for one new phone make one customer and keep every call's traits and tags", async () => {
    const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => tracked({ fullPhoneNumber: "919876520005", traits: { [`k${i}`]: i }, tags: [`c${i}`] })))
    expect(new Set(ids).size).toBe(1)
    const customer = (await getCustomer(ids[0]!)).body.customer
    expect(customer.traits).toEqual(Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, i])))
    expect([...customer.tags].sort()).toEqual(Array.from({ length: 10 }, (_, i) => `c${i}`).sort())
  })

  it("an invalid phone: 400 invalid_request naming fullPhoneNumber", async () => {
    for (const fullPhoneNumber of ["12345", "not a phone", "", "+91 98765"]) {
      const r = await track({ fullPhoneNumber, traits: { a: 1 } })
      expect(r.status, fullPhoneNumber).toBe(400)
      expect(r.body).toMatchObject({ result: false, success: false, code: "invalid_request" })
      expect(paths(r.body), fullPhoneNumber).toContain("fullPhoneNumber")
    }
  })

  it("traits too large, too many traits or tags: 400, and nothing is written", async () => {
    const sized = await tracked({ fullPhoneNumber: "919876520002", traits: { big1: "x".repeat(20_000) }, tags: Array.from({ length: 60 }, (_, i) => `t${i}`) })
    const before = (await getCustomer(sized)).body.customer
    const refusals: Array<[string, Json, string]> = [
      // Each alone is under the limits; merged with what the customer has, over them.
      ["traits merged over 32 KB", { traits: { big2: "y".repeat(20_000), small: 1 }, tags: ["fresh"] }, "traits"],
      ["tags merged over 100", { traits: { small: 1 }, tags: Array.from({ length: 60 }, (_, i) => `u${i}`) }, "tags"],
      // Over the limits in the request itself.
      ["one trait over 32 KB", { traits: { big1: "z".repeat(33_000) } }, "traits"],
      ["101 tags", { tags: Array.from({ length: 101 }, (_, i) => `v${i}`) }, "tags"],
      ["201 traits", { traits: Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`k${i}`, i])) }, "traits"]
    ]
    for (const [what, body, path] of refusals) {
      const r = await track({ fullPhoneNumber: "919876520002", ...body })
      expect(r.status, what).toBe(400)
      expect(r.body.code, what).toBe("invalid_request")
      expect(paths(r.body), what).toContain(path)
    }
    expect((await getCustomer(sized)).body.customer).toEqual(before)
    // A new phone refused for its traits is not created either.
    const fresh = await track({ fullPhoneNumber: "919876520003", traits: { big: "x".repeat(33_000) } })
    expect(fresh.status).toBe(400)
    const all = await search({ limit: 500 })
    expect(all.body.customers.map((c: Json) => c.phone)).not.toContain("+919876520003")
  })

  it("GET /customers/{id}: 404 not_found for a malformed id, an unknown one and another account's customer", async () => {
    const theirs = await tracked({ fullPhoneNumber: "919876520004", name: "P's" }, keys.p)
    expect((await getCustomer(theirs, keys.p)).body.customer).toMatchObject({ id: theirs, name: "P's", phone: "+919876520004" })
    // The same phone in account A is another customer, which P cannot read either.
    const ours = await tracked({ fullPhoneNumber: "919876520004" })
    expect(ours).not.toBe(theirs)
    for (const [wrong, key] of [["not-a-uuid", keys.a], ["1", keys.a], ["00000000-0000-0000-0000-000000000000", keys.a], [theirs, keys.a], [ours, keys.p]]) {
      const r = await getCustomer(wrong!, key)
      expect(r.status, wrong).toBe(404)
      expect(r.body, wrong).toMatchObject({ result: false, success: false, code: "not_found" })
    }
  })
})

describe("search: every operator on numbers, strings, dates and missing traits", () => {
  // n: numbers (and a string, an array of them); s: strings; d: ISO dates; b: booleans. All tagged fx.
  const FIXTURE: Record<string, { traits: Json; tags: Array<string> }> = {
    num10: { traits: { n: 10, s: "Gold Member", d: "2024-05-01", b: true, "it's": "ok" }, tags: ["fx", "vip", "north"] },
    num9: { traits: { n: 9, s: "gold", d: "2024-05-01T10:00:00Z", b: false }, tags: ["fx", "vip"] },
    num1_5: { traits: { n: 1.5, s: "silver", d: "2024-05-01T15:30:00+05:30" }, tags: ["fx", "north"] },
    str10: { traits: { n: "10", s: 10, d: "2024-04-30T23:59:59.999Z" }, tags: ["fx"] },
    bare: { traits: {}, tags: ["fx"] },
    arrays: { traits: { n: [10, 20], s: ["gold", "vip"], d: "not a date" }, tags: ["fx"] },
    neg: { traits: { n: -3, s: "", d: 20240501 }, tags: ["fx"] },
    late: { traits: { n: 0, s: "GOLDEN", d: "2024-05-02" }, tags: ["fx"] }
  }
  const ALL = Object.keys(FIXTURE).sort()
  const nameOf = new Map<string, string>()

  beforeAll(async () => {
    await Promise.all(Object.entries(FIXTURE).map(async ([name, { tags, traits }], i) => {
      nameOf.set(await tracked({ fullPhoneNumber: `91987652${String(100 + i)}0`, name, traits, tags }), name)
    }))
  })

  /** The fixture customers a search finds (by name, sorted); scoped to the fixture by its tag unless `tags` says otherwise. */
  const found = async (filters: Array<Json>, tags: Array<string> = ["fx"]) => {
    const r = await search({ filters, tags, limit: 500 })
    if (r.status !== 200) return `${r.status} ${JSON.stringify(r.body)}`
    expect(r.body.count).toBe(r.body.customers.length)
    return r.body.customers.map((c: Json) => nameOf.get(c.id) ?? c.phone).sort()
  }

  /** Every case's answer, so that a failure lists every wrong one. */
  const check = async (cases: Array<[Json | Array<Json>, Array<string>]>, tags?: Array<string>) => {
    const wrong: Array<Json> = []
    for (const [filter, expected] of cases) {
      const filters = Array.isArray(filter) ? filter : [filter]
      const got = await found(filters, tags)
      if (JSON.stringify(got) !== JSON.stringify([...expected].sort())) wrong.push({ filters, expected: [...expected].sort(), got })
    }
    expect(wrong).toEqual([])
  }

  it("numbers compare numerically; a trait of another type never matches", () =>
    check([
      [{ trait: "n", op: "eq", value: 10 }, ["num10"]],
      [{ trait: "n", op: "eq", value: 1.5 }, ["num1_5"]],
      [{ trait: "n", op: "eq", value: "10" }, ["str10"]],
      [{ trait: "n", op: "neq", value: 10 }, ["num9", "num1_5", "neg", "late"]],
      [{ trait: "n", op: "neq", value: 5 }, ["num10", "num9", "num1_5", "neg", "late"]],
      [{ trait: "n", op: "gt", value: 9 }, ["num10"]],
      [{ trait: "n", op: "gt", value: 5 }, ["num10", "num9"]],
      [{ trait: "n", op: "gt", value: -5 }, ["num10", "num9", "num1_5", "neg", "late"]],
      [{ trait: "n", op: "gte", value: 9 }, ["num10", "num9"]],
      [{ trait: "n", op: "gte", value: 1.5 }, ["num10", "num9", "num1_5"]],
      [{ trait: "n", op: "lt", value: 9 }, ["num1_5", "neg", "late"]],
      [{ trait: "n", op: "lt", value: 0 }, ["neg"]],
      [{ trait: "n", op: "lte", value: 1.5 }, ["num1_5", "neg", "late"]],
      [{ trait: "n", op: "contains", value: 10 }, ["arrays"]],
      [{ trait: "n", op: "contains", value: 20 }, ["arrays"]],
      [{ trait: "n", op: "in", value: [10, 1.5] }, ["num10", "num1_5"]],
      [{ trait: "n", op: "in", value: [10, "10"] }, ["num10", "str10"]],
      [{ trait: "n", op: "exists" }, ALL.filter((n) => n !== "bare")],
      [{ trait: "n", op: "not_exists" }, ["bare"]],
      // A date compared with numbers: none is a date.
      [{ trait: "n", op: "gt", value: "2024-05-01" }, []],
      [{ trait: "d", op: "gt", value: 20240500 }, ["neg"]]
    ]))

  it("strings: eq and in are exact, contains is a case-insensitive substring (element membership on arrays)", () =>
    check([
      [{ trait: "s", op: "eq", value: "gold" }, ["num9"]],
      [{ trait: "s", op: "eq", value: "Gold Member" }, ["num10"]],
      [{ trait: "s", op: "eq", value: 10 }, ["str10"]],
      [{ trait: "s", op: "eq", value: "" }, ["neg"]],
      [{ trait: "s", op: "neq", value: "gold" }, ["num10", "num1_5", "neg", "late"]],
      // A number against string traits: only the customer whose s is a number.
      [{ trait: "s", op: "neq", value: 5 }, ["str10"]],
      [{ trait: "s", op: "contains", value: "gold" }, ["num10", "num9", "late", "arrays"]],
      [{ trait: "s", op: "contains", value: "GOLD" }, ["num10", "num9", "late"]],
      [{ trait: "s", op: "contains", value: "member" }, ["num10"]],
      [{ trait: "s", op: "contains", value: "il" }, ["num1_5"]],
      [{ trait: "s", op: "contains", value: "vip" }, ["arrays"]],
      [{ trait: "s", op: "in", value: ["silver", "GOLDEN", "nope"] }, ["num1_5", "late"]],
      [{ trait: "s", op: "in", value: ["gold"] }, ["num9"]],
      [{ trait: "s", op: "exists" }, ALL.filter((n) => n !== "bare")],
      [{ trait: "s", op: "not_exists" }, ["bare"]],
      [{ trait: "it's", op: "exists" }, ["num10"]],
      [{ trait: "it's", op: "eq", value: "ok" }, ["num10"]]
    ]))

  it("ISO dates (date-only, Z, +05:30) compare as instants", () =>
    check([
      [{ trait: "d", op: "eq", value: "2024-05-01" }, ["num10"]],
      [{ trait: "d", op: "eq", value: "2024-05-01T00:00:00Z" }, ["num10"]],
      [{ trait: "d", op: "eq", value: "2024-05-01T10:00:00Z" }, ["num9", "num1_5"]],
      [{ trait: "d", op: "eq", value: "2024-05-01T15:30:00+05:30" }, ["num9", "num1_5"]],
      [{ trait: "d", op: "eq", value: "2024-05-01T10:00:00+00:00" }, ["num9", "num1_5"]],
      [{ trait: "d", op: "eq", value: "2024-05-02T00:00:00Z" }, ["late"]],
      [{ trait: "d", op: "neq", value: "2024-05-01T10:00:00Z" }, ["num10", "str10", "late"]],
      [{ trait: "d", op: "gt", value: "2024-05-01" }, ["num9", "num1_5", "late"]],
      // 06:30Z: as text, "…T10:00:00Z" sorts before "…T12:00…"; as an instant it is after.
      [{ trait: "d", op: "gt", value: "2024-05-01T12:00:00+05:30" }, ["num9", "num1_5", "late"]],
      [{ trait: "d", op: "gt", value: "2024-04-30T23:59:59.998Z" }, ["num10", "num9", "num1_5", "str10", "late"]],
      [{ trait: "d", op: "gte", value: "2024-05-01" }, ["num10", "num9", "num1_5", "late"]],
      [{ trait: "d", op: "gte", value: "2024-04-30T23:59:59.999Z" }, ["num10", "num9", "num1_5", "str10", "late"]],
      [{ trait: "d", op: "lt", value: "2024-05-01" }, ["str10"]],
      [{ trait: "d", op: "lt", value: "2024-04-30T23:59:59.999Z" }, []],
      [{ trait: "d", op: "lt", value: "2024-05-01T10:00:00+05:30" }, ["num10", "str10"]],
      [{ trait: "d", op: "lte", value: "2024-05-01T10:00:00Z" }, ["num10", "num9", "num1_5", "str10"]],
      [{ trait: "d", op: "contains", value: "2024-05" }, ["num10", "num9", "num1_5", "late"]],
      [{ trait: "d", op: "contains", value: "2024-05-01" }, ["num10", "num9", "num1_5"]],
      [{ trait: "d", op: "in", value: ["2024-05-01T00:00:00Z", "2024-05-02T05:30:00+05:30"] }, ["num10", "late"]],
      [{ trait: "d", op: "in", value: ["2024-05-01T15:30:00+05:30"] }, ["num9", "num1_5"]],
      [{ trait: "d", op: "exists" }, ALL.filter((n) => n !== "bare")],
      [{ trait: "d", op: "not_exists" }, ["bare"]],
      // Not a date: compared as text, the dates are no match.
      [{ trait: "d", op: "eq", value: "not a date" }, ["arrays"]]
    ]))

  it("booleans; a missing trait matches every operator but not_exists, which matches everyone", () =>
    check([
      [{ trait: "b", op: "eq", value: true }, ["num10"]],
      [{ trait: "b", op: "eq", value: false }, ["num9"]],
      [{ trait: "b", op: "neq", value: true }, ["num9"]],
      [{ trait: "b", op: "eq", value: "true" }, []],
      [{ trait: "b", op: "in", value: [true, false] }, ["num10", "num9"]],
      [{ trait: "ghost", op: "eq", value: 1 }, []],
      [{ trait: "ghost", op: "eq", value: "2024-05-01" }, []],
      [{ trait: "ghost", op: "neq", value: 1 }, []],
      [{ trait: "ghost", op: "neq", value: "x" }, []],
      [{ trait: "ghost", op: "neq", value: "2024-05-01" }, []],
      [{ trait: "ghost", op: "neq", value: false }, []],
      [{ trait: "ghost", op: "gt", value: 1 }, []],
      [{ trait: "ghost", op: "gte", value: "2024-05-01" }, []],
      [{ trait: "ghost", op: "lt", value: 1 }, []],
      [{ trait: "ghost", op: "lte", value: "2024-05-01T10:00:00Z" }, []],
      [{ trait: "ghost", op: "contains", value: "x" }, []],
      [{ trait: "ghost", op: "in", value: [1, "x", "2024-05-01"] }, []],
      [{ trait: "ghost", op: "exists" }, []],
      [{ trait: "ghost", op: "not_exists" }, ALL]
    ]))

  it("tags are all required; filters and tags combine with AND", async () => {
    await check([[[], ["num10", "num9"]]], ["fx", "vip"])
    await check([[[], ["num10", "num1_5"]]], ["fx", "north"])
    await check([[[], ["num10"]]], ["fx", "vip", "north"])
    await check([[[], []]], ["fx", "nope"])
    await check([[[], ["num10", "num9"]]], ["vip"])
    await check([[{ trait: "n", op: "gt", value: 9 }, ["num10"]], [{ trait: "s", op: "contains", value: "gold" }, ["num10"]]], ["north"])
    await check([
      [[{ trait: "n", op: "gte", value: 9 }, { trait: "s", op: "contains", value: "gold" }], ["num10", "num9"]],
      [[{ trait: "n", op: "gt", value: 9 }, { trait: "d", op: "eq", value: "2024-05-01T10:00:00Z" }], []],
      [[{ trait: "n", op: "exists" }, { trait: "b", op: "not_exists" }], ["num1_5", "str10", "arrays", "neg", "late"]]
    ])
  })

  it("refusals: gt on a non-number non-date, an unknown operator, an empty in: 400 naming the filter", async () => {
    for (const [filters, path] of [
      [[{ trait: "s", op: "gt", value: "abc" }], "filters[0].value"],
      [[{ trait: "s", op: "lte", value: true }], "filters[0].value"],
      [[{ trait: "s", op: "exists" }, { trait: "n", op: "gte", value: "ten" }], "filters[1].value"],
      [[{ trait: "s", op: "in", value: [] }], "filters[0].value"],
      [[{ trait: "s", op: "like", value: "gold%" }], "filters[0].op"]
    ] as Array<[Array<Json>, string]>) {
      const r = await search({ filters })
      expect(r.status, path).toBe(400)
      expect(r.body).toMatchObject({ result: false, success: false, code: "invalid_request" })
      expect(paths(r.body), JSON.stringify(filters)).toContain(path)
    }
    const like = await search({ filters: [{ trait: "s", op: "like", value: "gold%" }] })
    expect(like.body.message).toContain("like")
  })
})

describe("search pagination", () => {
  const phoneOf = (n: number) => `9198765${String(40_000 + n)}`

  it("a walk by cursor (limit 7) returns every earlier customer once, newest first, while newer ones are added", async () => {
    // One at a time: each is newer than the one before.
    const created: Array<string> = []
    for (let i = 0; i < 60; i++) created.push(await tracked({ fullPhoneNumber: phoneOf(i), traits: { i } }, keys.p))
    // Every customer of P before the walk (the 60, then any earlier test's), in one page.
    const snapshot = await search({ limit: 500 }, keys.p)
    const newestFirst: Array<string> = snapshot.body.customers.map((c: Json) => c.id)
    expect(newestFirst.slice(0, 60)).toEqual([...created].reverse())
    const seen: Array<string> = []
    const added: Array<string> = []
    let cursor = ""
    let pages = 0
    do {
      const r = await search({ limit: 7, ...(cursor === "" ? {} : { cursor }) }, keys.p)
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      expect(r.body.count).toBe(r.body.customers.length)
      seen.push(...r.body.customers.map((c: Json) => c.id))
      cursor = r.body.next_cursor
      pages++
      // Between pages: two new customers (newer than the walk's position) and updates of a seen and an unseen one.
      for (let k = 0; k < 2; k++) added.push(await tracked({ fullPhoneNumber: phoneOf(100 + pages * 2 + k) }, keys.p))
      await tracked({ fullPhoneNumber: phoneOf(60 - pages), traits: { touched: pages } }, keys.p)
      await tracked({ fullPhoneNumber: phoneOf(Math.max(0, 60 - pages * 7 - 3)), traits: { touched: pages } }, keys.p)
    } while (cursor !== "" && pages < 20)
    expect(seen).toEqual(newestFirst)
    expect(pages).toBe(Math.ceil(newestFirst.length / 7))
    // The added ones come first now.
    const everything = await search({ limit: 500, cursor: "" }, keys.p)
    expect(everything.body.customers.map((c: Json) => c.id)).toEqual([...added.reverse(), ...newestFirst])
    expect(everything.body.next_cursor).toBe("")
  })

  it("a cursor read again gives the same page; a garbage cursor or limit is 400", async () => {
    const first = await search({ limit: 5 }, keys.p)
    const again = await search({ limit: 5, cursor: first.body.next_cursor }, keys.p)
    const twice = await search({ limit: 5, cursor: first.body.next_cursor }, keys.p)
    expect(again.body.customers).toEqual(twice.body.customers)
    expect(again.body.customers[0].id).not.toBe(first.body.customers[4].id)
    for (const cursor of ["garbage", "eyJ4IjoxfQ", Buffer.from(JSON.stringify(["2024-05-01", "x"])).toString("base64url")]) {
      const r = await search({ limit: 5, cursor }, keys.p)
      expect(r.status, cursor).toBe(400)
      expect(r.body.code).toBe("invalid_request")
      expect(paths(r.body), cursor).toContain("cursor")
    }
    for (const limit of [0, CUSTOMERS_LIMIT_MAX + 1, 2.5, -1]) expect((await search({ limit }, keys.p)).status, String(limit)).toBe(400)
    expect((await search({ limit: CUSTOMERS_LIMIT_MAX }, keys.p)).status).toBe(200)
  })
})

describe("chats: assign and resolve", () => {
  const from = "919876530001"
  let customerId = ""
  let conversation: Json = {}

  it("a customer who wrote has an open conversation; assigned to a member by e-mail in any case", async () => {
    customerId = await tracked({ fullPhoneNumber: from, traits: { source: "ads" } })
    const wamid = await inbound(from, "Kiran")
    conversation = await openConversation(from, wamid)
    const r = await assign({ fullPhoneNumber: from, agentEmail: "AGENT.one@customers.IO" })
    expect(r).toEqual({
      status: 200,
      body: {
        result: true,
        success: true,
        conversation: {
          id: expect.stringMatching(UUID),
          phone_number_id: numberA,
          customer: { id: customerId, phone: `+${from}`, name: "Kiran" },
          status: "open",
          assignee_email: "agent.one@customers.io",
          last_message: expect.objectContaining({ direction: "inbound", id: wamid, text: "hello" }),
          updated_at: expect.stringMatching(ISO)
        }
      }
    })
    expect(r.body.conversation.id).toBe(conversation.id)
    // The owner is a member too; on the number named, the same conversation.
    const owner = await assign({ fullPhoneNumber: `+${from}`, agentEmail: "a@customers.io", phoneNumberId: numberA })
    expect(owner.body.conversation).toMatchObject({ id: conversation.id, assignee_email: "a@customers.io" })
    expect((await assign({ fullPhoneNumber: from, agentEmail: "agent.one@customers.io" })).body.conversation.assignee_email).toBe("agent.one@customers.io")
    const customer = (await getCustomer(customerId)).body.customer
    expect(customer).toMatchObject({ name: "Kiran", traits: { source: "ads" }, last_seen_at: expect.stringMatching(ISO) })
  })

  it("404 agent_not_found for a member of another account or an unknown e-mail; the assignee stays", async () => {
    for (const agentEmail of ["other.agent@customers.io", "p@customers.io", "nobody@customers.io"]) {
      const r = await assign({ fullPhoneNumber: from, agentEmail })
      expect(r.status, agentEmail).toBe(404)
      expect(r.body, agentEmail).toMatchObject({ result: false, success: false, code: "agent_not_found" })
    }
    const [row] = await db<{ email: string }>("SELECT u.email FROM conversations v JOIN users u ON u.user_id = v.assignee_user_id WHERE v.conversation_id = $1", [conversation.id])
    expect(row?.email).toBe("agent.one@customers.io")
  })

  it("404 conversation_not_found without a conversation (tracked only, never seen, another number); 400 for an invalid phone", async () => {
    const trackedOnly = "919876530002"
    await tracked({ fullPhoneNumber: trackedOnly })
    for (const body of [
      { fullPhoneNumber: trackedOnly, agentEmail: "agent.one@customers.io" },
      { fullPhoneNumber: trackedOnly, agentEmail: "" },
      { fullPhoneNumber: "919876530003", agentEmail: "agent.one@customers.io" },
      { fullPhoneNumber: from, agentEmail: "agent.one@customers.io", phoneNumberId: "100000000000001" }
    ]) {
      const r = await assign(body)
      expect(r.status, JSON.stringify(body)).toBe(404)
      expect(r.body.code, JSON.stringify(body)).toBe("conversation_not_found")
    }
    expect((await resolve({ fullPhoneNumber: trackedOnly })).body.code).toBe("conversation_not_found")
    const invalid = await assign({ fullPhoneNumber: "12", agentEmail: "agent.one@customers.io" })
    expect(invalid.status).toBe(400)
    expect(paths(invalid.body)).toContain("fullPhoneNumber")
  })

  it("an empty agentEmail unassigns", async () => {
    const r = await assign({ fullPhoneNumber: from, agentEmail: "" })
    expect(r.status).toBe(200)
    expect(r.body.conversation).toMatchObject({ id: conversation.id, status: "open", assignee_email: null })
  })

  it("a message sent to the customer is the conversation's last message, until the customer writes again", async () => {
    const sent = await pub("POST", "/message", { fullPhoneNumber: from, type: "Text", data: { message: "Hi Kiran, your order shipped" } })
    expect(sent.status).toBe(202)
    await eventually(async () => {
      const r = await assign({ fullPhoneNumber: from, agentEmail: "" })
      expect(r.body.conversation.last_message).toMatchObject({ direction: "outbound", id: sent.body.id, type: "Text", text: "Hi Kiran, your order shipped" })
    })
    const wamid = await inbound(from)
    const again = await openConversation(from, wamid)
    expect(again.last_message).toMatchObject({ direction: "inbound", id: wamid })
  })

  it("resolve: resolved, then not assignable (404 conversation_not_found); the customer's next message reopens it", async () => {
    const resolved = await resolve({ fullPhoneNumber: from })
    expect(resolved.status).toBe(200)
    expect(resolved.body).toMatchObject({ result: true, success: true, conversation: { id: conversation.id, status: "resolved", customer: { id: customerId } } })
    for (const r of [await assign({ fullPhoneNumber: from, agentEmail: "agent.one@customers.io" }), await resolve({ fullPhoneNumber: from })]) {
      expect(r.status).toBe(404)
      expect(r.body.code).toBe("conversation_not_found")
    }
    const wamid = await inbound(from)
    const reopened = await openConversation(from, wamid)
    expect(reopened).toMatchObject({ id: conversation.id, status: "open" })
    const assigned = await assign({ fullPhoneNumber: from, agentEmail: "Agent.One@customers.io" })
    expect(assigned.body.conversation).toMatchObject({ id: conversation.id, status: "open", assignee_email: "agent.one@customers.io" })
  })
})
