import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { gstinCheckCharacter } from "../../src/bots/gstin.ts"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { heraldCommand, type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"

// POST /api/v1/rcs/apply and the platform operator's decision (`herald admin bot-status`).

const iso = useIsolation()
const db = useDb(iso)
const env = envFor(iso)
const cli = cliFor(env)
let node: HeraldProcess
const tokens: Record<string, string> = {}
const accounts: Record<string, string> = {}

const call = (method: string, path: string, token?: string, body?: unknown) => callJson(node.url, method, path, token, body)

/** A valid GSTIN for a PAN-like stem (`AAPFU0939F` shapes), in state 27. */
const gstin = (pan: string) => {
  const first14 = `27${pan}1Z`
  return first14 + gstinCheckCharacter(first14)
}

const application = (overrides: Record<string, unknown> = {}) => ({
  bot_name: "Offers",
  company_name: "Brand Retail Pvt Ltd",
  company_gstin: "27AAPFU0939F1ZV",
  brand_website: "https://brand.example.com",
  use_case: "promotional",
  ...overrides
})

const botCount = async (account: string) => (await db<{ n: number }>("SELECT count(*)::int AS n FROM bots WHERE account_id = $1", [account]))[0]!.n

beforeAll(async () => {
  node = await startHerald(env)
  for (const name of ["a", "b", ...Array.from({ length: 6 }, (_, i) => `r${i}`)]) {
    accounts[name] = (await cli("admin", "create-account", "--email", `${name}@apply.io`, "--password", `${name} password`, "--label", name)).account_id
    tokens[name] = (await call("POST", "/api/v1/rcs/auth/login", undefined, { email: `${name}@apply.io`, password: `${name} password` })).body.token
  }
}, 300_000)
afterAll(() => node?.kill())

describe("applying for a bot", () => {
  it("registers a pending bot with its use case", async () => {
    const r = await call("POST", "/api/v1/rcs/apply", tokens.a, application())
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ success: true, bot_id: expect.any(String), status: "pending" })
    const bot = (await call("GET", `/api/v1/rcs/bots/${r.body.bot_id}`, tokens.a)).body.bot
    expect(bot).toMatchObject({ bot_id: r.body.bot_id, name: "Offers", status: "pending", bot_use_case: "promotional", can_broadcast: true })
    const [row] = await db<{ company_gstin: string; brand_website: string; company_name: string }>(
      "SELECT company_gstin, brand_website, company_name FROM bots WHERE bot_id = $1",
      [r.body.bot_id]
    )
    expect(row).toEqual({ company_gstin: "27AAPFU0939F1ZV", brand_website: "https://brand.example.com", company_name: "Brand Retail Pvt Ltd" })
  })

  it("a transactional or OTP bot cannot broadcast", async () => {
    for (const useCase of ["transactional", "otp"]) {
      const r = await call("POST", "/api/v1/rcs/apply", tokens.a, application({ bot_name: useCase, use_case: useCase }))
      const bot = (await call("GET", `/api/v1/rcs/bots/${r.body.bot_id}`, tokens.a)).body.bot
      expect(bot).toMatchObject({ bot_use_case: useCase, can_broadcast: false })
    }
  })

  it("the same account may reuse its GSTIN and website for more bots", async () => {
    const r = await call("POST", "/api/v1/rcs/apply", tokens.a, application({ bot_name: "Second", brand_website: "http://WWW.Brand.Example.com/" }))
    expect(r.status).toBe(200)
  })

  it("another account gets 409 naming the field, and nothing is written", async () => {
    const before = await botCount(accounts.b!)
    const byGstin = await call("POST", "/api/v1/rcs/apply", tokens.b, application({ brand_website: "https://other.example.com", company_gstin: "27aapfu0939f1zv" }))
    expect(byGstin.status).toBe(409)
    expect(byGstin.body).toMatchObject({ success: false, code: "conflict", key: "company_gstin" })
    // Scheme, case, www and the trailing slash do not make another site.
    const bySite = await call("POST", "/api/v1/rcs/apply", tokens.b, application({ company_gstin: gstin("AAGCB7383J"), brand_website: "http://www.BRAND.example.com/" }))
    expect(bySite.status).toBe(409)
    expect(bySite.body).toMatchObject({ success: false, code: "conflict", key: "brand_website" })
    expect(await botCount(accounts.b!)).toBe(before)
    // The GSTIN tried with the taken site was not claimed either: b can use it with a site of its own.
    const own = await call("POST", "/api/v1/rcs/apply", tokens.b, application({ company_gstin: gstin("AAGCB7383J"), brand_website: "https://b.example.com" }))
    expect(own.status).toBe(200)
  })

  it("accounts racing for one GSTIN: exactly one gets it", async () => {
    const contested = gstin("AABCR1234K")
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        call("POST", "/api/v1/rcs/apply", tokens[`r${i}`], application({ company_gstin: contested, brand_website: `https://racer${i}.example.com` })))
    )
    expect(results.filter((r) => r.status === 200)).toHaveLength(1)
    expect(results.filter((r) => r.status === 409 && r.body.key === "company_gstin")).toHaveLength(5)
    const rows = await db<{ n: number }>("SELECT count(*)::int AS n FROM bots WHERE company_gstin = $1", [contested])
    expect(rows[0]?.n).toBe(1)
  })

  it("a wrong GSTIN or website is a 400 naming each field, and nothing is written", async () => {
    const before = await botCount(accounts.a!)
    const both = await call("POST", "/api/v1/rcs/apply", tokens.a, application({ company_gstin: "27AAPFU0939F1ZX", brand_website: "ftp://brand.example.com" }))
    expect(both.status).toBe(400)
    expect(both.body.code).toBe("invalid_request")
    expect(both.body.errors.map((e: { path: string }) => e.path)).toEqual(["company_gstin", "brand_website"])
    expect(both.body.errors[0].message).toMatch(/check character/)
    const badState = await call("POST", "/api/v1/rcs/apply", tokens.a, application({ company_gstin: `00AAPFU0939F1Z${gstinCheckCharacter("00AAPFU0939F1Z")}` }))
    expect(badState.body.errors).toEqual([{ path: "company_gstin", message: "unknown state code 00" }])
    for (const body of [application({ use_case: "marketing" }), application({ bot_name: "  " }), { bot_name: "x" }]) {
      const r = await call("POST", "/api/v1/rcs/apply", tokens.a, body)
      expect(r.status).toBe(400)
      expect(r.body.code).toBe("invalid_request")
    }
    expect(await botCount(accounts.a!)).toBe(before)
  })
})

describe("herald admin bot-status", () => {
  it("activates, suspends with a reason shown on the bot, rejects", async () => {
    const botId = (await call("POST", "/api/v1/rcs/apply", tokens.a, application({ bot_name: "Decided" }))).body.bot_id
    const read = async () => (await call("GET", `/api/v1/rcs/bots/${botId}`, tokens.a)).body.bot
    expect(await cli("admin", "bot-status", botId, "active")).toMatchObject({ bot_id: botId, status: "active", suspend_reason: null })
    await eventually(async () => expect(await read()).toMatchObject({ status: "active" }))
    expect((await read()).suspend_reason).toBeUndefined()
    await cli("admin", "bot-status", botId, "suspended", "--reason", "spam complaints")
    await eventually(async () => expect(await read()).toMatchObject({ status: "suspended", suspend_reason: "spam complaints" }))
    await cli("admin", "bot-status", botId, "rejected")
    await eventually(async () => expect(await read()).toMatchObject({ status: "rejected" }))
    expect((await read()).suspend_reason).toBeUndefined()
  })

  it("an unknown bot or status fails with a message and a non-zero exit", async () => {
    const unknown = await heraldCommand(["admin", "bot-status", crypto.randomUUID(), "active"], env)
    expect(unknown.code).not.toBe(0)
    expect(JSON.parse(unknown.stderr)).toMatchObject({ success: false, code: "not_found" })
    const badStatus = await heraldCommand(["admin", "bot-status", crypto.randomUUID(), "pending"], env)
    expect(badStatus.code).not.toBe(0)
  })
})
