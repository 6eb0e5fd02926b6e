import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import WebSocket from "ws"
import { useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor, ownerSession } from "../support/http.ts"

// What a person trying Herald meets first (issue 34, items 6 and 13): the account's secret key
// sent with the other surface's scheme (Bearer to /api/v1/public, Basic to /api/v1/app and
// GraphQL) is taken, and anything the key cannot be read from gets a 401 naming the scheme the
// surface takes, never "Invalid or revoked" for a good key; a wrong key on the GraphQL socket
// closes 4403 with a reason; /favicon.ico is an icon; GET /rcs/api-keys says what each scope
// reaches today; the playground link of docs/quickstart.md answers.

const iso = useIsolation()
let node: HeraldProcess
let jwt = ""
let key = ""
let rcsKey = ""

const basic64 = (raw: string) => Buffer.from(`${raw}:`).toString("base64")
/** A GET with the Authorization header exactly as given (none when undefined). */
const get = async (path: string, authorization?: string) => {
  const r = await fetch(`${node.url}${path}`, { headers: authorization === undefined ? {} : { authorization } })
  return { status: r.status, body: (await r.json()) as any }
}

beforeAll(async () => {
  const env = envFor(iso, { LOG_LEVEL: "warning" })
  node = await startHerald(env)
  await cliFor(env)("admin", "create-account", "--email", "owner@first.io", "--password", "owner password", "--label", "First", "--plan", "growth")
  ;({ jwt, key } = await ownerSession(node.url, "owner@first.io", "owner password"))
  expect(key).toMatch(/^sk_live_/)
  const made = await callJson(node.url, "POST", "/api/v1/rcs/api-keys", jwt, { name: "reads", scopes: ["broadcasts:read"] })
  expect(made.status).toBe(200)
  rcsKey = made.body.raw_key
}, 300_000)
afterAll(async () => {
  await node?.kill()
})

describe("one secret key, both schemes", () => {
  it("/api/v1/public takes the key as Basic (raw or base64 of key:) and as Bearer", async () => {
    for (const authorization of [`Basic ${key}`, `Basic ${basic64(key)}`, `Bearer ${key}`]) {
      const r = await get("/api/v1/public/templates", authorization)
      expect(r.status, `${authorization.split(" ")[0]}: ${JSON.stringify(r.body)}`).not.toBe(401)
      expect(r.status).toBeLessThan(500)
    }
  })

  it("/api/v1/app and GraphQL take the key as Bearer and as Basic", async () => {
    for (const authorization of [`Bearer ${key}`, `Basic ${key}`, `Basic ${basic64(key)}`]) {
      const me = await get("/api/v1/app/me", authorization)
      expect(me.status, JSON.stringify(me.body)).toBe(200)
      expect(me.body.account.label).toBe("First")
      const gql = await callJson(node.url, "POST", "/api/v1/graphql", authorization, { query: "{ me { label } }" })
      expect(gql.status, JSON.stringify(gql.body)).toBe(200)
      expect(gql.body.data).toEqual({ me: { label: "First" } })
    }
  })

  it("a header the key cannot be read from gets 401 invalid_api_key naming the surface's scheme", async () => {
    const cases: Array<[string, string, string | undefined, RegExp]> = [
      ["/api/v1/public/templates", "Basic", `Bearer ${jwt}`, /uses the Bearer scheme with a credential that is not a secret key/],
      ["/api/v1/public/templates", "Basic", undefined, /header is missing/],
      ["/api/v1/public/templates", "Basic", `Token ${key}`, /uses the Token scheme/],
      ["/api/v1/app/me", "Bearer", `Basic ${Buffer.from("owner@first.io:owner password").toString("base64")}`, /uses the Basic scheme/],
      ["/api/v1/app/me", "Bearer", `Bearer ${jwt}`, /not a secret key/],
      ["/api/v1/app/me", "Bearer", key, /no scheme/]
    ]
    for (const [path, scheme, authorization, detail] of cases) {
      const r = await get(path, authorization)
      expect(r.status, `${path} ${authorization}`).toBe(401)
      expect(r.body).toMatchObject({ success: false, code: "invalid_api_key", message: `This API takes Authorization: ${scheme} <secret key> (sk_live_…)` })
      expect(r.body.detail).toMatch(detail)
    }
    const gql = await callJson(node.url, "POST", "/api/v1/graphql", `Bearer ${jwt}`, { query: "{ me { label } }" })
    expect(gql.status).toBe(401)
    expect(gql.body.errors[0].extensions.code).toBe("UNAUTHENTICATED")
    expect(gql.body.errors[0].message).toContain("Authorization: Bearer <secret key>")
  })

  it("a secret key no account has is still Invalid or revoked, whatever the scheme", async () => {
    const unknown = `sk_live_${"0".repeat(40)}`
    for (const [path, authorization] of [["/api/v1/public/templates", `Bearer ${unknown}`], ["/api/v1/app/me", `Basic ${unknown}`]] as const) {
      const r = await get(path, authorization)
      expect(r.status).toBe(401)
      expect(r.body).toMatchObject({ code: "invalid_api_key", message: "Invalid or revoked API key" })
    }
  })

  it("the RCS API: a secret key is told to be the wrong credential; an API key as Basic is told the scheme", async () => {
    const secret = await get("/api/v1/rcs/bots", `Bearer ${key}`)
    expect(secret.status).toBe(401)
    expect(secret.body).toMatchObject({ code: "unauthorized", message: "unauthorized" })
    expect(secret.body.detail).toContain("secret key (sk_live_…)")
    expect(secret.body.detail).toContain("rcs_pk_live_")
    const basic = await get("/api/v1/rcs/bots", `Basic ${rcsKey}`)
    expect(basic.status).toBe(401)
    expect(basic.body.detail).toContain("takes Bearer")
    expect((await get("/api/v1/rcs/bots", `Bearer ${rcsKey}`)).status).toBe(200)
  })
})

describe("the GraphQL socket", () => {
  const closeOfInit = (authorization: string) =>
    new Promise<{ code: number; reason: string }>((resolve, reject) => {
      const socket = new WebSocket(`${node.url.replace(/^http/, "ws")}/api/v1/graphql`, "graphql-transport-ws")
      socket.once("error", reject)
      socket.once("open", () => socket.send(JSON.stringify({ type: "connection_init", payload: { Authorization: authorization } })))
      socket.once("close", (code, reason) => resolve({ code, reason: String(reason) }))
    })

  it("a wrong key closes with 4403 and a reason saying why", async () => {
    const unknown = await closeOfInit(`Bearer sk_live_${"1".repeat(40)}`)
    expect(unknown.code).toBe(4403)
    expect(unknown.reason).toBe("Forbidden: invalid or revoked secret key")
    const wrongKind = await closeOfInit(`Bearer ${jwt}`)
    expect(wrongKind.code).toBe(4403)
    expect(wrongKind.reason).toBe(`Forbidden: connection_init's payload needs {"Authorization": "Bearer <secret key>"} (sk_live_…)`)
  })
})

describe("small things", () => {
  it("GET /favicon.ico is an image", async () => {
    const r = await fetch(`${node.url}/favicon.ico`)
    expect(r.status).toBe(200)
    expect(r.headers.get("content-type")).toMatch(/^image\//)
    expect(await r.text()).toContain("<svg")
  })

  it("GET /rcs/api-keys lists the contract's scopes and what each reaches today: a write scope its read half", async () => {
    const r = await get("/api/v1/rcs/api-keys", `Bearer ${jwt}`)
    expect(r.status).toBe(200)
    expect(r.body.available_scopes).toEqual(["broadcasts:read", "broadcasts:write", "contacts:read", "contacts:write", "auto_replies:read", "webhooks:read", "webhooks:write"])
    expect(r.body.grants_today).toEqual({
      "broadcasts:read": ["broadcasts:read"],
      "broadcasts:write": ["broadcasts:read"],
      "contacts:read": ["contacts:read"],
      "contacts:write": ["contacts:read"],
      "auto_replies:read": ["auto_replies:read"],
      "webhooks:read": ["webhooks:read"],
      "webhooks:write": ["webhooks:read"]
    })
  })

  it("the playground path docs/quickstart.md names answers with the playground", async () => {
    const quickstart = readFileSync(new URL("../../docs/quickstart.md", import.meta.url), "utf8")
    const named = [...quickstart.matchAll(/playground at `([^`]+)`/g)].map((m) => m[1]!)
    expect(named.length).toBeGreaterThan(0)
    for (const path of named) {
      const r = await fetch(`${node.url}${path}`)
      expect(r.status, path).toBe(200)
      expect(await r.text()).toContain("Herald GraphQL playground")
    }
  })
})
