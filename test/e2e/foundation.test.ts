import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type AddressInfo, createServer } from "node:net"
import { envFor } from "../support/isolation.ts"
import { heraldCommand, type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { useDb, useIsolation } from "../support/e2e.ts"

const iso = useIsolation()
const db = useDb(iso)
const env = envFor(iso)

describe("herald serve", () => {
  let node: HeraldProcess
  beforeAll(async () => {
    node = await startHerald(env)
  })
  afterAll(() => node?.kill())

  // How long a cold start takes is a figure for a benchmark, not a timed assertion here: beside
  // the suite's heaviest files it took 14 s, alone about 2.
  it("is ready after a cold start, with the database created and migrated", async () => {
    const res = await fetch(`${node.url}/health/ready`)
    expect(res.status).toBe(200)
    const body = (await res.json()) as any
    expect(body).toMatchObject({ status: "ready", role: "all", checks: { postgres: "up", migrations: "up", nats: "up" } })
    const tables = await db<{ tablename: string }>("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
    expect(tables.map((t) => t.tablename)).toContain("accounts")
  })

  it("answers liveness", async () => {
    const res = await fetch(`${node.url}/health/live`)
    expect(await res.json()).toEqual({ status: "live" })
  })

  it("answers unknown routes with the 404 envelope", async () => {
    const res = await fetch(`${node.url}/api/v1/nothing-here`)
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ success: false, code: "not_found", message: "no route for GET /api/v1/nothing-here" })
  })

  it("refuses an oversized body with 413", async () => {
    const res = await fetch(`${node.url}/api/v1/anything`, { method: "POST", body: "x".repeat(10 * 1024 * 1024 + 1), headers: { "content-type": "application/json" } })
    expect(res.status).toBe(413)
    expect(((await res.json()) as any).code).toBe("payload_too_large")
  })

  it("serves the OpenAPI document and a docs page with no CDN", async () => {
    const spec = (await (await fetch(`${node.url}/api/v1/openapi.json`)).json()) as any
    expect(spec.openapi).toMatch(/^3\./)
    expect(Object.keys(spec.paths)).toContain("/health/ready")
    const docs = await (await fetch(`${node.url}/docs`)).text()
    expect(docs).toContain("SwaggerUIBundle")
    expect(docs).not.toMatch(/<script[^>]+src=["']https?:/)
    expect(docs).not.toMatch(/<link[^>]+href=["']https?:/)
  })

  it("exposes Prometheus metrics per route", async () => {
    await fetch(`${node.url}/health/live`)
    const text = await (await fetch(`${node.metricsUrl}/metrics`)).text()
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/health\/live",status="200"\} \d+/)
    expect(text).toContain("# TYPE http_request_duration_seconds histogram")
  })

  it("puts the request id on the response and in the request's log lines", async () => {
    const res = await fetch(`${node.url}/nope`, { headers: { "x-request-id": "trace-me-42" } })
    expect(res.headers.get("x-request-id")).toBe("trace-me-42")
    const generated = await fetch(`${node.url}/nope`)
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
  })

  it("sends no CORS headers", async () => {
    const res = await fetch(`${node.url}/health/live`, { headers: { origin: "https://evil.example" } })
    expect(res.headers.get("access-control-allow-origin")).toBeNull()
  })
})

describe("request logging", () => {
  it("writes JSON lines carrying the request id at debug level", async () => {
    const node = await startHerald({ ...env, LOG_LEVEL: "debug" })
    try {
      await fetch(`${node.url}/nope`, { headers: { "x-request-id": "log-line-7" } })
      await new Promise((r) => setTimeout(r, 200))
      const lines = node.logs().filter((l) => l.request_id === "log-line-7")
      expect(lines.length).toBeGreaterThan(0)
      expect(lines[0]).toMatchObject({ level: "debug", route: "unmatched", status: 404 })
    } finally {
      await node.kill()
    }
  })
})

describe("shutdown", () => {
  it("exits 0 within 10 s of SIGTERM, with keep-alive connections open", async () => {
    const node = await startHerald(env)
    const agentRequests = await Promise.all([1, 2, 3].map(() => fetch(`${node.url}/health/ready`, { keepalive: true })))
    expect(agentRequests.every((r) => r.status === 200)).toBe(true)
    const { code, ms } = await node.stop()
    expect(code).toBe(0)
    expect(ms).toBeLessThan(10_000)
    expect(node.output()).toContain("herald node stopping")
  })

  it("SIGINT too", async () => {
    const node = await startHerald(env)
    node.child.kill("SIGINT")
    expect(await node.exited).toBe(0)
  })
})

describe("configuration", () => {
  it("a bad value stops the process with one line naming the variable", async () => {
    const result = await heraldCommand(["serve"], { ...env, PORT: "eighty", HERALD_ROLE: "boss" })
    expect(result.code).toBe(1)
    const lines = result.stderr.trim().split("\n")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain("PORT")
    expect(lines[0]).toContain("HERALD_ROLE")
    expect(JSON.parse(lines[0]!)).toMatchObject({ success: false, code: "invalid_config" })
  })

  it("a port already in use stops the process with a message saying so (it was empty)", async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, "0.0.0.0", resolve))
    try {
      const port = (taken.address() as AddressInfo).port
      const result = await heraldCommand(["serve"], { ...env, PORT: "0", METRICS_PORT: String(port) })
      expect(result.code).toBe(1)
      const failure = JSON.parse(result.stderr.trim().split("\n").at(-1)!)
      expect(failure).toMatchObject({ success: false, code: "serve_error" })
      expect(failure.message).toContain("EADDRINUSE")
    } finally {
      taken.close()
    }
  })
})

describe("herald migrate and admin", () => {
  it("migrate is idempotent", async () => {
    const first = await heraldCommand(["migrate"], env)
    expect(first.code).toBe(0)
    const second = await heraldCommand(["migrate"], env)
    expect(second.code).toBe(0)
    // A second run applies nothing and finds nothing left to seal (the first sealed what start-up had not).
    expect(JSON.parse(second.stdout)).toEqual({ database_created: false, applied: [], secrets: { sealed: 0, resealed: 0, unreadable: 0 } })
  })

  let accountId = ""
  it("create-account prints JSON and the account is in the database", async () => {
    const r = await heraldCommand(["admin", "create-account", "--email", "Owner@Example.com", "--password", "correct horse", "--label", "Acme", "--plan", "growth"], env)
    expect(r.code, r.stderr).toBe(0)
    const out = JSON.parse(r.stdout)
    expect(out.account_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(out.user_id).toMatch(/^[0-9a-f-]{36}$/)
    accountId = out.account_id
    const [account] = await db("SELECT a.label, a.plan, a.wallet_balance, u.email, u.password_hash, m.role FROM accounts a JOIN users u ON u.user_id = a.owner_user_id JOIN memberships m ON m.account_id = a.account_id WHERE a.account_id = $1", [accountId])
    expect(account).toMatchObject({ label: "Acme", plan: "growth", wallet_balance: "0.0000", email: "owner@example.com", role: "owner" })
    expect(String(account!.password_hash)).toMatch(/^\$argon2id\$/)
    expect(r.stdout + r.stderr).not.toContain("correct horse")
  })

  it("refuses a duplicate e-mail, an unknown plan and bad input, writing nothing", async () => {
    const dup = await heraldCommand(["admin", "create-account", "--email", "owner@example.com", "--password", "another pass", "--label", "B"], env)
    expect(dup.code).toBe(1)
    expect(JSON.parse(dup.stderr.trim())).toMatchObject({ success: false, code: "email_taken" })
    const plan = await heraldCommand(["admin", "create-account", "--email", "x@example.com", "--password", "another pass", "--label", "B", "--plan", "gold"], env)
    expect(plan.code).not.toBe(0)
    expect(plan.stdout + plan.stderr).toMatch(/starter, growth, advanced, enterprise/)
    const short = await heraldCommand(["admin", "create-account", "--email", "y@example.com", "--password", "short", "--label", "B"], env)
    expect(short.code).toBe(1)
    expect(JSON.parse(short.stderr.trim())).toMatchObject({ code: "invalid_request" })
    const email = await heraldCommand(["admin", "create-account", "--email", "not-an-email", "--password", "long enough", "--label", "B"], env)
    expect(email.code).toBe(1)
    const rows = await db("SELECT count(*)::int AS n FROM users")
    expect(rows[0]!.n).toBe(1)
  })

  it("set-plan, wallet-credit and reset-password", async () => {
    const plan = await heraldCommand(["admin", "set-plan", accountId, "enterprise", "--rate", "1200"], env)
    expect(plan.code, plan.stderr).toBe(0)
    expect(JSON.parse(plan.stdout)).toEqual({ account_id: accountId, plan: "enterprise", rate_per_minute: 1200 })
    const credit = await heraldCommand(["admin", "wallet-credit", accountId, "150.25"], env)
    expect(credit.code, credit.stderr).toBe(0)
    expect(JSON.parse(credit.stdout)).toMatchObject({ account_id: accountId, balance: 150.25 })
    const ledger = await db("SELECT kind, amount, balance_after FROM wallet_transactions WHERE account_id = $1", [accountId])
    expect(ledger).toEqual([{ kind: "credit", amount: "150.2500", balance_after: "150.2500" }])
    const reset = await heraldCommand(["admin", "reset-password", "OWNER@example.com", "brand new pass"], env)
    expect(reset.code, reset.stderr).toBe(0)
    const after = await db<{ recent: boolean; password_hash: string }>("SELECT tokens_valid_after > now() - interval '1 minute' AS recent, password_hash FROM users WHERE email = 'owner@example.com'")
    expect(after[0]!.recent).toBe(true)
    expect(after[0]!.password_hash).toMatch(/^\$argon2id\$/)
  })

  it("names unknown accounts and users clearly", async () => {
    const unknown = "00000000-0000-4000-8000-000000000000"
    const plan = await heraldCommand(["admin", "set-plan", unknown, "growth"], env)
    expect(plan.code).toBe(1)
    expect(JSON.parse(plan.stderr.trim())).toMatchObject({ code: "account_not_found" })
    const credit = await heraldCommand(["admin", "wallet-credit", "not-a-uuid", "10"], env)
    expect(credit.code).toBe(1)
    expect(JSON.parse(credit.stderr.trim()).message).toContain("ACCOUNT")
    const amount = await heraldCommand(["admin", "wallet-credit", accountId, "-5"], env)
    expect(amount.code).not.toBe(0)
    const user = await heraldCommand(["admin", "reset-password", "nobody@example.com", "whatever long"], env)
    expect(user.code).toBe(1)
    expect(JSON.parse(user.stderr.trim())).toMatchObject({ code: "user_not_found" })
    const rate = await heraldCommand(["admin", "set-plan", accountId, "growth", "--rate", "5"], env)
    expect(rate.code).toBe(1)
  })
})
