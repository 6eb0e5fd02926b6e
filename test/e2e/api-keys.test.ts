import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"

const iso = useIsolation()
const db = useDb(iso)
const env = envFor(iso)
let node: HeraldProcess
let other: HeraldProcess
let ownerToken = ""
let account = ""
const bots: Record<string, string> = {}

const call = (method: string, path: string, token?: string, body?: unknown, base = node.url) => callJson(base, method, path, token, body)

const cli = cliFor(env)

beforeAll(async () => {
  node = await startHerald(env)
  other = await startHerald(env)
  account = (await cli("admin", "create-account", "--email", "keys@example.com", "--password", "keys password", "--label", "Keys", "--plan", "growth")).account_id
  bots.promo = (await cli("admin", "create-bot", account, "--name", "Promo", "--use-case", "promotional", "--status", "active")).bot_id
  bots.otp = (await cli("admin", "create-bot", account, "--name", "Codes", "--use-case", "otp")).bot_id
  bots.legacy = (await cli("admin", "create-bot", account, "--name", "Legacy")).bot_id
  ownerToken = (await call("POST", "/api/v1/rcs/auth/login", undefined, { email: "keys@example.com", password: "keys password" })).body.token
})
afterAll(async () => {
  await node?.kill()
  await other?.kill()
})

describe("bots", () => {
  it("lists the account's bots with can_broadcast, filterable", async () => {
    const all = await call("GET", "/api/v1/rcs/bots", ownerToken)
    expect(all.status).toBe(200)
    expect(all.body.bots).toHaveLength(3)
    const byName = Object.fromEntries(all.body.bots.map((b: any) => [b.name, b]))
    expect(byName.Promo).toMatchObject({ bot_id: bots.promo, status: "active", can_broadcast: true, bot_use_case: "promotional" })
    expect(byName.Codes).toMatchObject({ can_broadcast: false, bot_use_case: "otp", status: "pending" })
    expect(byName.Legacy).toMatchObject({ can_broadcast: true, bot_use_case: null })
    const broadcasters = await call("GET", "/api/v1/rcs/bots?can_broadcast=true", ownerToken)
    expect(broadcasters.body.bots.map((b: any) => b.name).sort()).toEqual(["Legacy", "Promo"])
  })

  it("shows suspend_reason on a suspended bot; another account's bot is unknown", async () => {
    await db("UPDATE bots SET status = 'suspended', suspend_reason = 'spam complaints' WHERE bot_id = $1", [bots.legacy])
    // Written straight into Postgres: the nodes' bot caches hear of it through the change feed.
    await eventually(async () => {
      const one = await call("GET", `/api/v1/rcs/bots/${bots.legacy}`, ownerToken)
      expect(one.body.bot).toMatchObject({ status: "suspended", suspend_reason: "spam complaints" })
    }, { timeoutMs: 2_000, intervalMs: 20 })
    const elsewhere = await cli("admin", "create-account", "--email", "else@example.com", "--password", "else password", "--label", "Else")
    const foreign = (await cli("admin", "create-bot", elsewhere.account_id, "--name", "Foreign")).bot_id
    expect((await call("GET", `/api/v1/rcs/bots/${foreign}`, ownerToken)).status).toBe(404)
    expect((await call("GET", "/api/v1/rcs/bots/not-a-bot", ownerToken)).status).toBe(404)
  })

  it("a bot-scoped member sees only its bots and gets bot_not_in_scope on others", async () => {
    const person = await cli("admin", "create-account", "--email", "scoped@example.com", "--password", "scoped password", "--label", "Own")
    await db("INSERT INTO memberships (account_id, user_id, role, assigned_bots) VALUES ($1, $2, 'viewer', ARRAY[$3])", [account, person.user_id, bots.promo])
    const pick = await call("POST", "/api/v1/rcs/auth/login", undefined, { email: "scoped@example.com", password: "scoped password" })
    const token = (await call("POST", "/api/v1/rcs/auth/select-account", undefined, { session_token: pick.body.session_token, account_id: account })).body.token
    const list = await call("GET", "/api/v1/rcs/bots", token)
    expect(list.body.bots.map((b: any) => b.bot_id)).toEqual([bots.promo])
    const denied = await call("GET", `/api/v1/rcs/bots/${bots.otp}`, token)
    expect(denied.status).toBe(403)
    expect(denied.body).toEqual({ success: false, code: "bot_not_in_scope", message: "bot not in scope" })
    expect((await call("GET", `/api/v1/rcs/bots/${bots.promo}`, token)).status).toBe(200)
  })
})

describe("API keys", () => {
  let key = ""
  let keyId = ""

  it("are created by the owner and shown once; only a hash and the last four are stored", async () => {
    const created = await call("POST", "/api/v1/rcs/api-keys", ownerToken, { name: "ci", scopes: ["broadcasts:write", "templates:read"] })
    expect(created.status).toBe(200)
    expect(created.body.raw_key).toMatch(/^rcs_pk_live_[A-Za-z0-9_-]{43}$/)
    expect(created.body.warning).toBeTruthy()
    key = created.body.raw_key
    keyId = created.body.key_id
    const [row] = await db<Record<string, unknown>>("SELECT * FROM api_keys WHERE key_id = $1", [keyId])
    expect(JSON.stringify(row)).not.toContain(key)
    expect(row!.last_four).toBe(key.slice(-4))
    const list = await call("GET", "/api/v1/rcs/api-keys", ownerToken)
    expect(list.body.available_scopes).toEqual(["broadcasts:read", "broadcasts:write", "contacts:read", "contacts:write", "auto_replies:read", "webhooks:read", "webhooks:write"])
    expect(list.body.keys[0]).toMatchObject({ key_id: keyId, name: "ci", prefix: "rcs_pk_live_", last_four: key.slice(-4), created_by: "keys@example.com", revoked: false, expires_at: null })
    expect(JSON.stringify(list.body)).not.toContain(key)
  })

  it("work for GET on the allow-listed paths only, with the matching scope", async () => {
    const bots = await call("GET", "/api/v1/rcs/bots", key)
    expect(bots.status).toBe(200)
    // One bot's read is not on the contract's list (only the bot list is).
    const one = await call("GET", `/api/v1/rcs/bots/${bots.body.bots[0]?.bot_id ?? "00000000-0000-4000-8000-000000000000"}`, key)
    expect(one.status).toBe(403)
    expect(one.body.code).toBe("api_key_endpoint_not_allowed")
    const post = await call("POST", "/api/v1/rcs/api-keys", key, { name: "x", scopes: ["contacts:read"] })
    expect(post.status).toBe(403)
    expect(post.body.code).toBe("api_key_endpoint_not_allowed")
    const listKeys = await call("GET", "/api/v1/rcs/api-keys", key)
    expect(listKeys.status).toBe(403)
    expect(listKeys.body.code).toBe("api_key_endpoint_not_allowed")
    const security = await call("POST", "/api/v1/rcs/auth/2fa/setup", key)
    expect(security.body.code).toBe("api_key_endpoint_not_allowed")
  })

  it("refuses an unknown key with 401 Invalid or revoked API key", async () => {
    const unknown = await call("GET", "/api/v1/rcs/bots", "rcs_pk_live_" + "A".repeat(43))
    expect(unknown.status).toBe(401)
    expect(unknown.body).toEqual({ success: false, code: "invalid_api_key", message: "Invalid or revoked API key", detail: expect.stringContaining("no key") })
  })

  it("rename and expiry change; scopes never", async () => {
    const renamed = await call("PATCH", `/api/v1/rcs/api-keys/${keyId}`, ownerToken, { name: "ci-renamed" })
    expect(renamed.body.key.name).toBe("ci-renamed")
    const scopes = await call("PATCH", `/api/v1/rcs/api-keys/${keyId}`, ownerToken, { scopes: ["contacts:write"] })
    expect(scopes.status).toBe(400)
    const past = await call("PATCH", `/api/v1/rcs/api-keys/${keyId}`, ownerToken, { expires_at: "2020-01-01T00:00:00Z" })
    expect(past.status).toBe(400)
    const later = new Date(Date.now() + 3_600_000).toISOString()
    const expiring = await call("PATCH", `/api/v1/rcs/api-keys/${keyId}`, ownerToken, { expires_at: later })
    expect(expiring.body.key.expires_at).toBe(later)
  })

  it("an expired key stops working, at its expiry time, on a node that has it cached", async () => {
    const expiresAt = Date.now() + 1_500
    const created = await call("POST", "/api/v1/rcs/api-keys", ownerToken, { name: "short", scopes: ["contacts:read"], expires_at: new Date(expiresAt).toISOString() })
    expect((await call("GET", "/api/v1/rcs/bots", created.body.raw_key)).status).toBe(200)
    await new Promise((r) => setTimeout(r, expiresAt - Date.now() + 50))
    const expired = await call("GET", "/api/v1/rcs/bots", created.body.raw_key)
    expect(expired.status).toBe(401)
    expect(expired.body.message).toBe("Invalid or revoked API key")
  })

  it("a change written straight into Postgres (not through Herald) reaches every node's cache", async () => {
    const created = await call("POST", "/api/v1/rcs/api-keys", ownerToken, { name: "psql", scopes: ["contacts:read"] })
    for (const base of [node.url, other.url]) expect((await call("GET", "/api/v1/rcs/bots", created.body.raw_key, undefined, base)).status).toBe(200)
    await db("UPDATE api_keys SET revoked_at = now() WHERE key_id = $1", [created.body.key_id])
    // The change feed's notification travels after the commit: a moment, not a request.
    for (const base of [node.url, other.url]) {
      await eventually(async () => expect((await call("GET", "/api/v1/rcs/bots", created.body.raw_key, undefined, base)).status).toBe(401), { timeoutMs: 2_000, intervalMs: 20 })
    }
  })

  it("last_used_at is written at most once a minute, however many nodes serve the key", async () => {
    const created = await call("POST", "/api/v1/rcs/api-keys", ownerToken, { name: "usage", scopes: ["contacts:read"] })
    for (let i = 0; i < 10; i++) await call("GET", "/api/v1/rcs/bots", created.body.raw_key, undefined, i % 2 ? other.url : node.url)
    const [first] = await db<{ last_used_at: Date }>("SELECT last_used_at FROM api_keys WHERE key_id = $1", [created.body.key_id])
    expect(first!.last_used_at).not.toBeNull()
    for (let i = 0; i < 10; i++) await call("GET", "/api/v1/rcs/bots", created.body.raw_key, undefined, i % 2 ? other.url : node.url)
    const [second] = await db<{ last_used_at: Date }>("SELECT last_used_at FROM api_keys WHERE key_id = $1", [created.body.key_id])
    expect(second!.last_used_at).toEqual(first!.last_used_at)
  })

  it("revocation is immediate on every node; the key stays listed as revoked", async () => {
    expect((await call("GET", "/api/v1/rcs/bots", key, undefined, other.url)).status).toBe(200)
    const revoked = await call("DELETE", `/api/v1/rcs/api-keys/${keyId}`, ownerToken)
    expect(revoked.status).toBe(200)
    for (const base of [node.url, other.url]) {
      const r = await call("GET", "/api/v1/rcs/bots", key, undefined, base)
      expect(r.status).toBe(401)
      expect(r.body.message).toBe("Invalid or revoked API key")
    }
    const list = await call("GET", "/api/v1/rcs/api-keys", ownerToken)
    expect(list.body.keys.find((k: any) => k.key_id === keyId)).toMatchObject({ revoked: true })
  })

  it("only the owner manages keys", async () => {
    const person = await cli("admin", "create-account", "--email", "operator@example.com", "--password", "operator password", "--label", "Op")
    await db("INSERT INTO memberships (account_id, user_id, role) VALUES ($1, $2, 'operator')", [account, person.user_id])
    const pick = await call("POST", "/api/v1/rcs/auth/login", undefined, { email: "operator@example.com", password: "operator password" })
    const token = (await call("POST", "/api/v1/rcs/auth/select-account", undefined, { session_token: pick.body.session_token, account_id: account })).body.token
    const create = await call("POST", "/api/v1/rcs/api-keys", token, { name: "nope", scopes: ["contacts:read"] })
    expect(create.status).toBe(403)
    expect(create.body.code).toBe("forbidden")
  })

  it("rejects bad input with 400 and writes nothing", async () => {
    const before = await db<{ n: number }>("SELECT count(*)::int AS n FROM api_keys")
    for (const body of [{ name: "", scopes: ["contacts:read"] }, { name: "x", scopes: [] }, { name: "x", scopes: ["everything"] }, { name: "x", scopes: ["contacts:read"], expires_at: "tomorrow" }]) {
      const r = await call("POST", "/api/v1/rcs/api-keys", ownerToken, body)
      expect(r.status, JSON.stringify(body)).toBe(400)
      expect(r.body.code).toBe("invalid_request")
    }
    const after = await db<{ n: number }>("SELECT count(*)::int AS n FROM api_keys")
    expect(after[0]!.n).toBe(before[0]!.n)
  })
})
