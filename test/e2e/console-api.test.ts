import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import http from "node:http"
import { generateTotp } from "../../src/security/Totp.ts"
import { startConsumer } from "../support/consumer.ts"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { consoleBrowser, openLive } from "../support/consoleBrowser.ts"
import { callJson, cliFor } from "../support/http.ts"

// The console's server side over HTTP, as a browser meets it (docs/console.md): sign-in through
// the REST login's rules into an HttpOnly session cookie, the REST API reached through
// /console/api/v1 with the session's user token and the CSRF rules, sign-out and password changes
// ending a session on every node, the overview and webhook stats it shows, the live stream of
// broadcast progress, and the operator view behind HERALD_OPS_TOKEN. The pages themselves are
// driven in Chromium by test/e2e/console.test.ts.

const OPS_TOKEN = "ops-token-for-the-console-test-0123456789"
const iso = useIsolation()
const db = useDb(iso)
let nodeA: HeraldProcess
let nodeB: HeraldProcess
let cli: ReturnType<typeof cliFor>
let consumer: Awaited<ReturnType<typeof startConsumer>>
const accounts: Record<string, string> = {}
const bots: Record<string, string> = {}
const PASSWORD = "console test password"

/** A browser: a cookie jar, the CSRF token its page would hold, the console's origin on writes. */
const browser = (base: () => string) => consoleBrowser(base, PASSWORD)

const rest = (method: string, path: string, token?: string, body?: unknown) => callJson(nodeA.url, method, path, token, body)
const tokenOf = async (email: string, password = PASSWORD) => (await rest("POST", "/api/v1/rcs/auth/login", undefined, { email, password })).body.token as string
const countOf = async (table: string) => (await db<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n

beforeAll(async () => {
  consumer = await startConsumer()
  const env = envFor(iso, { GATEWAY_SIM_DELIVERED_MS: "50", GATEWAY_SIM_READ_MS: "100", HERALD_BROADCAST_REPORT_WINDOW_MS: "2000" })
  cli = cliFor(env)
  // One after the other: the first creates and migrates the database.
  nodeA = await startHerald({ ...env, HERALD_OPS_TOKEN: OPS_TOKEN })
  nodeB = await startHerald({ ...env, HERALD_ROLE: "api" })
  accounts.a = (await cli("admin", "create-account", "--email", "owner@console.test", "--password", PASSWORD, "--label", "Acme", "--plan", "growth")).account_id
  accounts.b = (await cli("admin", "create-account", "--email", "other@console.test", "--password", PASSWORD, "--label", "Beta")).account_id
  bots.one = (await cli("admin", "create-bot", accounts.a!, "--name", "One", "--use-case", "promotional", "--status", "active")).bot_id
  bots.two = (await cli("admin", "create-bot", accounts.a!, "--name", "Two", "--status", "active")).bot_id
  await cli("admin", "bot-throughput", bots.one!, "unlimited")
  await cli("admin", "wallet-credit", accounts.a!, "100")
  const owner = await tokenOf("owner@console.test")
  for (const [email, role, assigned] of [["viewer@console.test", "viewer", ["*"]], ["scoped@console.test", "operator", [bots.two!]]] as const) {
    const added = await rest("POST", "/api/v1/rcs/team", owner, { email, role, assigned_bots: assigned, password: PASSWORD })
    expect(added.status).toBe(200)
  }
  // Someone in two accounts: Beta's owner invites the viewer too, who accepts.
  const invited = await rest("POST", "/api/v1/rcs/team", await tokenOf("other@console.test"), { email: "viewer@console.test", role: "operator", assigned_bots: ["*"] })
  expect(invited.body.status).toBe("invited")
  expect((await rest("POST", `/api/v1/rcs/team/invitations/${invited.body.member_id}/accept`, await tokenOf("viewer@console.test"))).status).toBe(200)
})
afterAll(async () => {
  await Promise.all([nodeA?.kill(), nodeB?.kill()])
  await consumer?.close()
})

describe("signing in", () => {
  it("takes the login's answer into an HttpOnly, SameSite=Strict session cookie scoped to /console; the token stays on the server", async () => {
    const b = browser(() => nodeA.url)
    expect((await b.call("GET", "/console/api/session")).body).toEqual({ success: true, signed_in: false })
    const wrong = await b.signIn("owner@console.test", "not the password")
    expect(wrong.status).toBe(401)
    expect(wrong.body).toMatchObject({ success: false, code: "invalid_credentials" })
    expect(wrong.setCookies).toEqual([])

    const ok = await b.signIn("Owner@Console.test")
    expect(ok.status).toBe(200)
    expect(ok.body).toMatchObject({
      success: true,
      status: "signed_in",
      csrf_token: expect.stringMatching(/^[\w-]{43}$/),
      session: { email: "owner@console.test", role: "owner", member_id: "", account_id: accounts.a, account_label: "Acme", assigned_bots: ["*"] }
    })
    expect(JSON.stringify(ok.body)).not.toMatch(/eyJ/)
    const cookie = ok.setCookies.find((c) => c.startsWith("herald_session="))!
    expect(cookie).toMatch(/; Path=\/console(;|$)/)
    expect(cookie).toMatch(/; HttpOnly(;|$)/)
    expect(cookie).toMatch(/; SameSite=Strict(;|$)/)
    expect(cookie).toMatch(/; Max-Age=43(19\d|200)(;|$)/)
    // The default public URL is plain http (a developer's npm start): not Secure, no __Host- prefix.
    expect(cookie).not.toMatch(/Secure/)
    const session = await b.call("GET", "/console/api/session")
    expect(session.body).toMatchObject({ signed_in: true, csrf_token: ok.body.csrf_token, session: { email: "owner@console.test" } })

    // Only the id's hash is stored, and the token it acts with is sealed.
    const id = b.jar.get("herald_session")!
    const rows = await db<{ hash: string; sealed: string; csrf: string }>(
      "SELECT encode(session_hash, 'hex') AS hash, sealed_token AS sealed, csrf_token AS csrf FROM console_sessions WHERE account_id = $1",
      [accounts.a]
    )
    expect(rows.length).toBeGreaterThan(0)
    for (const row of rows) {
      expect(row.hash).not.toContain(Buffer.from(id).toString("hex"))
      expect(row.sealed).toMatch(/^v1\./)
      expect(row.sealed).not.toMatch(/eyJ/)
    }
  })

  it("is not Secure on a plain-http public URL (the default), whatever name the request reached the node by", async () => {
    // The Host header a request claims decides nothing (a proxy or a client may say anything);
    // HERALD_PUBLIC_URL does (console-revocation.test.ts has an https one: Secure, __Host-).
    const answer = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const url = new URL(nodeA.url)
      const request = http.request({
        host: url.hostname,
        port: url.port,
        path: "/console/api/session",
        method: "POST",
        headers: { host: "herald.example.com", "content-type": "application/json" }
      }, resolve)
      request.on("error", reject)
      request.end(JSON.stringify({ email: "owner@console.test", password: PASSWORD }))
    })
    answer.resume()
    expect(answer.statusCode).toBe(200)
    const cookie = answer.headers["set-cookie"]!.find((c) => c.startsWith("herald_session="))!
    expect(cookie).not.toMatch(/Secure/)
    expect(cookie).toMatch(/; Path=\/console(;|$)/)
  })

  it("asks for the second factor when it is on, and locks the e-mail after five wrong codes, as the API's login does", async () => {
    await cli("admin", "create-account", "--email", "twofa@console.test", "--password", PASSWORD, "--label", "Twofa")
    const token = await tokenOf("twofa@console.test")
    const setup = await rest("POST", "/api/v1/rcs/auth/2fa/setup", token, {})
    const secret = setup.body.secret as string
    expect((await rest("POST", "/api/v1/rcs/auth/2fa/enable", token, { totp_code: generateTotp(secret) })).status).toBe(200)

    const b = browser(() => nodeA.url)
    const first = await b.signIn("twofa@console.test")
    expect(first.body).toEqual({ success: true, status: "requires_2fa", message: "two-factor code required" })
    expect(first.setCookies).toEqual([])
    const withCode = await b.signIn("twofa@console.test", PASSWORD, { totp_code: generateTotp(secret) })
    expect(withCode.body).toMatchObject({ status: "signed_in", session: { email: "twofa@console.test" } })

    const c = browser(() => nodeA.url)
    for (let i = 0; i < 4; i++) expect((await c.signIn("twofa@console.test", PASSWORD, { totp_code: "000000" })).body.code).toBe("invalid_code")
    // The fifth wrong code locks the e-mail; the right one is refused too until the lock ends.
    expect((await c.signIn("twofa@console.test", PASSWORD, { totp_code: "000000" })).status).toBe(429)
    const locked = await c.signIn("twofa@console.test", PASSWORD, { totp_code: generateTotp(secret) })
    expect(locked.status).toBe(429)
    expect(locked.body).toMatchObject({ code: "too_many_attempts" })
  })

  it("lets a person in several accounts pick one, the pick token kept in an HttpOnly cookie of its own", async () => {
    const b = browser(() => nodeA.url)
    const pick = await b.signIn("viewer@console.test")
    expect(pick.body).toEqual({
      success: true,
      status: "need_account_pick",
      accounts: expect.arrayContaining([
        { account_id: accounts.a, label: "Acme", role: "viewer" },
        { account_id: accounts.b, label: "Beta", role: "operator" }
      ])
    })
    expect(JSON.stringify(pick.body)).not.toMatch(/eyJ/)
    const pickCookie = pick.setCookies.find((c) => c.startsWith("herald_pick="))!
    for (const attribute of ["Path=/console/api/session", "Max-Age=900", "HttpOnly", "SameSite=Strict"]) expect(pickCookie.split("; ")).toContain(attribute)
    // Without the pick cookie (another browser) there is nothing to pick from.
    expect((await browser(() => nodeA.url).call("POST", "/console/api/session/account", { account_id: accounts.a })).status).toBe(401)
    const chosen = await b.call("POST", "/console/api/session/account", { account_id: accounts.b })
    expect(chosen.body).toMatchObject({ status: "signed_in", session: { account_id: accounts.b, role: "operator" } })
    expect(b.jar.has("herald_pick")).toBe(false)
  })
})

describe("the REST API through the console", () => {
  it("reads as the person, and writes only with the session's CSRF token from the console's origin", async () => {
    const b = browser(() => nodeA.url)
    await b.signIn("owner@console.test")
    const bots_ = await b.call("GET", "/console/api/v1/rcs/bots")
    expect(bots_.status).toBe(200)
    expect(bots_.body.bots.map((x: any) => x.bot_id).sort()).toEqual([bots.one, bots.two].sort())
    // A bearer the page might send is not what is used: the session's token is.
    expect((await b.call("GET", "/console/api/v1/rcs/bots", undefined, { headers: { authorization: "Bearer junk" } })).status).toBe(200)

    const keys = await countOf("api_keys")
    const body = { name: "from the console", scopes: ["contacts:read"] }
    const refusals = [
      await b.call("POST", "/console/api/v1/rcs/api-keys", body, { csrf: false }),
      await b.call("POST", "/console/api/v1/rcs/api-keys", body, { headers: { "x-csrf-token": "a".repeat(43) } }),
      await b.call("POST", "/console/api/v1/rcs/api-keys", body, { headers: { origin: "https://evil.example" } }),
      await b.call("POST", "/console/api/v1/rcs/api-keys", body, { headers: { "sec-fetch-site": "cross-site" } })
    ]
    for (const r of refusals) {
      expect(r.status).toBe(403)
      expect(r.body).toMatchObject({ success: false, code: "csrf_failed" })
    }
    expect(await countOf("api_keys")).toBe(keys)
    const made = await b.call("POST", "/console/api/v1/rcs/api-keys", body)
    expect(made.status).toBe(200)
    expect(made.body.raw_key).toMatch(/^rcs_pk_live_/)
    expect(await countOf("api_keys")).toBe(keys + 1)

    // Only what a user token reaches, and only with a session.
    expect((await b.call("GET", "/console/api/v1/public/templates")).status).toBe(404)
    expect((await b.call("GET", "/console/api/v1/app/me")).status).toBe(404)
    expect((await b.call("GET", "/console/api/v1/rcs/%2e%2e/app/me")).status).toBe(404)
    const anonymous = await browser(() => nodeA.url).call("GET", "/console/api/v1/rcs/bots")
    expect(anonymous.status).toBe(401)
    expect(anonymous.body).toMatchObject({ code: "unauthorized" })
    // The same session on the other node.
    const elsewhere = await b.call("GET", "/console/api/v1/rcs/bots", undefined, { on: nodeB.url })
    expect(elsewhere.status).toBe(200)
  })

  it("a viewer's forged write, CSRF token and all, is refused by the REST API's role check and writes nothing", async () => {
    const b = browser(() => nodeA.url)
    await b.signIn("viewer@console.test")
    await b.call("POST", "/console/api/session/account", { account_id: accounts.a })
    expect((await b.call("GET", "/console/api/session")).body.session.role).toBe("viewer")
    const [keys, hooks, lists] = [await countOf("api_keys"), await countOf("webhooks"), await countOf("contact_lists")]
    const forged = [
      await b.call("POST", "/console/api/v1/rcs/api-keys", { name: "forged", scopes: ["contacts:read"] }),
      await b.call("POST", "/console/api/v1/rcs/webhooks", { url: "https://example.com/h", events: ["message.sent"] }),
      await b.call("POST", "/console/api/v1/rcs/contact-lists", { name: "forged" }),
      await b.call("POST", "/console/api/v1/app/developer/secret-key")
    ]
    for (const r of forged) expect(r.status, JSON.stringify(r.body)).toBe(403)
    expect([await countOf("api_keys"), await countOf("webhooks"), await countOf("contact_lists")]).toEqual([keys, hooks, lists])
    // Reads are the viewer's.
    expect((await b.call("GET", "/console/api/v1/rcs/broadcasts")).status).toBe(200)
  })

  it("signing out ends the session on every node at once, and so does a password change", async () => {
    const b = browser(() => nodeA.url)
    await b.signIn("owner@console.test")
    expect((await b.call("GET", "/console/api/v1/rcs/bots", undefined, { on: nodeB.url })).status).toBe(200)
    const id = b.jar.get("herald_session")!
    expect((await b.call("DELETE", "/console/api/session", undefined, { csrf: false })).status).toBe(403)
    const out = await b.call("DELETE", "/console/api/session")
    expect(out.status).toBe(200)
    expect(out.setCookies.find((c) => c.startsWith("herald_session="))).toMatch(/Max-Age=0/)
    // The old cookie, replayed, opens nothing on either node (node B's cache heard of it).
    b.jar.set("herald_session", id)
    await eventually(async () => expect((await b.call("GET", "/console/api/v1/rcs/bots", undefined, { on: nodeB.url })).status).toBe(401))
    expect((await b.call("GET", "/console/api/v1/rcs/bots")).status).toBe(401)

    await cli("admin", "create-account", "--email", "changer@console.test", "--password", PASSWORD, "--label", "Changer")
    const c = browser(() => nodeA.url)
    await c.signIn("changer@console.test")
    const d = browser(() => nodeA.url)
    await d.signIn("changer@console.test")
    const changed = await c.call("POST", "/console/api/v1/rcs/auth/password", { current_password: PASSWORD, new_password: "a brand new password" })
    expect(changed.status).toBe(200)
    for (const x of [c, d]) {
      const r = await x.call("GET", "/console/api/v1/rcs/bots")
      expect(r.status).toBe(401)
      expect((await x.call("GET", "/console/api/session")).body).toEqual({ success: true, signed_in: false })
    }
  })
})

describe("what the console shows", () => {
  it("the overview: today's messages by status and the last 24 hours; the wallet only to the owner; a scoped member its bots' only", async () => {
    const owner = await tokenOf("owner@console.test")
    for (const to of ["+919812340042", "+919812340043", "+919812340001"]) {
      await rest("POST", "/api/v1/rcs/messages/send", owner, { bot_id: bots.one, to, text: "hello" })
    }
    const b = browser(() => nodeA.url)
    await b.signIn("owner@console.test")
    const overview = await eventually(async () => {
      const r = await b.call("GET", "/console/api/v1/rcs/overview?tz=Asia/Kolkata")
      expect(r.body.messages_today.by_status.read).toBe(2)
      return r.body
    }, { timeoutMs: 30_000, intervalMs: 500 })
    expect(overview).toMatchObject({
      success: true,
      account: { account_id: accounts.a, label: "Acme", plan: "growth" },
      wallet: { balance: expect.any(Number), currency: "INR" },
      messages_today: { total: 3, by_status: { queued: 0, unconfirmed: 0, sent: 0, delivered: 0, read: 2, failed: 1 } }
    })
    expect(new Date(overview.messages_today.since).getUTCHours() * 60 + new Date(overview.messages_today.since).getUTCMinutes()).toBe(18 * 60 + 30)
    expect(overview.last_24_hours).toHaveLength(24)
    const now = overview.last_24_hours[23]
    expect(Date.now() - Date.parse(now.hour)).toBeLessThan(3_600_000 + 60_000)
    expect(overview.last_24_hours.reduce((n: number, h: any) => n + h.sent, 0)).toBe(2)
    expect(overview.last_24_hours.reduce((n: number, h: any) => n + h.failed, 0)).toBe(1)

    const viewer = browser(() => nodeA.url)
    await viewer.signIn("viewer@console.test")
    await viewer.call("POST", "/console/api/session/account", { account_id: accounts.a })
    expect((await viewer.call("GET", "/console/api/v1/rcs/overview")).body).toMatchObject({ wallet: null, messages_today: { total: 3 } })
    const scoped = browser(() => nodeA.url)
    await scoped.signIn("scoped@console.test")
    expect((await scoped.call("GET", "/console/api/v1/rcs/overview")).body.messages_today.total).toBe(0)
    expect((await b.call("GET", "/console/api/v1/rcs/overview?tz=Nowhere/Atall")).status).toBe(400)
  })

  it("webhook stats: an endpoint whose every attempt fails is failing, a healthy one healthy, one never called idle", async () => {
    const b = browser(() => nodeA.url)
    await b.signIn("owner@console.test")
    const make = async (path: string) =>
      (await b.call("POST", "/console/api/v1/rcs/webhooks", { url: consumer.url(path), events: ["message.sent"], bot_id: bots.two })).body.webhook_id as string
    const good = await make("/ok")
    const bad = await make("/status/500")
    const idle = await make("/ok-idle")
    for (let i = 0; i < 3; i++) {
      expect((await b.call("POST", `/console/api/v1/rcs/webhooks/${good}/test`)).status).toBe(200)
      expect((await b.call("POST", `/console/api/v1/rcs/webhooks/${bad}/test`)).status).toBe(200)
    }
    const stats = await eventually(async () => {
      const r = await b.call("GET", "/console/api/v1/rcs/webhooks/stats")
      const byId = new Map<string, any>(r.body.endpoints.map((e: any) => [e.webhook_id, e]))
      expect(byId.get(good)!.attempts).toBe(3)
      expect(byId.get(bad)!.attempts).toBeGreaterThanOrEqual(3)
      return byId
    }, { timeoutMs: 30_000, intervalMs: 500 })
    expect(stats.get(good)).toMatchObject({ succeeded: 3, failed: 0, success_rate: 1, health: "healthy", last_status_code: 200, latency_ms: { p50: expect.any(Number) } })
    expect(stats.get(bad)).toMatchObject({ succeeded: 0, success_rate: 0, health: "failing", last_status_code: 500 })
    expect(stats.get(idle)).toMatchObject({ attempts: 0, success_rate: null, health: "idle", last_attempt_at: null, latency_ms: { p50: null, p95: null } })
    // A member scoped to bot one sees none of bot two's endpoints.
    const owner = await tokenOf("owner@console.test")
    await rest("POST", "/api/v1/rcs/team", owner, { email: "onlyone@console.test", role: "viewer", assigned_bots: [bots.one], password: PASSWORD })
    const scoped = browser(() => nodeA.url)
    await scoped.signIn("onlyone@console.test")
    const seen = (await scoped.call("GET", "/console/api/v1/rcs/webhooks/stats")).body.endpoints.map((e: any) => e.webhook_id)
    expect(seen).not.toContain(good)
    expect(seen).not.toContain(bad)
  })

  it("the live stream: a broadcast's progress pushed as it moves, ending complete; none of it to a member scoped to another bot", async () => {
    const owner = browser(() => nodeA.url)
    await owner.signIn("owner@console.test")
    const scoped = browser(() => nodeB.url)
    await scoped.signIn("scoped@console.test")
    const open = async (b: ReturnType<typeof browser>, base: string) => {
      const live = await openLive(base, b.cookieHeader())
      expect(live.response.status).toBe(200)
      expect(live.response.headers.get("content-type")).toMatch(/^text\/event-stream/)
      return live
    }
    // The owner listens on node B, the broadcast runs on node A: the event crosses nodes.
    const watching = await open(owner, nodeB.url)
    const outsider = await open(scoped, nodeB.url)
    const list = (await owner.call("POST", "/console/api/v1/rcs/contact-lists", { name: "live" })).body.list.list_id
    const imported = await fetch(`${nodeA.url}/console/api/v1/rcs/contact-lists/${list}/contacts`, {
      method: "POST",
      headers: { cookie: `herald_session=${owner.jar.get("herald_session")}`, "x-csrf-token": owner.csrf(), origin: nodeA.url, "content-type": "text/csv" },
      body: "phone\n" + Array.from({ length: 300 }, (_, i) => `+9198${String(i).padStart(4, "0")}1234`).join("\n") + "\n"
    })
    expect(imported.status).toBe(200)
    const template = (await owner.call("POST", "/console/api/v1/rcs/templates", { bot_id: bots.one, name: "live offer", type: "text", text: "Hello" })).body.template_id
    const created = await owner.call("POST", "/console/api/v1/rcs/broadcasts", { name: "Live", bot_id: bots.one, template_id: template, contact_list_id: list })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    const id = created.body.broadcast.id
    await eventually(async () => {
      const last = watching.events.filter((e) => e.broadcast_id === id).at(-1)
      expect(last).toMatchObject({ status: "completed", total_count: 300, sent_count: 300 })
    }, { timeoutMs: 60_000, intervalMs: 200 })
    const mine = watching.events.filter((e) => e.broadcast_id === id)
    for (let i = 1; i < mine.length; i++) {
      const sum = (e: any) => e.sent_count + e.delivered_count + e.read_count + e.failed_count + e.cancelled_count
      expect(sum(mine[i]) >= sum(mine[i - 1]) || mine[i].status === "completed").toBe(true)
    }
    expect(outsider.events.filter((e) => e.broadcast_id === id)).toEqual([])
    await Promise.all([watching.close(), outsider.close()])
    // Not signed in: no stream.
    expect((await fetch(`${nodeA.url}/console/api/live`)).status).toBe(401)
  }, 90_000)
})

describe("the operator view", () => {
  it("is off without HERALD_OPS_TOKEN; with it, the token opens a signed cookie or goes as a bearer", async () => {
    expect((await fetch(`${nodeB.url}/console/api/ops/session`)).status).toBe(404)
    expect((await fetch(`${nodeB.url}/console/api/ops/cluster`, { headers: { authorization: `Bearer ${OPS_TOKEN}` } })).status).toBe(404)

    const b = browser(() => nodeA.url)
    expect((await b.call("GET", "/console/api/ops/cluster")).status).toBe(401)
    expect((await b.call("POST", "/console/api/ops/session", { token: "not the token" })).status).toBe(401)
    const signedIn = await b.call("POST", "/console/api/ops/session", { token: OPS_TOKEN })
    expect(signedIn.status).toBe(200)
    const opsCookie = signedIn.setCookies.find((c) => c.startsWith("herald_ops="))!.split("; ")
    for (const attribute of ["Path=/console", "Max-Age=43200", "HttpOnly", "SameSite=Strict"]) expect(opsCookie).toContain(attribute)
    const cluster = await b.call("GET", "/console/api/ops/cluster")
    expect(cluster.status).toBe(200)
    expect(cluster.body.partitions_per_kind).toBe(8)
    expect(cluster.body.nodes.map((n: any) => n.role)).toContain("all")
    const sender = cluster.body.kinds.find((k: any) => k.kind === "sender")
    expect(sender.partitions).toHaveLength(8)
    expect(sender.partitions.every((p: any) => typeof p.owner === "string")).toBe(true)
    expect(sender.backlog).toEqual({ pending: expect.any(Number), ack_pending: expect.any(Number), redelivered: expect.any(Number) })
    expect((await b.call("GET", "/console/api/ops/poison")).body).toEqual({ success: true, items: [] })

    // A redrive changes something: the ops CSRF token (from its own session read), or the bearer.
    const csrf = (await b.call("GET", "/console/api/ops/session")).body.csrf_token as string
    expect(csrf).toMatch(/^[\w-]{43}$/)
    expect((await b.call("POST", "/console/api/ops/poison/0b6b2f4e-1111-4a4a-8a8a-000000000000/redrive", undefined, { csrf: false })).status).toBe(403)
    b.setCsrf(csrf)
    expect((await b.call("POST", "/console/api/ops/poison/0b6b2f4e-1111-4a4a-8a8a-000000000000/redrive")).status).toBe(404)
    const bearer = await fetch(`${nodeA.url}/console/api/ops/poison`, { headers: { authorization: `Bearer ${OPS_TOKEN}` } })
    expect(bearer.status).toBe(200)
    // A forged cookie is nothing.
    const forged = await fetch(`${nodeA.url}/console/api/ops/cluster`, { headers: { cookie: `herald_ops=${Date.now() + 60_000}.AAAA` } })
    expect(forged.status).toBe(401)
  })
})

describe("the page", () => {
  it("is served at /console and every path under it with a strict CSP; its files by content hash; an unknown console route is a JSON 404", async () => {
    for (const path of ["/console", "/console/broadcasts/123", "/console/ops"]) {
      const r = await fetch(`${nodeA.url}${path}`)
      expect(r.status).toBe(200)
      expect(r.headers.get("content-type")).toMatch(/^text\/html/)
      expect(r.headers.get("content-security-policy")).toContain("script-src 'self'")
      expect(r.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
      const html = await r.text()
      expect(html).not.toMatch(/<script>(?!<\/)/)
      const script = /src="(\/console\/assets\/app\.[A-Z0-9]+\.js)"/.exec(html)![1]!
      const asset = await fetch(`${nodeA.url}${script}`)
      expect(asset.status).toBe(200)
      expect(asset.headers.get("cache-control")).toContain("immutable")
    }
    expect((await fetch(`${nodeA.url}/console/assets/app.NOPE.js`)).status).toBe(404)
    const unknown = await fetch(`${nodeA.url}/console/api/nothing-here`)
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toMatchObject({ code: "not_found" })
  })
})
