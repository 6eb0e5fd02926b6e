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
    expect(added.body).toMatchObject({ success: true, status: "active", user_created: true, member: { email: "op@example.com", role: "operator", assigned_bots: [bot], status: "active" } })
    memberId = added.body.member.member_id
    expect(added.body.member_id).toBe(memberId)
    const login = await call("POST", "/api/v1/rcs/auth/login", undefined, { email: "op@example.com", password: "operator password" })
    expect(login.body).toMatchObject({ role: "operator", user: { member_id: memberId, assigned_bots: [bot], account_label: "Team Co" } })
    const list = await call("GET", "/api/v1/rcs/team", login.body.token)
    expect(list.body.members.map((m: any) => [m.email, m.role, m.member_id === "" ? "owner-row" : "member"])).toEqual([
      ["boss@example.com", "owner", "owner-row"],
      ["op@example.com", "operator", "member"]
    ])
  })

  it("the new member's answer and the team list say they are active", async () => {
    const list = await call("GET", "/api/v1/rcs/team", ownerToken)
    expect(list.body.members.find((m: any) => m.member_id === memberId)).toMatchObject({ status: "active", email: "op@example.com" })
    expect(list.body.members.find((m: any) => m.role === "owner")).toMatchObject({ status: "active" })
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

/**
 * DESIGN.md (Team): an e-mail that already belongs to a person is invited. Nothing about them
 * reaches the inviting account, and their sign-in stays as it was until they accept, signed in as
 * themselves.
 */
describe("invitations", () => {
  const PERSON = { email: "elsewhere@example.com", password: "own password" }
  let own = { account: "", userId: "" }
  let personToken = ""
  let invitation = ""
  const rival = { account: "", owner: "" }

  const loginOf = (who: { email: string; password: string }) => call("POST", "/api/v1/rcs/auth/login", undefined, who)

  beforeAll(async () => {
    const made = await cli("admin", "create-account", "--email", PERSON.email, "--password", PERSON.password, "--label", "Own")
    own = { account: made.account_id, userId: made.user_id }
    personToken = (await loginOf(PERSON)).body.token
    rival.account = (await cli("admin", "create-account", "--email", "rival@example.com", "--password", "rival password", "--label", "Rival")).account_id
    rival.owner = (await loginOf({ email: "rival@example.com", password: "rival password" })).body.token
  })

  it("adding a person who already has a Herald user invites them; the answer carries nothing about them; their sign-in is unchanged", async () => {
    const added = await call("POST", "/api/v1/rcs/team", ownerToken, { email: "Elsewhere@Example.com", role: "operator", assigned_bots: [bot], password: "ignored password" })
    expect(added.status).toBe(200)
    expect(added.body).toEqual({ success: true, member_id: expect.any(String), status: "invited" })
    invitation = added.body.member_id
    for (const secret of [own.userId, own.account, "Own"]) expect(JSON.stringify(added.body)).not.toContain(secret)
    // The team shows the invitation, without the person's id.
    const listed = (await call("GET", "/api/v1/rcs/team", ownerToken)).body.members.find((m: any) => m.member_id === invitation)
    expect(listed).toMatchObject({ email: "elsewhere@example.com", role: "operator", status: "invited", user_id: "" })
    expect(JSON.stringify(listed)).not.toContain(own.userId)
    // Their password did not change, and sign-in still goes straight to their own account.
    const login = await loginOf(PERSON)
    expect(login.status).toBe(200)
    expect(login.body.need_account_pick).toBeUndefined()
    expect(login.body.user).toMatchObject({ account_label: "Own" })
    expect((await loginOf({ email: PERSON.email, password: "ignored password" })).status).toBe(401)
    // Invited again (or invited and then added): 409.
    const again = await call("POST", "/api/v1/rcs/team", ownerToken, { email: PERSON.email, role: "viewer", assigned_bots: ["*"] })
    expect(again.status).toBe(409)
    expect(again.body).toMatchObject({ code: "conflict", key: "email" })
  })

  it("an invitation never accepted gives no access and is not among sign-in's accounts", async () => {
    const rivalInvite = await call("POST", "/api/v1/rcs/team", rival.owner, { email: PERSON.email, role: "viewer", assigned_bots: ["*"] })
    expect(rivalInvite.body.status).toBe("invited")
    // Nothing in the inviting accounts: their bots and team are another account's to the person's token.
    expect((await call("GET", `/api/v1/rcs/bots/${bot}`, personToken)).status).toBe(404)
    expect((await call("PATCH", `/api/v1/rcs/team/${invitation}`, personToken, { role: "viewer" })).status).toBe(404)
    // Sign-in still goes straight to their own account: neither inviting account is offered.
    const login = await loginOf(PERSON)
    expect(login.body.need_account_pick).toBeUndefined()
    expect(login.body.user.account_label).toBe("Own")
    // Their pending invitations, listed to them alone.
    const pending = await call("GET", "/api/v1/rcs/team/invitations", personToken)
    expect(pending.status).toBe(200)
    expect(pending.body.invitations.map((i: any) => [i.account_label, i.role, i.assigned_bots])).toEqual([["Team Co", "operator", [bot]], ["Rival", "viewer", ["*"]]])
    expect(pending.body.invitations[0]).toMatchObject({ member_id: invitation, account_id: account })
    expect((await call("GET", "/api/v1/rcs/team/invitations", ownerToken)).body.invitations).toEqual([])
  })

  it("only the invited person answers their invitation; an API key cannot", async () => {
    // The owner who invited, and another account's owner, cannot answer it for them.
    for (const token of [ownerToken, rival.owner]) {
      expect((await call("POST", `/api/v1/rcs/team/invitations/${invitation}/accept`, token)).status).toBe(404)
      expect((await call("POST", `/api/v1/rcs/team/invitations/${invitation}/decline`, token)).status).toBe(404)
    }
    const key = await call("POST", "/api/v1/rcs/api-keys", ownerToken, { name: "invitations", scopes: ["contacts:read"] })
    const refused = await call("GET", "/api/v1/rcs/team/invitations", key.body.raw_key)
    expect(refused.status).toBe(403)
    expect(refused.body.code).toBe("api_key_endpoint_not_allowed")
    expect((await call("POST", "/api/v1/rcs/team/invitations/not-a-uuid/accept", personToken)).status).toBe(404)
    expect((await call("GET", "/api/v1/rcs/team", ownerToken)).body.members.find((m: any) => m.member_id === invitation).status).toBe("invited")
  })

  it("a declined invitation is gone and gives no access", async () => {
    const rivalInvitation = (await call("GET", "/api/v1/rcs/team/invitations", personToken)).body.invitations.find((i: any) => i.account_label === "Rival").member_id
    const declined = await call("POST", `/api/v1/rcs/team/invitations/${rivalInvitation}/decline`, personToken)
    expect(declined.status).toBe(200)
    expect(declined.body).toEqual({ success: true })
    expect((await call("GET", "/api/v1/rcs/team", rival.owner)).body.members.map((m: any) => m.email)).toEqual(["rival@example.com"])
    expect((await call("POST", `/api/v1/rcs/team/invitations/${rivalInvitation}/accept`, personToken)).status).toBe(404)
    const login = await loginOf(PERSON)
    expect(login.body.need_account_pick).toBeUndefined()
    expect(login.body.user.account_label).toBe("Own")
    expect((await call("GET", "/api/v1/rcs/team/invitations", personToken)).body.invitations.map((i: any) => i.account_label)).toEqual(["Team Co"])
  })

  it("an accepted invitation: the person picks the account at sign-in and acts in it with the invitation's role and bots", async () => {
    const accepted = await call("POST", `/api/v1/rcs/team/invitations/${invitation}/accept`, personToken)
    expect(accepted.status).toBe(200)
    expect(accepted.body).toMatchObject({ success: true, status: "active", member_id: invitation, account_id: account, account_label: "Team Co", role: "operator" })
    expect((await call("POST", `/api/v1/rcs/team/invitations/${invitation}/accept`, personToken)).status).toBe(404)
    expect((await call("GET", "/api/v1/rcs/team/invitations", personToken)).body.invitations).toEqual([])
    const listed = (await call("GET", "/api/v1/rcs/team", ownerToken)).body.members.find((m: any) => m.member_id === invitation)
    expect(listed).toMatchObject({ status: "active", user_id: own.userId })

    const login = await loginOf(PERSON)
    expect(login.body.need_account_pick).toBe(true)
    expect(login.body.accounts.map((a: any) => a.label).sort()).toEqual(["Own", "Team Co"])
    const picked = await call("POST", "/api/v1/rcs/auth/select-account", undefined, { session_token: login.body.session_token, account_id: account })
    expect(picked.body).toMatchObject({ role: "operator", user: { member_id: invitation, account_label: "Team Co", assigned_bots: [bot] } })
    const token = picked.body.token
    // An operator: reads its bot and writes, but cannot manage the team.
    expect((await call("GET", `/api/v1/rcs/bots/${bot}`, token)).status).toBe(200)
    expect((await call("POST", "/api/v1/rcs/contact-lists", token, { name: "From the invited operator" })).status).toBe(200)
    expect((await call("POST", "/api/v1/rcs/team", token, { email: "x@example.com", role: "viewer", assigned_bots: ["*"], password: "long enough" })).status).toBe(403)
  })

  it("a pending invitation is not among the accounts sign-in offers, nor can it be picked", async () => {
    // Declined earlier: the owner may invite again.
    expect((await call("POST", "/api/v1/rcs/team", rival.owner, { email: PERSON.email, role: "viewer", assigned_bots: ["*"] })).body.status).toBe("invited")
    const login = await loginOf(PERSON)
    expect(login.body.accounts.map((a: any) => a.label).sort()).toEqual(["Own", "Team Co"])
    const forged = await call("POST", "/api/v1/rcs/auth/select-account", undefined, { session_token: login.body.session_token, account_id: rival.account })
    expect(forged.status).toBe(400)
    expect((await call("GET", "/api/v1/rcs/team", rival.owner)).body.members.find((m: any) => m.email === PERSON.email)).toMatchObject({ status: "invited" })
  })

  it("the owner may change or withdraw an invitation before it is answered", async () => {
    const made = await cli("admin", "create-account", "--email", "later@example.com", "--password", "later password", "--label", "Later")
    const invited = (await call("POST", "/api/v1/rcs/team", ownerToken, { email: "later@example.com", role: "viewer", assigned_bots: ["*"] })).body.member_id
    const changed = await call("PATCH", `/api/v1/rcs/team/${invited}`, ownerToken, { role: "operator" })
    expect(changed.body.member).toMatchObject({ role: "operator", status: "invited", user_id: "" })
    expect(JSON.stringify(changed.body)).not.toContain(made.user_id)
    expect((await call("DELETE", `/api/v1/rcs/team/${invited}`, ownerToken)).status).toBe(200)
    const later = (await loginOf({ email: "later@example.com", password: "later password" })).body.token
    expect((await call("GET", "/api/v1/rcs/team/invitations", later)).body.invitations).toEqual([])
    expect((await call("POST", `/api/v1/rcs/team/invitations/${invited}/accept`, later)).status).toBe(404)
  })
})
