import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"

const iso = useIsolation()
const db = useDb(iso)
const env = envFor(iso)
let node: HeraldProcess
let ownerToken = ""
let account = ""
let bot = ""

const call = (method: string, path: string, token?: string, body?: unknown) => callJson(node.url, method, path, token, body)

const cli = cliFor(env)

const tokenIn = async (email: string, password: string) => {
  const r = await call("POST", "/api/v1/rcs/auth/login", undefined, { email, password })
  if (r.body.token) return r.body.token as string
  return (await call("POST", "/api/v1/rcs/auth/select-account", undefined, { session_token: r.body.session_token, account_id: account })).body.token as string
}

beforeAll(async () => {
  node = await startHerald(env)
  account = (await cli("admin", "create-account", "--email", "boss@example.com", "--password", "boss password", "--label", "Team Co")).account_id
  bot = (await cli("admin", "create-bot", account, "--name", "B1", "--status", "active")).bot_id
  ownerToken = await tokenIn("boss@example.com", "boss password")
})
afterAll(() => node?.kill())

describe("team", () => {
  let memberId = ""

  it("the owner adds a member with an initial password; the member signs in with the given role and scope", async () => {
    const added = await call("POST", "/api/v1/rcs/team", ownerToken, { email: "Op@Example.com", role: "operator", assigned_bots: [bot], password: "operator password" })
    expect(added.status).toBe(200)
    expect(added.body).toMatchObject({ success: true, user_created: true, member: { email: "op@example.com", role: "operator", assigned_bots: [bot] } })
    memberId = added.body.member.member_id
    const login = await call("POST", "/api/v1/rcs/auth/login", undefined, { email: "op@example.com", password: "operator password" })
    expect(login.body).toMatchObject({ role: "operator", user: { member_id: memberId, assigned_bots: [bot], account_label: "Team Co" } })
    const list = await call("GET", "/api/v1/rcs/team", login.body.token)
    expect(list.body.members.map((m: any) => [m.email, m.role, m.member_id === "" ? "owner-row" : "member"])).toEqual([
      ["boss@example.com", "owner", "owner-row"],
      ["op@example.com", "operator", "member"]
    ])
  })

  it("an e-mail that already has a user keeps its password and gains the membership", async () => {
    await cli("admin", "create-account", "--email", "elsewhere@example.com", "--password", "own password", "--label", "Own")
    const added = await call("POST", "/api/v1/rcs/team", ownerToken, { email: "elsewhere@example.com", role: "viewer", assigned_bots: ["*"], password: "ignored password" })
    expect(added.body.user_created).toBe(false)
    const pick = await call("POST", "/api/v1/rcs/auth/login", undefined, { email: "elsewhere@example.com", password: "own password" })
    expect(pick.body.need_account_pick).toBe(true)
    const again = await call("POST", "/api/v1/rcs/team", ownerToken, { email: "elsewhere@example.com", role: "viewer", assigned_bots: ["*"] })
    expect(again.status).toBe(409)
    expect(again.body).toMatchObject({ code: "conflict", key: "email" })
  })

  it("refuses bad input with 400 and writes nothing", async () => {
    const before = (await db<{ n: number }>("SELECT count(*)::int AS n FROM memberships"))[0]!.n
    const cases = [
      { email: "new1@example.com", role: "operator", assigned_bots: [bot] },
      { email: "new2@example.com", role: "owner", assigned_bots: ["*"], password: "long enough" },
      { email: "new3@example.com", role: "viewer", assigned_bots: ["not-a-bot"], password: "long enough" },
      { email: "new4@example.com", role: "viewer", assigned_bots: [], password: "long enough" },
      { email: "new5@example.com", role: "viewer", assigned_bots: ["*"], password: "short" }
    ]
    for (const body of cases) {
      const r = await call("POST", "/api/v1/rcs/team", ownerToken, body)
      expect(r.status, JSON.stringify(body)).toBe(400)
      expect(r.body.code).toBe("invalid_request")
    }
    expect((await db<{ n: number }>("SELECT count(*)::int AS n FROM memberships"))[0]!.n).toBe(before)
    expect((await db<{ n: number }>("SELECT count(*)::int AS n FROM users WHERE email LIKE 'new%'"))[0]!.n).toBe(0)
  })

  it("role and scope changes apply to the member's existing token at once; removal ends access", async () => {
    const token = await tokenIn("op@example.com", "operator password")
    expect((await call("GET", `/api/v1/rcs/bots/${bot}`, token)).status).toBe(200)
    const narrowed = await call("PATCH", `/api/v1/rcs/team/${memberId}`, ownerToken, { role: "viewer", assigned_bots: ["*"] })
    expect(narrowed.body.member).toMatchObject({ role: "viewer", assigned_bots: ["*"] })
    const other = (await cli("admin", "create-bot", account, "--name", "B2")).bot_id
    expect((await call("PATCH", `/api/v1/rcs/team/${memberId}`, ownerToken, { assigned_bots: [other] })).status).toBe(200)
    const denied = await call("GET", `/api/v1/rcs/bots/${bot}`, token)
    expect(denied.status).toBe(403)
    expect(denied.body.code).toBe("bot_not_in_scope")
    // Non-owners cannot manage the team.
    const attempt = await call("PATCH", `/api/v1/rcs/team/${memberId}`, token, { role: "operator" })
    expect(attempt.status).toBe(403)
    expect(attempt.body.code).toBe("forbidden")
    expect((await call("DELETE", `/api/v1/rcs/team/${memberId}`, ownerToken)).status).toBe(200)
    expect((await call("GET", "/api/v1/rcs/bots", token)).status).toBe(401)
    expect((await call("DELETE", `/api/v1/rcs/team/${memberId}`, ownerToken)).status).toBe(404)
  })

  it("the owner's own membership cannot be edited or removed", async () => {
    const [ownerRow] = await db<{ member_id: string }>("SELECT member_id FROM memberships WHERE role = 'owner' AND account_id = $1", [account])
    expect((await call("PATCH", `/api/v1/rcs/team/${ownerRow!.member_id}`, ownerToken, { role: "viewer" })).status).toBe(404)
    expect((await call("DELETE", `/api/v1/rcs/team/${ownerRow!.member_id}`, ownerToken)).status).toBe(404)
  })
})
