import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type ConsoleBrowser, consoleBrowser, openLive } from "../support/consoleBrowser.ts"
import { useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"

// Rights taken away inside the console (issue 33): a member removed, or whose password changed,
// loses the live stream they had open, on whichever node it runs, within seconds; the operator
// view's sign-out ends its cookie everywhere, also a copy of it; and the cookies are Secure with
// the __Host- prefix because the deployment's public URL is https, not because of a Host header.
// Two API nodes of one deployment served at https://console.example.com (TLS ends in front of
// them; the test talks to them in plain http, as such a proxy does).

const OPS_TOKEN = "ops-token-for-the-revocation-test-0123456789"
const PASSWORD = "revocation test password"
const PUBLIC_URL = "https://console.example.com"
const iso = useIsolation()
let nodeA: HeraldProcess
let nodeB: HeraldProcess
let owner = ""
let bot = ""

const rest = (method: string, path: string, token?: string, body?: unknown) => callJson(nodeA.url, method, path, token, body)
const browser = (base: () => string) => consoleBrowser(base, PASSWORD)

/** A new viewer of the account, added by the owner; their member id and REST token. */
const addMember = async (email: string) => {
  expect((await rest("POST", "/api/v1/rcs/team", owner, { email, role: "viewer", assigned_bots: ["*"], password: PASSWORD })).status).toBe(200)
  const memberId = (await rest("GET", "/api/v1/rcs/team", owner)).body.members.find((m: any) => m.email === email).member_id as string
  const token = (await rest("POST", "/api/v1/rcs/auth/login", undefined, { email, password: PASSWORD })).body.token as string
  return { memberId, token }
}

/** Whether the stream ends within `ms` (it should within seconds; a stream kept open keeps sending keep-alives forever). */
const endsWithin = (live: Awaited<ReturnType<typeof openLive>>, ms: number) =>
  Promise.race([live.ended.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))])

/** A member signed in to the console on node B with their live stream open there. */
const watching = async (email: string) => {
  const b = browser(() => nodeB.url)
  expect((await b.signIn(email)).body.status).toBe("signed_in")
  const live = await openLive(nodeB.url, b.cookieHeader())
  expect(live.response.status).toBe(200)
  return { b, live }
}

beforeAll(async () => {
  const env = envFor(iso, { HERALD_PUBLIC_URL: PUBLIC_URL, HERALD_OPS_TOKEN: OPS_TOKEN })
  const cli = cliFor(env)
  // One after the other: the first creates and migrates the database.
  nodeA = await startHerald(env)
  nodeB = await startHerald({ ...env, HERALD_ROLE: "api" })
  const account = (await cli("admin", "create-account", "--email", "owner@revocation.test", "--password", PASSWORD, "--label", "Revoked", "--plan", "growth")).account_id
  bot = (await cli("admin", "create-bot", account, "--name", "Only", "--status", "active")).bot_id
  owner = (await rest("POST", "/api/v1/rcs/auth/login", undefined, { email: "owner@revocation.test", password: PASSWORD })).body.token
})
afterAll(async () => {
  await Promise.all([nodeA?.kill(), nodeB?.kill()])
})

describe("the console's cookies", () => {
  it("on an https public URL: Secure, __Host- prefixed, Path=/ and no Domain, whatever Host the request named; a cookie without the prefix is not read", async () => {
    const b = browser(() => nodeA.url)
    // fetch names 127.0.0.1 as the Host: a name on this machine decides nothing either.
    const signedIn = await b.signIn("owner@revocation.test")
    expect(signedIn.body.status).toBe("signed_in")
    const cookie = signedIn.setCookies.find((c) => c.startsWith("__Host-herald_session="))!.split("; ")
    for (const attribute of ["Path=/", "HttpOnly", "Secure", "SameSite=Strict"]) expect(cookie).toContain(attribute)
    expect(cookie.some((a) => a.startsWith("Domain="))).toBe(false)
    expect(signedIn.setCookies.some((c) => c.startsWith("herald_session="))).toBe(false)
    expect((await b.call("GET", "/console/api/session")).body.signed_in).toBe(true)
    expect((await b.call("GET", "/console/api/v1/rcs/bots", undefined, { on: nodeB.url })).status).toBe(200)

    // The same id under the unprefixed name (as a subdomain or a plain-http page could set it) opens nothing.
    const id = b.jar.get("__Host-herald_session")!
    const plain = await fetch(`${nodeA.url}/console/api/session`, { headers: { cookie: `herald_session=${id}` } })
    expect(await plain.json()).toEqual({ success: true, signed_in: false })

    const ops = browser(() => nodeA.url)
    const opsCookie = (await ops.call("POST", "/console/api/ops/session", { token: OPS_TOKEN })).setCookies.find((c) => c.startsWith("__Host-herald_ops="))!
    for (const attribute of ["Path=/", "HttpOnly", "Secure", "SameSite=Strict"]) expect(opsCookie.split("; ")).toContain(attribute)
  })
})

describe("the live stream ends when the session's rights go", () => {
  it("a removed member's stream ends, on the node that did not remove them; their REST calls are 401", async () => {
    const member = await addMember("removed@revocation.test")
    const { b, live } = await watching("removed@revocation.test")
    const stays = await watching("owner@revocation.test")
    expect(await endsWithin(live, 1_000)).toBe(false)

    expect((await rest("DELETE", `/api/v1/rcs/team/${member.memberId}`, owner)).status).toBe(200)
    const ended = await endsWithin(live, 30_000)
    await live.close()
    expect(ended).toBe(true)
    expect((await b.call("GET", "/console/api/v1/rcs/bots")).status).toBe(401)
    expect((await fetch(`${nodeB.url}/console/api/live`, { headers: { cookie: b.cookieHeader() } })).status).toBe(401)
    // The owner's stream, on the same account and node, goes on.
    expect(stays.live.isEnded()).toBe(false)
    await stays.live.close()
  }, 90_000)

  it("a member whose password changed: their stream ends", async () => {
    const member = await addMember("changer@revocation.test")
    const { b, live } = await watching("changer@revocation.test")
    expect(await endsWithin(live, 1_000)).toBe(false)

    const changed = await rest("POST", "/api/v1/rcs/auth/password", member.token, { current_password: PASSWORD, new_password: "a brand new password" })
    expect(changed.status).toBe(200)
    const ended = await endsWithin(live, 30_000)
    await live.close()
    expect(ended).toBe(true)
    expect((await b.call("GET", "/console/api/v1/rcs/bots")).status).toBe(401)
  }, 90_000)

  it("a member whose bot scope changed: their stream ends, and the browser's reconnection gets the new scope", async () => {
    const member = await addMember("narrowed@revocation.test")
    const { b, live } = await watching("narrowed@revocation.test")
    expect((await rest("PATCH", `/api/v1/rcs/team/${member.memberId}`, owner, { assigned_bots: [bot] })).status).toBe(200)
    const ended = await endsWithin(live, 30_000)
    await live.close()
    expect(ended).toBe(true)
    // Still signed in: the stream opens again, under the scope the session has now.
    const again = await openLive(nodeB.url, b.cookieHeader())
    expect(again.response.status).toBe(200)
    expect((await b.call("GET", "/console/api/session")).body.session.assigned_bots).toEqual([bot])
    await again.close()
  }, 90_000)
})

describe("the operator view's sign-out", () => {
  const cluster = (b: ConsoleBrowser, on: string) => b.call("GET", "/console/api/ops/cluster", undefined, { on })

  it("revokes the cookie: after sign-out the old cookie is refused on every node", async () => {
    const b = browser(() => nodeA.url)
    expect((await b.call("POST", "/console/api/ops/session", { token: OPS_TOKEN })).status).toBe(200)
    const name = [...b.jar.keys()].find((k) => k.endsWith("herald_ops"))!
    const copied = b.jar.get(name)!
    expect((await cluster(b, nodeA.url)).status).toBe(200)
    expect((await cluster(b, nodeB.url)).status).toBe(200)

    const out = await b.call("DELETE", "/console/api/ops/session")
    expect(out.status).toBe(200)
    expect(out.setCookies.find((c) => c.startsWith(`${name}=`))).toMatch(/Max-Age=0/)
    // The cookie copied before sign-out, sent again: refused on both nodes.
    b.jar.set(name, copied)
    for (const node of [nodeA, nodeB]) {
      const refused = await cluster(b, node.url)
      expect(refused.status).toBe(401)
      expect(refused.body.code).toBe("unauthorized")
    }
    expect((await b.call("GET", "/console/api/ops/session")).body).toEqual({ success: true, signed_in: false })

    // Signing in again opens a new session; its sign-out needs the view's CSRF token, as every change does.
    expect((await b.call("POST", "/console/api/ops/session", { token: OPS_TOKEN })).status).toBe(200)
    expect((await b.call("DELETE", "/console/api/ops/session", undefined, { csrf: false })).status).toBe(403)
    expect((await cluster(b, nodeB.url)).status).toBe(200)
  })
})
