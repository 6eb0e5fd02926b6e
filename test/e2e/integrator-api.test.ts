import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"

// What an integrator meets (issue 22): errors in plain sentences, 405 with Allow, 401s that say
// what was wrong, and Idempotency-Key across two API nodes.

const iso = useIsolation()
const db = useDb(iso)
const env = envFor(iso)
const cli = cliFor(env)
let node: HeraldProcess
let other: HeraldProcess
let owner = ""
let account = ""
const bots: Record<string, string> = {}

const call = (method: string, path: string, token?: string, body?: unknown, base = node.url) => callJson(base, method, path, token, body)

/** A raw call: headers as given, the answer's headers kept. */
const raw = async (method: string, path: string, headers: Record<string, string>, body?: unknown, base = node.url) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body)
  })
  const text = await res.text()
  return { status: res.status, headers: res.headers, text, body: (text.startsWith("{") ? JSON.parse(text) : {}) as any }
}

const messageCount = async () => Number((await db<{ n: string }>("SELECT count(*)::text AS n FROM messages WHERE account_id = $1", [account]))[0]!.n)

beforeAll(async () => {
  node = await startHerald(env)
  other = await startHerald(env)
  account = (await cli("admin", "create-account", "--email", "integrator@example.com", "--password", "integrator password", "--label", "Integrator", "--plan", "growth")).account_id
  bots.active = (await cli("admin", "create-bot", account, "--name", "Main", "--status", "active")).bot_id
  bots.pending = (await cli("admin", "create-bot", account, "--name", "Waiting")).bot_id
  await cli("admin", "bot-throughput", bots.active!, "unlimited")
  await cli("admin", "wallet-credit", account, "100")
  owner = (await call("POST", "/api/v1/rcs/auth/login", undefined, { email: "integrator@example.com", password: "integrator password" })).body.token
})
afterAll(async () => {
  await node?.kill()
  await other?.kill()
})

describe("errors a person can act on", () => {
  it("names the field and the form it takes, never Schema's own text", async () => {
    const r = await call("POST", "/api/v1/rcs/broadcasts", owner, {
      name: "Launch",
      bot_id: bots.active,
      template_id: "t",
      contact_list_id: "l",
      scheduled_at: "tomorrow",
      colour: "red"
    })
    expect(r.status).toBe(400)
    expect(r.body.code).toBe("invalid_request")
    expect(JSON.stringify(r.body)).not.toMatch(/Expected|actual|readonly/)
    expect(r.body.errors).toEqual(expect.arrayContaining([
      { path: "scheduled_at", message: "must be an ISO 8601 date-time, such as 2026-11-24T10:00:00Z" },
      { path: "colour", message: expect.stringMatching(/^is not a field this request takes \(it takes name, bot_id, /) }
    ]))
    expect(r.body.message).toContain("scheduled_at must be an ISO 8601 date-time")

    const missing = await call("POST", "/api/v1/rcs/messages/send", owner, { to: "+919876541234" })
    expect(missing.body.errors).toEqual(expect.arrayContaining([{ path: "bot_id", message: "is required" }]))
    const notObject = await raw("POST", "/api/v1/rcs/messages/send", { authorization: `Bearer ${owner}` }, "[1]")
    expect(notObject.status).toBe(400)
    expect(notObject.body.message).toBe("the body must be a JSON object, not an array")
    const wrongType = await call("GET", "/api/v1/rcs/webhooks/x/deliveries?limit=many", owner)
    expect(wrongType.status).toBe(400)
    expect(JSON.stringify(wrongType.body)).not.toMatch(/Expected|actual/)
  })

  it("a phone without its country code is told so; a malformed or unknown bot id is told apart from an inactive bot", async () => {
    const phone = await call("POST", "/api/v1/rcs/messages/send", owner, { bot_id: bots.active, to: "9876543210", text: "hi" })
    expect(phone.status).toBe(400)
    expect(phone.body.errors).toEqual([{ path: "to", message: expect.stringContaining("has no country code") }])
    expect(phone.body.message).toContain("+919876543210")

    const malformed = await call("POST", "/api/v1/rcs/messages/send", owner, { bot_id: "my-bot", to: "+919876541234", text: "hi" })
    expect(malformed.status).toBe(403)
    expect(malformed.body).toMatchObject({ code: "bot_not_active", message: expect.stringContaining("is not a bot id") })
    const unknown = await call("POST", "/api/v1/rcs/messages/send", owner, { bot_id: "00000000-0000-4000-8000-000000000000", to: "+919876541234", text: "hi" })
    expect(unknown.body).toMatchObject({ code: "bot_not_active", message: expect.stringContaining("is not a bot of this account") })
    const pending = await call("POST", "/api/v1/rcs/messages/send", owner, { bot_id: bots.pending, to: "+919876541234", text: "hi" })
    expect(pending.body).toMatchObject({ code: "bot_not_active", message: expect.stringContaining("waiting for the platform's approval") })
  })

  it("a wrong method on a known path is 405 with Allow; an unknown path stays 404", async () => {
    const wrong = await raw("DELETE", "/api/v1/rcs/broadcasts", { authorization: `Bearer ${owner}` })
    expect(wrong.status).toBe(405)
    expect(wrong.headers.get("allow")).toBe("GET, HEAD, POST")
    expect(wrong.body).toMatchObject({ success: false, code: "method_not_allowed", allowed_methods: ["GET", "HEAD", "POST"] })
    // Refused before its body is looked at: no 415 for a body that is not JSON.
    const withBody = await raw("PUT", "/api/v1/rcs/messages/send", { "content-type": "text/plain" }, "x")
    expect(withBody.status).toBe(405)
    expect((await raw("GET", "/api/v1/rcs/nothing-here", {})).status).toBe(404)
  })

  it("401s say what was wrong with the credential, and keep the contract's message", async () => {
    const none = await raw("GET", "/api/v1/rcs/bots", {})
    expect(none.status).toBe(401)
    expect(none.body).toMatchObject({ code: "unauthorized", message: "unauthorized", detail: expect.stringContaining("Authorization header is missing") })
    const basic = await raw("GET", "/api/v1/rcs/bots", { authorization: "Basic abc" })
    expect(basic.body).toMatchObject({ message: "unauthorized", detail: expect.stringContaining("uses the Basic scheme") })
    const bare = await raw("GET", "/api/v1/rcs/bots", { authorization: owner })
    expect(bare.body.detail).toContain("no scheme")
    const [head, payload] = owner.split(".")
    const altered = await raw("GET", "/api/v1/rcs/bots", { authorization: `Bearer ${head}.${payload}.AAAA` })
    expect(altered.body).toMatchObject({ message: "unauthorized", detail: expect.stringContaining("signature does not verify") })
    const junk = await raw("GET", "/api/v1/rcs/bots", { authorization: "Bearer hello" })
    expect(junk.body.detail).toContain("neither a Herald token nor an API key")
    const key = await raw("GET", "/api/v1/rcs/bots", { authorization: "Bearer rcs_pk_live_nope" })
    expect(key.body).toMatchObject({ code: "invalid_api_key", message: "Invalid or revoked API key", detail: expect.stringContaining("no key") })
    const app = await raw("GET", "/api/v1/app/me", { authorization: "Bearer sk_live_nope" })
    expect(app.body).toMatchObject({ code: "invalid_api_key", detail: expect.stringContaining("no account has this secret key") })
    const appNone = await raw("GET", "/api/v1/app/me", {})
    expect(appNone.body.detail).toContain("Authorization header is missing")
  })
})

describe("Idempotency-Key", () => {
  const send = (key: string | undefined, body: Record<string, unknown>, base = node.url) =>
    raw("POST", "/api/v1/rcs/messages/send", { authorization: `Bearer ${owner}`, ...(key === undefined ? {} : { "idempotency-key": key }) }, { bot_id: bots.active, ...body }, base)

  it("the same key and body get the first answer again; the same key with another body is 422", async () => {
    const before = await messageCount()
    const first = await send("order-1001", { to: "+919876541234", text: "Your order shipped" })
    expect(first.status).toBe(200)
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    const again = await send("order-1001", { to: "+919876541234", text: "Your order shipped" }, other.url)
    expect(again.status).toBe(200)
    expect(again.text).toBe(first.text)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(await messageCount()).toBe(before + 1)

    const changed = await send("order-1001", { to: "+919876541234", text: "Another text" })
    expect(changed.status).toBe(422)
    expect(changed.body.code).toBe("idempotency_key_reused")
    expect(await messageCount()).toBe(before + 1)
    // Without a key every request is its own.
    await send(undefined, { to: "+919876541234", text: "Your order shipped" })
    expect(await messageCount()).toBe(before + 2)
  })

  it("concurrent duplicates on two API nodes run once and all get that answer", async () => {
    const before = await messageCount()
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) =>
      send("race-7", { to: "+919876541235", text: "Only once" }, i % 2 === 0 ? node.url : other.url)))
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200))
    expect(new Set(answers.map((a) => a.text)).size).toBe(1)
    expect(answers.filter((a) => a.headers.get("idempotent-replayed") === null)).toHaveLength(1)
    expect(await messageCount()).toBe(before + 1)
  })

  it("a refused body is not kept (fixed and retried with the same key, it runs); a bad key header is 400", async () => {
    const before = await messageCount()
    const bad = await send("fix-me", { to: "9876543210", text: "hi" })
    expect(bad.status).toBe(400)
    const fixed = await send("fix-me", { to: "+919876543210", text: "hi" })
    expect(fixed.status).toBe(200)
    expect(await messageCount()).toBe(before + 1)
    const tooLong = await send("x".repeat(256), { to: "+919876543210", text: "hi" })
    expect(tooLong.status).toBe(400)
    expect(tooLong.body.errors).toEqual([{ path: "Idempotency-Key", message: expect.any(String) }])
  })

  it("is per account, and covers key creation: the same secret key again, not a second one", async () => {
    const first = await raw("POST", "/api/v1/rcs/api-keys", { authorization: `Bearer ${owner}`, "idempotency-key": "key-1" }, { name: "ci", scopes: ["broadcasts:read"] })
    expect(first.status).toBe(200)
    const again = await raw("POST", "/api/v1/rcs/api-keys", { authorization: `Bearer ${owner}`, "idempotency-key": "key-1" }, { name: "ci", scopes: ["broadcasts:read"] }, other.url)
    expect(again.body.raw_key).toBe(first.body.raw_key)
    const listed = await call("GET", "/api/v1/rcs/api-keys", owner)
    expect(listed.body.keys.filter((k: any) => k.name === "ci")).toHaveLength(1)

    // Another account's identical request with the identical key is its own.
    const else_ = (await cli("admin", "create-account", "--email", "else@example.com", "--password", "else password", "--label", "Else", "--plan", "growth")).account_id
    expect(else_).toBeTruthy()
    const elseToken = (await call("POST", "/api/v1/rcs/auth/login", undefined, { email: "else@example.com", password: "else password" })).body.token
    const theirs = await raw("POST", "/api/v1/rcs/api-keys", { authorization: `Bearer ${elseToken}`, "idempotency-key": "key-1" }, { name: "ci", scopes: ["broadcasts:read"] })
    expect(theirs.status).toBe(200)
    expect(theirs.body.raw_key).not.toBe(first.body.raw_key)
  })
})

describe("Idempotency-Key is the principal's", () => {
  /** A member of the account, added by the owner with a password of their own, and their token. */
  const member = async (email: string, role: "operator" | "viewer") => {
    expect((await call("POST", "/api/v1/rcs/team", owner, { email, role, assigned_bots: ["*"], password: "member password" })).status).toBe(200)
    const memberId = (await call("GET", "/api/v1/rcs/team", owner)).body.members.find((m: any) => m.email === email).member_id as string
    const token = (await call("POST", "/api/v1/rcs/auth/login", undefined, { email, password: "member password" })).body.token as string
    return { memberId, token }
  }
  const generate = (token: string, key?: string) =>
    raw("POST", "/api/v1/app/developer/secret-key", { authorization: `Bearer ${token}`, ...(key === undefined ? {} : { "idempotency-key": key }) }, {})
  const storedBodies = async () => (await db<{ body: Buffer | null }>("SELECT body FROM idempotency_keys")).map((r) => r.body?.toString("latin1") ?? "")

  it("a viewer sending the owner's key gets the route's 403, not the owner's secret key; the owner's replay still shows it", async () => {
    const first = await generate(owner, "generate-1")
    expect(first.status).toBe(200)
    expect(first.body.secret_key).toMatch(/^sk_live_/)
    const viewer = await member("viewer-replay@example.com", "viewer")
    const refused = await generate(viewer.token, "generate-1")
    const withoutKey = await generate(viewer.token)
    expect(refused.status).toBe(403)
    expect(refused.text).toBe(withoutKey.text)
    expect(refused.text).not.toContain("sk_live_")
    expect(refused.headers.get("idempotent-replayed")).toBeNull()
    const again = await generate(owner, "generate-1")
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.body.secret_key).toBe(first.body.secret_key)
  })

  it("a member demoted since their request gets the route's 403 on its replay: authorization runs before the key is looked at", async () => {
    const operator = await member("demoted@example.com", "operator")
    const request = { bot_id: bots.active, to: "+919876541240", text: "Before the demotion" }
    const first = await raw("POST", "/api/v1/rcs/messages/send", { authorization: `Bearer ${operator.token}`, "idempotency-key": "demoted-1" }, request)
    expect(first.status).toBe(200)
    expect((await call("PATCH", `/api/v1/rcs/team/${operator.memberId}`, owner, { role: "viewer" })).status).toBe(200)
    const replay = await eventually(async () => {
      const r = await raw("POST", "/api/v1/rcs/messages/send", { authorization: `Bearer ${operator.token}`, "idempotency-key": "demoted-1" }, request, other.url)
      expect(r.status).toBe(403)
      return r
    })
    expect(replay.body.code).toBe("forbidden")
    expect(replay.text).not.toContain(first.body.message_id)
  })

  it("two people of one account using the same key for different sends each get their own send", async () => {
    const operator = await member("same-key@example.com", "operator")
    const before = await messageCount()
    const mine = await raw("POST", "/api/v1/rcs/messages/send", { authorization: `Bearer ${owner}`, "idempotency-key": "shared-1" }, { bot_id: bots.active, to: "+919876541241", text: "The owner's" })
    const theirs = await raw("POST", "/api/v1/rcs/messages/send", { authorization: `Bearer ${operator.token}`, "idempotency-key": "shared-1" }, { bot_id: bots.active, to: "+919876541242", text: "The operator's" })
    expect([mine.status, theirs.status]).toEqual([200, 200])
    expect(theirs.headers.get("idempotent-replayed")).toBeNull()
    expect(theirs.body.message_id).not.toBe(mine.body.message_id)
    expect(await messageCount()).toBe(before + 2)
    // Each replays their own.
    const again = await raw("POST", "/api/v1/rcs/messages/send", { authorization: `Bearer ${operator.token}`, "idempotency-key": "shared-1" }, { bot_id: bots.active, to: "+919876541242", text: "The operator's" })
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.text).toBe(theirs.text)
  })

  it("stored answers hold no raw key: the table has no sk_live_ or rcs_pk_live_ in plain", async () => {
    const secret = await generate(owner, "generate-sealed")
    const key = await raw("POST", "/api/v1/rcs/api-keys", { authorization: `Bearer ${owner}`, "idempotency-key": "api-key-sealed" }, { name: "sealed", scopes: ["broadcasts:read"] })
    expect([secret.status, key.status]).toEqual([200, 200])
    const bodies = await storedBodies()
    expect(bodies.length).toBeGreaterThanOrEqual(2)
    for (const body of bodies) {
      expect(body).not.toContain("sk_live_")
      expect(body).not.toContain("rcs_pk_live_")
      expect(body).not.toContain(secret.body.secret_key.slice(8))
      expect(body).not.toContain(key.body.raw_key.slice(12))
    }
    // Sealed, they still replay.
    const again = await raw("POST", "/api/v1/rcs/api-keys", { authorization: `Bearer ${owner}`, "idempotency-key": "api-key-sealed" }, { name: "sealed", scopes: ["broadcasts:read"] }, other.url)
    expect(again.body.raw_key).toBe(key.body.raw_key)
  })
})

describe("Idempotency-Key on a streamed import", () => {
  const importCsv = (list: string, key: string, csv: string, base = node.url) =>
    raw("POST", `/api/v1/rcs/contact-lists/${list}/contacts`, { authorization: `Bearer ${owner}`, "content-type": "text/csv", "idempotency-key": key }, csv, base)

  it("a duplicate (even while the first runs, on another node) gets the first report; another file with the key is 422", async () => {
    const list = (await call("POST", "/api/v1/rcs/contact-lists", owner, { name: "Keyed" })).body.list.list_id
    const csv = "phone,name\n" + Array.from({ length: 2_000 }, (_, i) => `+9198765${String(10000 + i).padStart(5, "0")},C${i}`).join("\n") + "\n"
    const [first, second] = await Promise.all([importCsv(list, "import-1", csv), importCsv(list, "import-1", csv, other.url)])
    expect([first.status, second.status]).toEqual([200, 200])
    expect(first.text).toBe(second.text)
    expect(first.body.added).toBe(2_000)
    expect([first, second].filter((r) => r.headers.get("idempotent-replayed") === "true")).toHaveLength(1)
    const again = await importCsv(list, "import-1", csv)
    expect(again.text).toBe(first.text)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    const otherFile = await importCsv(list, "import-1", "phone\n+919876500001\n")
    expect(otherFile.status).toBe(422)
    expect(otherFile.body.code).toBe("idempotency_key_reused")
    const count = (await call("GET", `/api/v1/rcs/contact-lists/${list}`, owner)).body.list.contact_count
    expect(count).toBe(2_000)
  })
})

describe("consistent shapes", () => {
  it("creating a webhook, an API key or a template answers the resource as its update or read does", async () => {
    const created = await call("POST", "/api/v1/rcs/webhooks", owner, { url: "https://example.com/hook", events: ["message.sent"] })
    expect(created.status).toBe(200)
    const updated = await call("PATCH", `/api/v1/rcs/webhooks/${created.body.webhook_id}`, owner, { events: ["message.sent", "message.failed"] })
    expect(Object.keys(created.body.webhook).sort()).toEqual(Object.keys(updated.body.webhook).sort())
    expect(created.body.webhook).toMatchObject({ webhook_id: created.body.webhook_id, url: "https://example.com/hook" })

    const key = await call("POST", "/api/v1/rcs/api-keys", owner, { name: "shape", scopes: ["broadcasts:read"] })
    const renamed = await call("PATCH", `/api/v1/rcs/api-keys/${key.body.key_id}`, owner, { name: "shape 2" })
    expect(Object.keys(key.body.key).sort()).toEqual(Object.keys(renamed.body.key).sort())
    expect(key.body.key).toMatchObject({ key_id: key.body.key_id, name: "shape", revoked: false })
  })

  it("every ledger row carries balance_after, charges booked many at a time included", async () => {
    const rows = (await call("GET", "/api/v1/rcs/wallet?limit=100", owner)).body
    const ledger = (rows.transactions ?? rows.ledger ?? rows.items) as Array<{ balance_after: number | null; amount: number; kind: string }>
    expect(ledger.length).toBeGreaterThan(3)
    expect(ledger.every((row) => typeof row.balance_after === "number")).toBe(true)
    // Newest first: each row's balance_after is the next (older) one's plus its own movement.
    for (let i = 0; i + 1 < ledger.length; i++) {
      const delta = ledger[i]!.kind === "charge" ? -ledger[i]!.amount : ledger[i]!.amount
      expect(ledger[i]!.balance_after).toBeCloseTo(ledger[i + 1]!.balance_after! + delta, 4)
    }
  })
})
