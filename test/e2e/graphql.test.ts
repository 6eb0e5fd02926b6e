import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { serverAudits } from "graphql-http"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor, ownerSession } from "../support/http.ts"
import { freePort } from "../support/TcpProxy.ts"

// POST /api/v1/graphql end to end: the transport (Bearer secret key, 400/401/413, the plan lock),
// the reads (me, wallet, its ledger, contacts with trait/tag filters and search, conversations and
// their messages both ways), the six mutations on REST's services, the cost and shape limits
// (src/graphql/cost.ts), introspection and tenant isolation; then broadcasts and their report
// against REST's reads (an RCS broadcast run by the in-process simulator) and WhatsApp calls made
// through the simulator's call route. Set-up as in customers.test.ts.

const iso = useIsolation()
const db = useDb(iso)
let node: HeraldProcess
let simUrl: string
let cli: ReturnType<typeof cliFor>
const accounts: Record<string, string> = {}
const keys: Record<string, string> = {}
/** Owner sessions, for REST's /api/v1/rcs routes (broadcasts). */
const jwt: Record<string, string> = {}
let numberA = ""

type Json = Record<string, any>

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const CREDITS = [10, 2.5, 0.75]

const call = (method: string, path: string, token?: string, body?: unknown) => callJson(node.url, method, path, token, body)
/** A GraphQL request with account `key` (A's by default). */
const gql = (query: string, variables?: Json, key = keys.a!) => callJson(node.url, "POST", "/api/v1/graphql", `Bearer ${key}`, { query, ...(variables ? { variables } : {}) })
/** A GraphQL request that must answer 200 without errors: its data. */
const data = async (query: string, variables?: Json, key?: string) => {
  const r = await gql(query, variables, key)
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  expect(r.body.errors, JSON.stringify(r.body.errors)).toBeUndefined()
  return r.body.data as Json
}
/** A GraphQL request answered 200 with one error: that error (and the data, if any). */
const refused = async (query: string, variables?: Json, key?: string) => {
  const r = await gql(query, variables, key)
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  expect(r.body.errors, JSON.stringify(r.body)).toHaveLength(1)
  return { error: r.body.errors[0] as Json, data: r.body.data as Json | null | undefined }
}
const raw = (body: string, headers: Record<string, string> = {}) =>
  fetch(`${node.url}/api/v1/graphql`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body }).then(async (r) => ({ status: r.status, body: (await r.json()) as Json }))
const track = async (body: Json, key = keys.a!) => {
  const r = await callJson(node.url, "POST", "/api/v1/public/track/users", `Basic ${key}`, body)
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  return r.body.id as string
}
/** The customer `from` writes to A's number through the simulator; its wamid. */
const inbound = async (from: string, name?: string) => {
  const r = await fetch(`${simUrl}/simulate/wa/inbound`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ phone_number_id: numberA, from, text: "hello", ...(name ? { name } : {}) })
  })
  expect(r.status).toBe(202)
  return ((await r.json()) as { id: string }).id
}

/** What a (signed) cursor carries. */
const cursorValues = (cursor: string) => JSON.parse(Buffer.from(cursor.split(".")[0]!, "base64url").toString("utf8")) as Array<any>
/** The cursor edited: other values under its signature. */
const edited = (cursor: string, values: ReadonlyArray<unknown>) => `${Buffer.from(JSON.stringify(values)).toString("base64url")}.${cursor.split(".")[1]}`

const CONTACT = `id contact_id name phone tags traits`
const CONVERSATION = `id status contact { id phone name } last_message { id direction text type } assignee { kind email }`

beforeAll(async () => {
  const simPort = await freePort()
  simUrl = `http://127.0.0.1:${simPort}`
  const env = envFor(iso, { GATEWAY_SIM_PORT: String(simPort), LOG_LEVEL: "warning" })
  cli = cliFor(env)
  node = await startHerald(env)
  // a: the main account; b: "another account"; s: a Starter account (no API access).
  const plans: Record<string, string> = { a: "enterprise", b: "enterprise", s: "starter" }
  const made = await Promise.all(
    Object.entries(plans).map(([name, plan]) => cli("admin", "create-account", "--email", `${name}@gql.io`, "--password", `${name} password`, "--label", name, "--plan", plan))
  )
  Object.keys(plans).forEach((name, i) => (accounts[name] = made[i].account_id))
  const [number] = await Promise.all([
    cli("admin", "create-wa-number", accounts.a!, "--phone", "+919800000401"),
    ...CREDITS.map((amount) => cli("admin", "wallet-credit", accounts.a!, String(amount))),
    // What `herald admin set-plan <id> enterprise --rate 60000` writes (as customers.test.ts does).
    db("UPDATE accounts SET plan_rate_per_minute = 60000 WHERE account_id = ANY($1::uuid[])", [[accounts.a, accounts.b]])
  ])
  numberA = number.phone_number_id
  await Promise.all(Object.keys(plans).map(async (name) => {
    const session = await ownerSession(node.url, `${name}@gql.io`, `${name} password`)
    jwt[name] = session.jwt
    keys[name] = session.key
  }))
  const members = await Promise.all([
    call("POST", "/api/v1/rcs/team", jwt.a, { email: "Agent.One@Gql.io", role: "operator", assigned_bots: ["*"], password: "agent password" }),
    call("POST", "/api/v1/rcs/team", jwt.b, { email: "agent.b@gql.io", role: "operator", assigned_bots: ["*"], password: "agent password" })
  ])
  expect(members.map((m) => m.status)).toEqual([200, 200])
}, 300_000)
afterAll(async () => {
  await node?.kill()
})

describe("transport", () => {
  it("401 UNAUTHENTICATED without a key, with a wrong one, or with Basic holding no secret key (the key itself as Basic is taken)", async () => {
    const none = await callJson(node.url, "POST", "/api/v1/graphql", undefined, { query: "{ me { label } }" })
    expect(none.status).toBe(401)
    expect(none.body.errors[0].extensions.code).toBe("UNAUTHENTICATED")
    const basic = await raw(JSON.stringify({ query: "{ me { label } }" }), { authorization: `Basic ${keys.a}` })
    expect(basic.status).toBe(200)
    for (const authorization of ["Bearer sk_live_0000000000000000000000000000000000000000", `Basic ${Buffer.from("a@graphql.io:password").toString("base64")}`, `Bearer ${keys.a}x`]) {
      const r = await raw(JSON.stringify({ query: "{ me { label } }" }), { authorization })
      expect(r.status, authorization).toBe(401)
      expect(r.body.errors[0].extensions.code, authorization).toBe("UNAUTHENTICATED")
      expect(r.body.data, authorization).toBeUndefined()
    }
  })

  it("400 for a body that is no GraphQL request; 413 past 1 MB, with or without a Content-Length", async () => {
    const auth = { authorization: `Bearer ${keys.a}` }
    for (const body of ["{}", "[]", JSON.stringify({ query: "  " }), JSON.stringify({ query: "{ me { label } }", variables: [1] })]) {
      const r = await raw(body, auth)
      expect(r.status, body).toBe(400)
      expect(r.body.errors?.[0]?.extensions?.code, body).toBe("VALIDATION_ERROR")
    }
    // Not JSON, JSON Postgres cannot store (a NUL), or another media type: 400 in GraphQL's shape.
    for (const [body, headers] of [["{not json", {}], [JSON.stringify({ query: "{ me { label } }", variables: { a: "\u0000" } }), {}], ["{ me { label } }", { "content-type": "application/graphql" }]] as const) {
      const r = await fetch(`${node.url}/api/v1/graphql`, { method: "POST", headers: { "content-type": "application/json", ...auth, ...headers }, body })
      expect(r.status, body).toBe(400)
      expect(((await r.json()) as Json).errors[0].extensions.code, body).toBe("VALIDATION_ERROR")
    }
    const big = JSON.stringify({ query: "{ me { label } }", padding: "x".repeat(1024 * 1024) })
    const sized = await raw(big, auth)
    expect(sized.status).toBe(413)
    expect(sized.body.errors[0].extensions.code).toBe("VALIDATION_ERROR")
    // Chunked, without a Content-Length: the same limit.
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big))
        controller.close()
      }
    })
    const chunked = await fetch(`${node.url}/api/v1/graphql`, { method: "POST", headers: { "content-type": "application/json", ...auth }, body: stream, duplex: "half" } as RequestInit)
    expect(chunked.status).toBe(413)
  })

  it("a Starter account: 200 with data null and FEATURE_LOCKED", async () => {
    const r = await gql("{ me { label } }", undefined, keys.s)
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ data: null, errors: [expect.objectContaining({ extensions: expect.objectContaining({ code: "FEATURE_LOCKED" }) })] })
  })

  it("a syntax error and an unknown field: VALIDATION_ERROR, nothing runs", async () => {
    for (const query of ["{ me { label ", "{ me { nope } }", "{ nope }", "mutation { sendText(input: {to: \"919876600001\"}) { message_id } }"]) {
      const r = await gql(query)
      expect(r.status, query).toBe(200)
      expect(r.body.data, query).toBeUndefined()
      expect(r.body.errors.length, query).toBeGreaterThan(0)
      expect(r.body.errors.map((e: Json) => e.extensions.code), query).toEqual(r.body.errors.map(() => "VALIDATION_ERROR"))
    }
  })
})

describe("GraphQL over HTTP: media types, GET, extensions, variables", () => {
  const GQL_JSON = "application/graphql-response+json"
  /** A request with `accept`, its status, content type and body. */
  const negotiated = async (accept: string | undefined, body: Json, method: "POST" | "GET" = "POST") => {
    const headers: Record<string, string> = { authorization: `Bearer ${keys.a}`, ...(accept === undefined ? {} : { accept }) }
    const url = new URL(`${node.url}/api/v1/graphql`)
    if (method === "GET") for (const [name, value] of Object.entries(body)) url.searchParams.set(name, typeof value === "string" ? value : JSON.stringify(value))
    const r = await fetch(url, method === "GET" ? { headers } : { method, headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) })
    return { status: r.status, type: r.headers.get("content-type") ?? "", allow: r.headers.get("allow"), body: (await r.json()) as Json }
  }

  it("application/graphql-response+json when the client prefers it (Apollo's and graphql-http's Accept), with its status codes; application/json as before", async () => {
    for (const accept of [GQL_JSON, `${GQL_JSON}, application/json`, `${GQL_JSON},application/json;q=0.9`, `application/json;q=0.5, ${GQL_JSON}`]) {
      const r = await negotiated(accept, { query: "{ me { label } }" })
      expect([r.status, r.type, r.body], accept).toEqual([200, `${GQL_JSON}; charset=utf-8`, { data: { me: { label: "a" } } }])
    }
    for (const accept of [undefined, "application/json", "*/*", "application/*", `application/json, ${GQL_JSON}`, `${GQL_JSON};q=0.5, application/json`, "text/html"]) {
      const r = await negotiated(accept, { query: "{ me { label } }" })
      expect([r.status, r.type, r.body], accept).toEqual([200, "application/json", { data: { me: { label: "a" } } }])
    }
    // Refused before anything ran: 400 and no data entry in graphql-response+json; 200 in application/json.
    const refusals: ReadonlyArray<Json> = [
      { query: "{ me { label " },
      { query: "{ nope }" },
      { query: "query($id: ID!) { contact(id: $id) { id } }", variables: { id: null } },
      { query: "query A { me { label } }", operationName: "B" },
      { query: `{ contacts(page: {limit: 101}) { edges { node { id } } } }` }
    ]
    for (const body of refusals) {
      const strict = await negotiated(GQL_JSON, body)
      expect([strict.status, strict.type], JSON.stringify(body)).toEqual([400, `${GQL_JSON}; charset=utf-8`])
      expect(strict.body.data, JSON.stringify(body)).toBeUndefined()
      expect(strict.body.errors[0].extensions.code, JSON.stringify(body)).toBe("VALIDATION_ERROR")
      const plain = await negotiated("application/json", body)
      expect([plain.status, plain.type, plain.body.errors[0].extensions.code], JSON.stringify(body)).toEqual([200, "application/json", "VALIDATION_ERROR"])
    }
    // A field's error with data: 200 in both.
    const missing = await negotiated(GQL_JSON, { query: `{ contact(id: "00000000-0000-4000-8000-000000000000") { id } }` })
    expect([missing.status, missing.body.data, missing.body.errors[0].extensions.code]).toEqual([200, { contact: null }, "NOT_FOUND"])
    // The plan: 403 (graphql-response+json), 200 with data null (application/json); a wrong key 401 in both.
    const locked = await fetch(`${node.url}/api/v1/graphql`, {
      method: "POST",
      headers: { authorization: `Bearer ${keys.s}`, accept: GQL_JSON, "content-type": "application/json" },
      body: JSON.stringify({ query: "{ me { label } }" })
    })
    expect(locked.status).toBe(403)
    expect(await locked.json()).toEqual({ errors: [expect.objectContaining({ extensions: expect.objectContaining({ code: "FEATURE_LOCKED" }) })] })
    const wrong = await fetch(`${node.url}/api/v1/graphql`, { method: "POST", headers: { authorization: "Bearer sk_live_nope", accept: GQL_JSON, "content-type": "application/json" }, body: "{}" })
    expect([wrong.status, wrong.headers.get("content-type")]).toEqual([401, `${GQL_JSON}; charset=utf-8`])
  })

  it("GET runs queries (variables and extensions as JSON text); a mutation is 405 with Allow: POST; an unknown parameter is 400", async () => {
    const query = "query($id: ID!) { contact(id: $id) { id } me { label } }"
    const ok = await negotiated("application/json", { query, variables: { id: "00000000-0000-4000-8000-000000000000" }, extensions: { some: "value" } }, "GET")
    expect([ok.status, ok.body.data]).toEqual([200, { contact: null, me: { label: "a" } }])
    const strict = await negotiated(GQL_JSON, { query: "query Me { me { label } }", operationName: "Me" }, "GET")
    expect([strict.status, strict.type, strict.body]).toEqual([200, `${GQL_JSON}; charset=utf-8`, { data: { me: { label: "a" } } }])
    const mutation = await negotiated(undefined, { query: `mutation { resolveConversation(conversationId: "00000000-0000-4000-8000-000000000000") { id } }` }, "GET")
    expect([mutation.status, mutation.allow, mutation.body.errors[0].extensions.code]).toEqual([405, "POST", "VALIDATION_ERROR"])
    for (const params of [{ query: "{ me { label } }", qeury: "x" }, { query: "{ me { label } }", variables: "{not json" }, { query: "{ me { label } }", variables: "[1]" }, { query: "{ me { label } }", extensions: "1" }, {}]) {
      const r = await negotiated(undefined, params, "GET")
      expect([r.status, r.body.errors[0].extensions.code], JSON.stringify(params)).toEqual([400, "VALIDATION_ERROR"])
    }
    const unknown = await negotiated(undefined, { query: "{ me { label } }", cursor: "x" }, "GET")
    expect(unknown.body.errors[0].message).toBe("unknown query parameter cursor; a GET takes query, variables, operationName, extensions")
  })

  it("extensions: an object or null is accepted (and ignored), anything else is 400", async () => {
    for (const extensions of [{ some: "value" }, null]) expect((await negotiated(undefined, { query: "{ me { label } }", extensions })).body).toEqual({ data: { me: { label: "a" } } })
    for (const extensions of ["string", 0, false, ["array"]]) {
      const r = await negotiated(undefined, { query: "{ me { label } }", extensions })
      expect([r.status, r.body.errors[0].message], JSON.stringify(extensions)).toEqual([400, "extensions must be an object"])
    }
  })

  it("graphql-http's serverAudits: every MUST, SHOULD and MAY passes", async () => {
    const withKey: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers)
      headers.set("authorization", `Bearer ${keys.a}`)
      return fetch(input, { ...init, headers })
    }
    const audits = serverAudits({ url: `${node.url}/api/v1/graphql`, fetchFn: withKey })
    const results = []
    for (const audit of audits) results.push(await audit.fn())
    const failed = results.filter((r) => r.status !== "ok").map((r) => `${r.id} ${r.name}: ${"reason" in r ? r.reason : ""}`)
    expect(failed).toEqual([])
    // Every level is in the suite (MUST, SHOULD and MAY), so a later version's new audit is run too.
    expect(new Set(results.map((r) => r.name.split(" ")[0]))).toEqual(new Set(["MUST", "SHOULD", "MAY"]))
  })

  it("a variable of the wrong type, or an input object missing a required field: VALIDATION_ERROR naming the field, field its input path", async () => {
    const send = `mutation($input: SendTextInput!) { sendText(input: $input) { message_id } }`
    const cases: ReadonlyArray<readonly [string, Json, string, RegExp]> = [
      [send, { input: { to: "919876600001" } }, "input.text", /^input\.text: Field "text" of required type "String!" was not provided/],
      [send, { input: { to: 919876600001, text: "hi" } }, "input.to", /^input\.to: String cannot represent a non string value/],
      [`mutation($to: String!, $text: String!) { sendText(input: {to: $to, text: $text}) { message_id } }`, { to: "919876600001", text: 5 }, "input.text", /^input\.text: /],
      [send, {}, "input", /^input: is required/],
      [`mutation($c: ID!, $t: [String!]!) { addTags(contactId: $c, tags: $t) { id } }`, { c: "x", t: ["a", 5] }, "tags[1]", /^tags\[1\]: /],
      [`query($n: Int) { contacts(page: {limit: $n}) { edges { node { id } } } }`, { n: "ten" }, "page.limit", /^page\.limit: Int cannot represent/]
    ]
    for (const [query, variables, field, message] of cases) {
      const r = await gql(query, variables)
      expect(r.status, field).toBe(200)
      expect(r.body.data, field).toBeUndefined()
      expect(r.body.errors, field).toHaveLength(1)
      expect(r.body.errors[0].extensions, field).toEqual({ code: "VALIDATION_ERROR", field })
      expect(r.body.errors[0].message, field).toMatch(message)
    }
    // Nothing was sent.
    const [row] = await db<{ n: number }>("SELECT count(*)::int AS n FROM wa_messages WHERE account_id = $1", [accounts.a])
    expect(row!.n).toBe(0)
  })
})

describe("me, wallet and its transactions", () => {
  it("me and wallet", async () => {
    const [row] = await db<{ currency: string }>("SELECT currency FROM accounts WHERE account_id = $1", [accounts.a])
    const wallet = { balance: 13.25, currency: row!.currency }
    expect(await data("{ me { account_id label plan rate_limit_per_minute wallet { balance currency } } wallet { balance currency } }")).toEqual({
      me: { account_id: accounts.a, label: "a", plan: "ENTERPRISE", rate_limit_per_minute: 60000, wallet },
      wallet
    })
    const b = await data("{ me { account_id plan rate_limit_per_minute wallet { balance } } }", undefined, keys.b)
    expect(b.me).toEqual({ account_id: accounts.b, plan: "ENTERPRISE", rate_limit_per_minute: 60000, wallet: { balance: 0 } })
  })

  it("walletTransactions pages by endCursor: every credit once, newest first", async () => {
    const query = `query($cursor: String) { walletTransactions(page: {limit: 2, cursor: $cursor}) {
      edges { cursor node { id kind amount balance_after created_at } } pageInfo { hasNextPage endCursor } } }`
    const first = (await data(query)).walletTransactions
    expect(first.edges).toHaveLength(2)
    expect(first.pageInfo).toEqual({ hasNextPage: true, endCursor: first.edges[1].cursor })
    const second = (await data(query, { cursor: first.pageInfo.endCursor })).walletTransactions
    expect(second.edges).toHaveLength(1)
    expect(second.pageInfo).toEqual({ hasNextPage: false, endCursor: second.edges[0].cursor })
    const nodes = [...first.edges, ...second.edges].map((e: Json) => e.node)
    expect(new Set(nodes.map((n) => n.id)).size).toBe(3)
    for (const n of nodes) expect(n).toMatchObject({ id: expect.stringMatching(UUID), kind: "CREDIT", amount: expect.any(Number) })
    // `herald admin wallet-credit`'s credits: reference admin (shared/design/graphql.md).
    const references = (await data(`{ walletTransactions { edges { node { reference } } } }`)).walletTransactions.edges.map((e: Json) => e.node.reference)
    expect(references).toEqual(CREDITS.map(() => "admin"))
    expect(nodes.map((n) => n.amount).sort((x, y) => x - y)).toEqual([...CREDITS].sort((x, y) => x - y))
    const times = nodes.map((n) => Date.parse(n.created_at))
    expect(times).toEqual([...times].sort((x, y) => y - x))
    expect(Math.max(...nodes.map((n) => n.balance_after))).toBe(13.25)
    // A cursor that is not one of ours; one edited to another well-formed position (another id, the
    // first row's time); the same position unsigned.
    const [at, id] = cursorValues(first.pageInfo.endCursor)
    for (
      const cursor of [
        "garbage",
        edited(first.pageInfo.endCursor, [at, "00000000-0000-4000-8000-000000000000"]),
        edited(first.pageInfo.endCursor, [first.edges[0].node.created_at.replace("Z", "000Z"), id]),
        Buffer.from(JSON.stringify([at, id])).toString("base64url")
      ]
    ) {
      const bad = await refused(query, { cursor })
      expect(bad.error.extensions, cursor).toMatchObject({ code: "VALIDATION_ERROR", field: "page.cursor" })
    }
  })
})

describe("contacts", () => {
  // Made one at a time, so newest first is the reverse: p3, p2, p1 match city=Pune and vip.
  const ids: Record<string, string> = {}
  let theirs = ""

  beforeAll(async () => {
    const fixture: Array<[string, Json]> = [
      ["p1", { name: "Meera Iyer", traits: { city: "Pune", n: 1 }, tags: ["vip", "north"] }],
      ["mumbai", { name: "Arjun Shah", traits: { city: "Mumbai" }, tags: ["vip"] }],
      ["p2", { name: "Rohan Mehta", traits: { city: "Pune", n: 2 }, tags: ["vip"] }],
      ["notvip", { name: "Kavya Nair", traits: { city: "Pune" }, tags: ["regular"] }],
      ["p3", { name: "Sunil Das", traits: { city: "Pune", n: 3 }, tags: ["south", "vip"] }]
    ]
    for (const [i, [name, body]] of fixture.entries()) ids[name] = await track({ fullPhoneNumber: `9198766001${String(i).padStart(2, "0")}`, ...body })
    theirs = await track({ fullPhoneNumber: "919876600100", name: "Meera Iyer", traits: { city: "Pune" }, tags: ["vip"] }, keys.b)
  })

  it("a trait and tag filter, paged by endCursor without repeats", async () => {
    const query = `query($cursor: String) {
      contacts(filter: {traits: [{trait: "city", op: EQ, value: "Pune"}], tags: ["vip"]}, page: {limit: 2, cursor: $cursor}) {
        edges { cursor node { ${CONTACT} } } pageInfo { hasNextPage endCursor } } }`
    const first = (await data(query)).contacts
    expect(first.pageInfo).toEqual({ hasNextPage: true, endCursor: first.edges[1].cursor })
    const second = (await data(query, { cursor: first.pageInfo.endCursor })).contacts
    expect(second.pageInfo.hasNextPage).toBe(false)
    const nodes = [...first.edges, ...second.edges].map((e: Json) => e.node)
    expect(nodes.map((n) => n.id)).toEqual([ids.p3, ids.p2, ids.p1])
    expect(nodes[2]).toEqual({ id: ids.p1, contact_id: ids.p1, name: "Meera Iyer", phone: "+919876600100", tags: ["vip", "north"], traits: { city: "Pune", n: 1 } })
    for (const n of nodes) {
      expect(n.contact_id).toBe(n.id)
      expect(n.phone).toMatch(/^\+919876600\d{3}$/)
      expect(n.tags).toContain("vip")
      expect(n.traits.city).toBe("Pune")
    }
    // Another account's cursor of the same list is no cursor here.
    const theirCursor = (await data(`{ contacts(page: {limit: 1}) { pageInfo { endCursor } } }`, undefined, keys.b)).contacts.pageInfo.endCursor
    expect(theirCursor).toEqual(expect.any(String))
    expect((await refused(query, { cursor: theirCursor })).error.extensions).toMatchObject({ code: "VALIDATION_ERROR", field: "page.cursor" })
    // Filters through variables: the same contacts (a number compared as a number).
    const gte = await data(`query($f: ContactFilter) { contacts(filter: $f) { edges { node { id } } } }`, { f: { traits: [{ trait: "n", op: "GTE", value: 2 }] } })
    expect(gte.contacts.edges.map((e: Json) => e.node.id)).toEqual([ids.p3, ids.p2])
  })

  it("search by part of a name (any case) or of the phone", async () => {
    const found = async (search: string) => (await data(`query($s: String) { contacts(filter: {search: $s}) { edges { node { id } } } }`, { s: search })).contacts.edges.map((e: Json) => e.node.id)
    expect(await found("mehT")).toEqual([ids.p2])
    expect(await found("Iyer")).toEqual([ids.p1])
    expect(await found("6600104")).toEqual([ids.p3])
    expect(await found("nobody by that name")).toEqual([])
  })

  it("a bad filter: VALIDATION_ERROR naming filter.traits", async () => {
    const { error, data: d } = await refused(`{ contacts(filter: {traits: [{trait: "city", op: GT, value: "abc"}]}) { edges { node { id } } } }`)
    expect(d).toBeNull()
    expect(error.extensions).toMatchObject({ code: "VALIDATION_ERROR", reason: "invalid_request" })
    expect(error.extensions.field).toMatch(/^filter\.traits/)
  })

  it("contact(id): its fields; NOT_FOUND for another account's, a malformed and an unknown id", async () => {
    expect((await data(`query($id: ID!) { contact(id: $id) { ${CONTACT} } }`, { id: ids.mumbai })).contact).toEqual({
      id: ids.mumbai,
      contact_id: ids.mumbai,
      name: "Arjun Shah",
      phone: "+919876600101",
      tags: ["vip"],
      traits: { city: "Mumbai" }
    })
    for (const id of [theirs, "not-a-uuid", "00000000-0000-0000-0000-000000000000"]) {
      const { error, data: d } = await refused(`query($id: ID!) { contact(id: $id) { id name } }`, { id })
      expect(error.extensions.code, id).toBe("NOT_FOUND")
      expect(error.path, id).toEqual(["contact"])
      expect(d, id).toEqual({ contact: null })
    }
  })

  it("tenant isolation: B's list has B's contact and none of A's", async () => {
    const list = (await data(`{ contacts(page: {limit: 100}) { edges { node { id name } } } }`, undefined, keys.b)).contacts.edges.map((e: Json) => e.node.id)
    expect(list).toEqual([theirs])
    const ofA = (await data(`{ contacts(page: {limit: 100}) { edges { node { id } } } }`)).contacts.edges.map((e: Json) => e.node.id)
    expect(ofA).not.toContain(theirs)
    expect(ofA).toEqual(expect.arrayContaining(Object.values(ids)))
  })
})

describe("conversations, messages and the mutations", () => {
  const from = "919876600201"
  let wamid = ""
  let conversation: Json = {}
  let sentId = ""

  it("after an inbound message: the conversation in the list, by id, and under its contact", async () => {
    wamid = await inbound(from, "Kiran Gql")
    conversation = await eventually(async () => {
      const list = (await data(`{ conversations { edges { node { ${CONVERSATION} } } pageInfo { hasNextPage } } }`)).conversations
      expect(list.edges).toHaveLength(1)
      expect(list.edges[0].node.last_message?.id).toBe(wamid)
      return list.edges[0].node
    })
    expect(conversation).toEqual({
      id: expect.stringMatching(UUID),
      status: "OPEN",
      contact: { id: expect.stringMatching(UUID), phone: `+${from}`, name: "Kiran Gql" },
      last_message: { id: wamid, direction: "INBOUND", text: "hello", type: expect.any(String) },
      assignee: null
    })
    expect((await data(`query($id: ID!) { conversation(id: $id) { ${CONVERSATION} } }`, { id: conversation.id })).conversation).toEqual(conversation)
    // Contact.conversations, under contact(id) and under a list (its loader).
    const nested = `conversations(page: {limit: 5}) { edges { node { id status } } pageInfo { hasNextPage } }`
    const one = await data(`query($id: ID!) { contact(id: $id) { name ${nested} } }`, { id: conversation.contact.id })
    expect(one.contact).toEqual({ name: "Kiran Gql", conversations: { edges: [{ node: { id: conversation.id, status: "OPEN" } }], pageInfo: { hasNextPage: false } } })
    const many = await data(`{ contacts(page: {limit: 10}) { edges { node { id ${nested} } } } }`)
    const byId = new Map(many.contacts.edges.map((e: Json) => [e.node.id, e.node.conversations.edges.map((c: Json) => c.node.id)]))
    expect(byId.get(conversation.contact.id)).toEqual([conversation.id])
    expect(byId.get(many.contacts.edges.find((e: Json) => e.node.id !== conversation.contact.id).node.id)).toEqual([])
  })

  it("sendText inside the window: QUEUED; messages newest first hold it (OUTBOUND) and the inbound one", async () => {
    const sent = await data(`mutation($to: String!) { sendText(input: {to: $to, text: "Your order shipped"}) { message_id status } }`, { to: `+${from}` })
    expect(sent.sendText).toEqual({ message_id: expect.stringMatching(UUID), status: "QUEUED" })
    sentId = sent.sendText.message_id
    const messages = await eventually(async () => {
      const d = await data(`query($id: ID!) { messages(conversationId: $id, page: {limit: 10}) { edges { node { id conversation_id direction type text status created_at } } } }`, {
        id: conversation.id
      })
      expect(d.messages.edges).toHaveLength(2)
      return d.messages.edges.map((e: Json) => e.node)
    })
    expect(messages[0]).toMatchObject({ id: sentId, conversation_id: conversation.id, direction: "OUTBOUND", type: "Text", text: "Your order shipped" })
    expect(["QUEUED", "SENT", "DELIVERED", "READ"]).toContain(messages[0].status)
    expect(messages[1]).toMatchObject({ id: wamid, conversation_id: conversation.id, direction: "INBOUND", text: "hello", status: null })
    expect(Date.parse(messages[0].created_at)).toBeGreaterThanOrEqual(Date.parse(messages[1].created_at))
    // Paged by one: the same two, in the same order.
    const query = `query($id: ID!, $c: String) { messages(conversationId: $id, page: {limit: 1, cursor: $c}) { edges { node { id } } pageInfo { hasNextPage endCursor } } }`
    const p1 = (await data(query, { id: conversation.id })).messages
    const p2 = (await data(query, { id: conversation.id, c: p1.pageInfo.endCursor })).messages
    expect([p1.pageInfo.hasNextPage, p2.pageInfo.hasNextPage]).toEqual([true, false])
    expect([...p1.edges, ...p2.edges].map((e: Json) => e.node.id)).toEqual([sentId, wamid])
    // The conversation's last message is the outbound one now, with its send's status.
    const last = await eventually(async () => {
      const d = await data(`query($id: ID!) { conversation(id: $id) { last_message { id direction status } } }`, { id: conversation.id })
      expect(d.conversation.last_message.id).toBe(sentId)
      return d.conversation.last_message
    })
    expect(last.direction).toBe("OUTBOUND")
    expect(["QUEUED", "SENT", "DELIVERED", "READ"]).toContain(last.status)
  })

  it("sendText refusals: outside the window (reason outside_service_window), an invalid to (field input.to)", async () => {
    const outside = await refused(`mutation { sendText(input: {to: "919876600299", text: "hi"}) { message_id } }`)
    expect(outside.data).toBeNull()
    expect(outside.error.extensions).toMatchObject({ code: "VALIDATION_ERROR", reason: "outside_service_window" })
    const invalid = await refused(`mutation { sendText(input: {to: "12345", text: "hi"}) { message_id } }`)
    expect(invalid.error.extensions).toMatchObject({ code: "VALIDATION_ERROR", reason: "invalid_request", field: "input.to" })
    const [row] = await db<{ n: number }>("SELECT count(*)::int AS n FROM wa_messages WHERE account_id = $1", [accounts.a])
    expect(row!.n).toBe(1)
  })

  it("createContact is idempotent by phone (the existing contact, unchanged: docs/graphql.md); addTags and removeTags", async () => {
    const create = `mutation($input: CreateContactInput!) { createContact(input: $input) { ${CONTACT} } }`
    const first = (await data(create, { input: { phone: "+91 98766 00301", name: "Nisha", traits: { a: 1, keep: "x" }, tags: ["t1"] } })).createContact
    expect(first).toEqual({ id: expect.stringMatching(UUID), contact_id: first.id, name: "Nisha", phone: "+919876600301", tags: ["t1"], traits: { a: 1, keep: "x" } })
    const again = (await data(create, { input: { phone: "919876600301", name: "Other", traits: { a: 2, b: true }, tags: ["t9"] } })).createContact
    expect(again).toEqual(first)
    const bad = await refused(create, { input: { phone: "not a phone" } })
    expect(bad.error.extensions).toMatchObject({ code: "VALIDATION_ERROR", field: "input.phone" })

    const tags = (op: string, contactId: string, list: Array<string>, key?: string) =>
      gql(`mutation($c: ID!, $t: [String!]!) { ${op}(contactId: $c, tags: $t) { id tags } }`, { c: contactId, t: list }, key)
    expect((await tags("addTags", first.id, ["t2", "t1", "t3"])).body).toEqual({ data: { addTags: { id: first.id, tags: ["t1", "t2", "t3"] } } })
    expect((await tags("removeTags", first.id, ["t1", "nope"])).body).toEqual({ data: { removeTags: { id: first.id, tags: ["t2", "t3"] } } })
    // Another account's contact, or none: NOT_FOUND, and A's contact is untouched.
    for (const op of ["addTags", "removeTags"]) {
      for (const [id, key] of [[first.id, keys.b], ["not-a-uuid", keys.a]] as const) {
        const r = await tags(op, id, ["t2"], key)
        expect(r.body.errors?.[0]?.extensions?.code, `${op} ${id}`).toBe("NOT_FOUND")
      }
    }
    expect((await data(`query($id: ID!) { contact(id: $id) { tags } }`, { id: first.id })).contact.tags).toEqual(["t2", "t3"])
  })

  it("assignConversation: to a member by e-mail; another account's member is NOT_FOUND and changes nothing; empty unassigns", async () => {
    const assign = (agentEmail: string, conversationId = conversation.id, key?: string) =>
      gql(`mutation($c: ID!, $e: String!) { assignConversation(conversationId: $c, agentEmail: $e) { id status assignee { kind email } } }`, { c: conversationId, e: agentEmail }, key)
    const assigneeNow = async () => (await data(`query($id: ID!) { conversation(id: $id) { assignee { email } } }`, { id: conversation.id })).conversation.assignee
    expect((await assign("AGENT.one@gql.io")).body).toEqual({
      data: { assignConversation: { id: conversation.id, status: "OPEN", assignee: { kind: "MEMBER", email: "agent.one@gql.io" } } }
    })
    // member_id: the member's, as the team list shows it.
    const team = await call("GET", "/api/v1/rcs/team", jwt.a)
    const member = team.body.members.find((m: Json) => m.email === "agent.one@gql.io")
    expect(member.member_id).toMatch(UUID)
    expect((await data(`query($id: ID!) { conversation(id: $id) { assignee { kind member_id ai_agent_id } } }`, { id: conversation.id })).conversation.assignee)
      .toEqual({ kind: "MEMBER", member_id: member.member_id, ai_agent_id: null })
    for (const email of ["agent.b@gql.io", "b@gql.io", "nobody@gql.io"]) {
      const r = await assign(email)
      expect(r.body.errors?.[0]?.extensions?.code, email).toBe("NOT_FOUND")
      expect(r.body.data, email).toBeNull()
    }
    expect(await assigneeNow()).toEqual({ email: "agent.one@gql.io" })
    // B cannot assign A's conversation, even to B's own member.
    expect((await assign("agent.b@gql.io", conversation.id, keys.b)).body.errors?.[0]?.extensions?.code).toBe("NOT_FOUND")
    expect(await assigneeNow()).toEqual({ email: "agent.one@gql.io" })
    const listed = await data(`query($e: String) { conversations(filter: {assignee_email: $e}) { edges { node { id } } } }`, { e: "Agent.One@gql.io" })
    expect(listed.conversations.edges.map((e: Json) => e.node.id)).toEqual([conversation.id])
    expect((await assign("")).body.data.assignConversation.assignee).toBeNull()
    expect(await assigneeNow()).toBeNull()
  })

  it("resolveConversation: RESOLVED (and again), then not assignable", async () => {
    const resolve = (id: string, key?: string) => gql(`mutation($c: ID!) { resolveConversation(conversationId: $c) { id status } }`, { c: id }, key)
    expect((await resolve(conversation.id, keys.b)).body.errors?.[0]?.extensions?.code).toBe("NOT_FOUND")
    expect((await resolve(conversation.id)).body).toEqual({ data: { resolveConversation: { id: conversation.id, status: "RESOLVED" } } })
    expect((await resolve(conversation.id)).body).toEqual({ data: { resolveConversation: { id: conversation.id, status: "RESOLVED" } } })
    expect((await resolve("not-a-uuid")).body.errors?.[0]?.extensions?.code).toBe("NOT_FOUND")
    const assign = await gql(`mutation($c: ID!) { assignConversation(conversationId: $c, agentEmail: "agent.one@gql.io") { id } }`, { c: conversation.id })
    expect(assign.body.errors?.[0]?.extensions?.code).toBe("NOT_FOUND")
    const byStatus = async (status: string) =>
      (await data(`query($s: ConversationStatus) { conversations(filter: {status: $s}) { edges { node { id status } } } }`, { s: status })).conversations.edges
    expect(await byStatus("RESOLVED")).toEqual([{ node: { id: conversation.id, status: "RESOLVED" } }])
    expect(await byStatus("OPEN")).toEqual([])
  })

  it("tenant isolation: B cannot read A's conversation, its messages or its contact; B's lists are its own", async () => {
    for (const [query, field] of [
      [`query($id: ID!) { conversation(id: $id) { id } }`, "conversation"],
      [`query($id: ID!) { messages(conversationId: $id) { edges { node { id text } } } }`, "messages"]
    ] as const) {
      const { error } = await refused(query, { id: conversation.id }, keys.b)
      expect(error.extensions.code, field).toBe("NOT_FOUND")
      expect(error.path, field).toEqual([field])
    }
    expect((await refused(`query($id: ID!) { contact(id: $id) { id } }`, { id: conversation.contact.id }, keys.b)).error.extensions.code).toBe("NOT_FOUND")
    expect((await data(`{ conversations { edges { node { id } } } }`, undefined, keys.b)).conversations.edges).toEqual([])
    expect((await data(`{ walletTransactions { edges { node { id } } } }`, undefined, keys.b)).walletTransactions.edges).toEqual([])
  })
})

describe("cost and shape", () => {
  // contacts(page: {limit: N}) { edges { node { id } } } costs 1 + N; pageInfo { hasNextPage endCursor } adds 2; __typename nothing.
  const costing = (last: number) =>
    `{ __typename ${Array.from({ length: 9 }, (_, i) => `c${i}: contacts(page: {limit: 100}) { edges { node { id __typename } } }`).join(" ")}
       last: contacts(page: {limit: ${last}}) { __typename edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }`

  it("a query costing exactly 1000 runs; 1001 is QUERY_TOO_EXPENSIVE with its cost and the maximum", async () => {
    // 9 × 101 + (1 + 88 + 2) = 1000.
    const ok = await data(costing(88))
    expect(Object.keys(ok)).toHaveLength(11)
    expect(ok.last.edges.length).toBeGreaterThan(0)
    const r = await gql(costing(89))
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ errors: [expect.objectContaining({ extensions: { code: "QUERY_TOO_EXPENSIVE", cost: 1001, maximum: 1000 } })] })
  })

  it("a page limit of 101 (inline or a variable) or 0: VALIDATION_ERROR naming the argument", async () => {
    for (const [query, variables, field] of [
      [`{ contacts(page: {limit: 101}) { edges { node { id } } } }`, undefined, "contacts.page.limit"],
      [`query($p: PageInput) { contacts(page: $p) { edges { node { id } } } }`, { p: { limit: 101 } }, "contacts.page.limit"],
      [`{ mine: conversations(page: {limit: 0}) { edges { node { id } } } }`, undefined, "mine.page.limit"]
    ] as const) {
      const r = await gql(query, variables)
      expect(r.status).toBe(200)
      expect(r.body.data, field).toBeUndefined()
      expect(r.body.errors, field).toEqual([expect.objectContaining({ extensions: { code: "VALIDATION_ERROR", field } })])
    }
    expect((await data(`{ contacts(page: {limit: 100}) { edges { node { id } } } }`)).contacts.edges.length).toBeGreaterThan(0)
  })

  it("depth: 12 levels run, 13 are refused", async () => {
    const hop = (inner: string) => `conversations(page: {limit: 1}) { edges { node { contact { ${inner} } } } }`
    // conversations, edges, node, contact: 4 levels a hop. Two hops and conversations { edges { node { id } } } are 12; three hops and id, 13.
    const twelve = `{ ${hop(hop(`conversations(page: {limit: 1}) { edges { node { id } } }`))} }`
    const thirteen = `{ ${hop(hop(hop("id")))} }`
    expect(await data(twelve)).toHaveProperty("conversations")
    const r = await gql(thirteen)
    expect(r.body.data).toBeUndefined()
    expect(r.body.errors[0].extensions.code).toBe("VALIDATION_ERROR")
    expect(r.body.errors[0].message).toMatch(/deeper than 12/)
  })

  it("2,000 aliases run, 2,001 are refused", async () => {
    const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: __typename`).join(" ")} }`
    const ok = await data(aliases(2000))
    expect(Object.keys(ok)).toHaveLength(2000)
    const r = await gql(aliases(2001))
    expect(r.body.data).toBeUndefined()
    expect(r.body.errors[0].extensions.code).toBe("VALIDATION_ERROR")
    expect(r.body.errors[0].message).toMatch(/more than 2000 fields/)
  })

  it("introspection: the Query type and exactly the six mutations", async () => {
    const d = await data(`{ __schema { queryType { name } mutationType { fields { name } } } }`)
    expect(d.__schema.queryType).toEqual({ name: "Query" })
    expect(d.__schema.mutationType.fields.map((f: Json) => f.name).sort()).toEqual(
      ["sendText", "createContact", "addTags", "removeTags", "assignConversation", "resolveConversation"].sort()
    )
  })
})

describe("broadcasts and broadcastReport, against REST's reads", () => {
  // A target's REST status as a MessageStatus (docs/graphql.md, Broadcasts).
  const AS_MESSAGE_STATUS: Record<string, string> = {
    pending: "QUEUED",
    unconfirmed: "QUEUED",
    sent: "SENT",
    delivered: "DELIVERED",
    read: "READ",
    failed: "FAILED",
    cancelled: "FAILED"
  }
  const BROADCAST = `id name status total_count sent_count delivered_count read_count failed_count created_at`
  const TARGETS = `query($id: ID!, $s: MessageStatus, $c: String) { broadcastReport(id: $id) {
    targets(status: $s, page: {limit: 2, cursor: $c}) { edges { node { phone status failure_reason message_id } } pageInfo { hasNextPage endCursor } } } }`
  const rest = (path: string) => call("GET", `/api/v1/rcs/broadcasts${path}`, jwt.a)
  let botId = ""
  /** REST's view of the finished broadcast. */
  let done: Json = {}
  let scheduledId = ""

  /** Every target of the report, two a page through GraphQL. */
  const targetsOf = async (id: string, status?: string) => {
    const out: Array<Json> = []
    let cursor: string | undefined
    for (;;) {
      const page = (await data(TARGETS, { id, s: status, c: cursor })).broadcastReport.targets
      out.push(...page.edges.map((e: Json) => e.node))
      if (!page.pageInfo.hasNextPage) return out
      cursor = page.pageInfo.endCursor
    }
  }

  beforeAll(async () => {
    botId = (await cli("admin", "create-bot", accounts.a!, "--name", "Gql Promo", "--use-case", "promotional", "--status", "active")).bot_id
    const template = await call("POST", "/api/v1/rcs/templates", jwt.a, { bot_id: botId, name: "gql offer", type: "text", text: "Big sale today" })
    expect(template.status, JSON.stringify(template.body)).toBe(200)
    const list = await call("POST", "/api/v1/rcs/contact-lists", jwt.a, { name: "gql list" })
    expect(list.status).toBe(200)
    const listId = list.body.list.list_id as string
    // Three recipients read it, one never reads (0005), one has no RCS (0001: failed, with the gateway's reason).
    const phones = ["+919877001111", "+919877002222", "+919877003333", "+919877000005", "+919877000001"]
    const imported = await fetch(`${node.url}/api/v1/rcs/contact-lists/${listId}/contacts`, {
      method: "POST",
      headers: { authorization: `Bearer ${jwt.a}`, "content-type": "text/csv" },
      body: `phone\n${phones.join("\n")}\n`
    })
    expect(imported.status).toBe(200)
    const body = { bot_id: botId, template_id: template.body.template_id, contact_list_id: listId }
    const created = await call("POST", "/api/v1/rcs/broadcasts", jwt.a, { ...body, name: "Gql sale" })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    // Finished, and no count moves any more: four delivered, three of them read, one failed.
    done = await eventually(async () => {
      const b = (await rest(`/${created.body.broadcast.id}`)).body.broadcast
      expect(b).toMatchObject({ status: "completed", total_count: 5, sent_count: 4, delivered_count: 4, read_count: 3, failed_count: 1 })
      return b
    }, { timeoutMs: 60_000, intervalMs: 200 })
    const later = await call("POST", "/api/v1/rcs/broadcasts", jwt.a, { ...body, name: "Gql later", scheduled_at: new Date(Date.now() + 86_400_000).toISOString() })
    expect(later.status, JSON.stringify(later.body)).toBe(200)
    scheduledId = later.body.broadcast.id
  })

  it("broadcast(id) and the report's broadcast are REST's; by_status counts REST's targets by status", async () => {
    const d = await data(`query($id: ID!) { broadcast(id: $id) { ${BROADCAST} } broadcastReport(id: $id) { broadcast { ${BROADCAST} } by_status { status count } } }`, { id: done.id })
    const expected = {
      id: done.id,
      name: "Gql sale",
      status: "COMPLETED",
      total_count: done.total_count,
      sent_count: done.sent_count,
      delivered_count: done.delivered_count,
      read_count: done.read_count,
      failed_count: done.failed_count,
      created_at: done.created_at
    }
    expect(d.broadcast).toEqual(expected)
    expect(d.broadcastReport.broadcast).toEqual(expected)
    const targets = (await rest(`/${done.id}/targets?limit=1000`)).body.targets as Array<Json>
    const counted = ["QUEUED", "SENT", "DELIVERED", "READ", "FAILED"].map((status) => ({ status, count: targets.filter((t) => AS_MESSAGE_STATUS[t.status] === status).length }))
    expect(d.broadcastReport.by_status).toEqual(counted)
    expect(counted.map((c) => c.count)).toEqual([0, 0, 1, 3, 1])
  })

  it("the report's targets: REST's, newest first, paged by endCursor; the status filter; an edited cursor", async () => {
    const targets = (await rest(`/${done.id}/targets?limit=1000`)).body.targets as Array<Json>
    expect(targets).toHaveLength(5)
    const asGraphql = (t: Json) => ({ phone: t.phone, status: AS_MESSAGE_STATUS[t.status], failure_reason: t.failure_reason, message_id: t.message_id })
    expect(await targetsOf(done.id)).toEqual(targets.map(asGraphql))
    const failed = await targetsOf(done.id, "FAILED")
    expect(failed).toEqual([{ phone: "+919877000001", status: "FAILED", failure_reason: expect.stringMatching(/\S/), message_id: expect.stringMatching(UUID) }])
    expect(await targetsOf(done.id, "DELIVERED")).toEqual(targets.filter((t) => t.phone === "+919877000005").map(asGraphql))
    expect(await targetsOf(done.id, "READ")).toEqual(targets.filter((t) => t.status === "read").map(asGraphql))
    expect(await targetsOf(done.id, "QUEUED")).toEqual([])
    // A cursor that is no target number, and one that is not a cursor.
    const { endCursor } = (await data(TARGETS, { id: done.id })).broadcastReport.targets.pageInfo
    const [targetNo] = cursorValues(endCursor)
    for (const c of [edited(endCursor, ["3"]), edited(endCursor, [targetNo - 1]), Buffer.from(JSON.stringify([targetNo])).toString("base64url"), "garbage"]) {
      const bad = await refused(TARGETS, { id: done.id, c })
      expect(bad.error.extensions, c).toMatchObject({ code: "VALIDATION_ERROR", field: "page.cursor" })
      expect(bad.error.path, c).toEqual(["broadcastReport", "targets"])
    }
  })

  it("broadcasts: newest first, paged; filters by status and bot_id; an edited cursor is VALIDATION_ERROR", async () => {
    const query = `query($c: String) { broadcasts(page: {limit: 1, cursor: $c}) { edges { node { id status } } pageInfo { hasNextPage endCursor } } }`
    const first = (await data(query)).broadcasts
    expect(first).toEqual({ edges: [{ node: { id: scheduledId, status: "SCHEDULED" } }], pageInfo: { hasNextPage: true, endCursor: expect.any(String) } })
    const second = (await data(query, { c: first.pageInfo.endCursor })).broadcasts
    expect(second).toEqual({ edges: [{ node: { id: done.id, status: "COMPLETED" } }], pageInfo: { hasNextPage: false, endCursor: expect.any(String) } })
    expect((await rest("")).body.broadcasts.map((b: Json) => b.id)).toEqual([scheduledId, done.id])
    const ids = async (f: Json) => (await data(`query($f: BroadcastFilter) { broadcasts(filter: $f) { edges { node { id } } } }`, { f })).broadcasts.edges.map((e: Json) => e.node.id)
    expect(await ids({ status: "COMPLETED" })).toEqual([done.id])
    expect(await ids({ status: "SCHEDULED", bot_id: botId })).toEqual([scheduledId])
    expect(await ids({ bot_id: botId })).toEqual([scheduledId, done.id])
    expect(await ids({ status: "RUNNING" })).toEqual([])
    expect(await ids({ bot_id: "not-a-uuid" })).toEqual([])
    const [at, id] = cursorValues(first.pageInfo.endCursor)
    for (const c of [edited(first.pageInfo.endCursor, [at, `${id}x`]), edited(first.pageInfo.endCursor, ["yesterday", id]), edited(first.pageInfo.endCursor, [at, done.id]), Buffer.from(JSON.stringify([at, id])).toString("base64url"), "garbage"]) {
      const bad = await refused(query, { c })
      expect(bad.error.extensions, c).toMatchObject({ code: "VALIDATION_ERROR", field: "page.cursor" })
    }
  })

  it("tenant isolation: B cannot read A's broadcast or its report (NOT_FOUND), B's list is empty; a malformed or unknown id is NOT_FOUND", async () => {
    for (const [id, key] of [[done.id, keys.b], ["not-a-uuid", keys.a], ["00000000-0000-0000-0000-000000000000", keys.a]] as const) {
      for (const [field, selection] of [["broadcast", "id name"], ["broadcastReport", "broadcast { id } by_status { count }"]] as const) {
        const { error, data: d } = await refused(`query($id: ID!) { ${field}(id: $id) { ${selection} } }`, { id }, key)
        expect(error.extensions.code, `${field} ${id}`).toBe("NOT_FOUND")
        expect(error.path, `${field} ${id}`).toEqual([field])
        expect(d, `${field} ${id}`).toEqual({ [field]: null })
      }
    }
    expect((await data(`{ broadcasts(page: {limit: 100}) { edges { node { id } } } }`, undefined, keys.b)).broadcasts.edges).toEqual([])
  })

  it("cost: the report's targets is a connection (limit × its node)", async () => {
    // Each report: 1 + targets 1 + 100 × 4 = 402; two run (804), three are refused (1206).
    const reports = (n: number) =>
      `query($id: ID!) { ${
        Array.from({ length: n }, (_, i) => `r${i}: broadcastReport(id: $id) { targets(page: {limit: 100}) { edges { node { phone status failure_reason message_id } } } }`).join(" ")
      } }`
    const ok = await data(reports(2), { id: done.id })
    expect(ok.r1.targets.edges).toHaveLength(5)
    const r = await gql(reports(3), { id: done.id })
    expect(r.body).toEqual({ errors: [expect.objectContaining({ extensions: { code: "QUERY_TOO_EXPENSIVE", cost: 1206, maximum: 1000 } })] })
  })
})

describe("calls", () => {
  const from = "919876600501"
  const ids: Record<string, string> = {}
  // Business-initiated, with a status GraphQL has no name for: stored as Meta sent it, read OUTBOUND and MISSED.
  const OUTBOUND = "wacid.gql-business-initiated"
  const CALL = `id direction status duration_sec recording_url started_at conversation { id contact { phone } }`
  let conversationId = ""
  /** A's calls in the list's order, as SQL orders them. */
  const ordered = async () =>
    (await db<{ call_id: string }>("SELECT call_id FROM wa_calls WHERE account_id = $1 ORDER BY occurred_at DESC, call_id DESC", [accounts.a])).map((r) => r.call_id)
  const byId = async (id: string, key?: string) => gql(`query($id: ID!) { call(id: $id) { ${CALL} } }`, { id }, key)

  beforeAll(async () => {
    for (const [status, duration_sec, recording] of [["completed", 42, true], ["missed", 0, false], ["rejected", 0, false]] as const) {
      const r = await fetch(`${simUrl}/simulate/wa/call`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ phone_number_id: numberA, from, status, duration_sec, recording })
      })
      expect(r.status).toBe(202)
      ids[status] = ((await r.json()) as { id: string }).id
    }
    await eventually(async () => expect((await ordered()).sort()).toEqual(Object.values(ids).sort()))
    const [row] = await db<{ conversation_id: string }>("SELECT conversation_id::text FROM wa_calls WHERE call_id = $1", [ids.completed])
    conversationId = row!.conversation_id
    await db(
      `INSERT INTO wa_calls (call_id, account_id, conversation_id, direction, status, duration_sec, occurred_at)
       VALUES ($1, $2, $3, 'BUSINESS_INITIATED', 'no_answer', 0, now() - interval '1 day')`,
      [OUTBOUND, accounts.a, conversationId]
    )
  })

  it("calls newest first, paged by endCursor, each with its conversation; call(id) maps Meta's values", async () => {
    const query = `query($c: String) { calls(page: {limit: 3, cursor: $c}) { edges { node { ${CALL} } } pageInfo { hasNextPage endCursor } } }`
    const first = (await data(query)).calls
    const second = (await data(query, { c: first.pageInfo.endCursor })).calls
    expect([first.pageInfo.hasNextPage, second.pageInfo.hasNextPage]).toEqual([true, false])
    const nodes = [...first.edges, ...second.edges].map((e: Json) => e.node)
    expect(nodes.map((n) => n.id)).toEqual(await ordered())
    expect(nodes.at(-1).id).toBe(OUTBOUND)
    for (const n of nodes) expect(n.conversation).toEqual({ id: conversationId, contact: { phone: `+${from}` } })
    const [ended] = await db<{ occurred_at: Date }>("SELECT occurred_at FROM wa_calls WHERE call_id = $1", [ids.completed])
    expect((await byId(ids.completed!)).body).toEqual({
      data: {
        call: {
          id: ids.completed,
          direction: "INBOUND",
          status: "COMPLETED",
          duration_sec: 42,
          recording_url: `https://sim.herald.local/recordings/${ids.completed}.ogg`,
          started_at: new Date(ended!.occurred_at.getTime() - 42_000).toISOString(),
          conversation: { id: conversationId, contact: { phone: `+${from}` } }
        }
      }
    })
    const shown = Object.fromEntries(nodes.map((n) => [n.id, [n.direction, n.status, n.duration_sec, n.recording_url]]))
    expect(shown).toEqual({
      [ids.completed!]: ["INBOUND", "COMPLETED", 42, `https://sim.herald.local/recordings/${ids.completed}.ogg`],
      [ids.missed!]: ["INBOUND", "MISSED", 0, null],
      [ids.rejected!]: ["INBOUND", "REJECTED", 0, null],
      [OUTBOUND]: ["OUTBOUND", "MISSED", 0, null]
    })
  })

  it("filters by status and direction, mapped back to Meta's values", async () => {
    const all = await ordered()
    const list = async (f: Json) => (await data(`query($f: CallFilter) { calls(filter: $f) { edges { node { id } } } }`, { f })).calls.edges.map((e: Json) => e.node.id)
    expect(await list({ status: "COMPLETED" })).toEqual([ids.completed])
    expect(await list({ status: "REJECTED" })).toEqual([ids.rejected])
    expect(await list({ status: "MISSED" })).toEqual(all.filter((id) => id === ids.missed || id === OUTBOUND))
    expect(await list({ direction: "OUTBOUND" })).toEqual([OUTBOUND])
    expect(await list({ direction: "INBOUND" })).toEqual(all.filter((id) => id !== OUTBOUND))
    expect(await list({ status: "MISSED", direction: "INBOUND" })).toEqual([ids.missed])
  })

  it("an edited cursor, or none of ours: VALIDATION_ERROR naming page.cursor", async () => {
    const query = `query($c: String) { calls(page: {limit: 1, cursor: $c}) { edges { node { id } } pageInfo { endCursor } } }`
    const cursor = (await data(query)).calls.pageInfo.endCursor
    const [at, id] = cursorValues(cursor)
    for (const c of [edited(cursor, ["yesterday", id]), edited(cursor, [at]), edited(cursor, [at, "wacid.another"]), Buffer.from(JSON.stringify([at, id])).toString("base64url"), "garbage"]) {
      const bad = await refused(query, { c })
      expect(bad.error.extensions, c).toMatchObject({ code: "VALIDATION_ERROR", field: "page.cursor" })
      expect(bad.data, c).toBeNull()
    }
  })

  it("tenant isolation: B cannot read A's calls (NOT_FOUND) and B's list is empty", async () => {
    for (const [id, key] of [[ids.completed!, keys.b], [OUTBOUND, keys.b], ["wacid.nope", keys.a]] as const) {
      const r = await byId(id, key)
      expect(r.body.errors?.[0]?.extensions?.code, id).toBe("NOT_FOUND")
      expect(r.body.errors?.[0]?.path, id).toEqual(["call"])
      expect(r.body.data, id).toEqual({ call: null })
    }
    expect((await data(`{ calls(page: {limit: 100}) { edges { node { id } } } }`, undefined, keys.b)).calls.edges).toEqual([])
  })
})
