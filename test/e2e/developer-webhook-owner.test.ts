import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { startConsumer } from "../support/consumer.ts"
import { putDeadLetter } from "../support/deadLetters.ts"
import { useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"

// The developer webhook (Settings, Developer) is the owner's: /api/v1/app/developer/webhook is
// owner-only, and so is every RCS webhook route that reaches the same row (issue 33, item 4).
// A member cannot change its URL, rotate its secret (and read the new one), delete it, send it a
// test, read its attempts or replay its dead letters, nor see it listed.

const iso = useIsolation()
const db = useDb(iso)
const env = envFor(iso)
const cli = cliFor(env)
let node: HeraldProcess
let consumer: Awaited<ReturnType<typeof startConsumer>>
const tokens = { owner: "", operator: "", viewer: "" }
let apiKey = ""
let developer = { webhook_id: "", secret: "" }
let rcsEndpoint = ""
const DEAD = "wd_00000000-0000-4000-8000-00000000dead"

const call = (method: string, path: string, token?: string, body?: unknown) => callJson(node.url, method, path, token, body)

/** The developer webhook's row as stored: what a refused request must leave as it was. */
const stored = async () =>
  (await db<Record<string, unknown>>("SELECT url, secret, previous_secret, active, deleted_at FROM webhooks WHERE webhook_id = $1", [developer.webhook_id]))[0]

beforeAll(async () => {
  consumer = await startConsumer()
  node = await startHerald(env)
  await cli("admin", "create-account", "--email", "owner@dev-hook.io", "--password", "owner password", "--label", "DevHook", "--plan", "growth")
  const login = async (email: string, password: string) => (await call("POST", "/api/v1/rcs/auth/login", undefined, { email, password })).body.token as string
  tokens.owner = await login("owner@dev-hook.io", "owner password")
  for (const role of ["operator", "viewer"] as const) {
    expect((await call("POST", "/api/v1/rcs/team", tokens.owner, { email: `${role}@dev-hook.io`, role, assigned_bots: ["*"], password: "member password" })).status).toBe(200)
    tokens[role] = await login(`${role}@dev-hook.io`, "member password")
  }
  apiKey = (await call("POST", "/api/v1/rcs/api-keys", tokens.owner, { name: "hooks", scopes: ["webhooks:write"] })).body.raw_key
  const put = await call("PUT", "/api/v1/app/developer/webhook", tokens.owner, { url: consumer.url("/dev") })
  expect(put.status).toBe(200)
  developer = { webhook_id: put.body.webhook_id, secret: put.body.secret }
  const rcs = await call("POST", "/api/v1/rcs/webhooks", tokens.owner, { url: consumer.url("/rcs"), events: ["message.sent"], bot_id: null })
  expect(rcs.status).toBe(200)
  rcsEndpoint = rcs.body.webhook_id
  await putDeadLetter(db, DEAD, developer.webhook_id)
})
afterAll(async () => {
  await node?.kill()
  await consumer?.close()
})

describe("the developer webhook through the RCS webhook routes", () => {
  it("is listed (and in the stats and the dead letters) for the owner's session alone", async () => {
    const ids = async (path: string, token: string, field: string) => {
      const r = await call("GET", path, token)
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      return (r.body[field] as Array<{ webhook_id: string }>).map((w) => w.webhook_id)
    }
    expect(await ids("/api/v1/rcs/webhooks", tokens.owner, "webhooks")).toEqual(expect.arrayContaining([developer.webhook_id, rcsEndpoint]))
    expect(await ids("/api/v1/rcs/webhooks/stats", tokens.owner, "endpoints")).toContain(developer.webhook_id)
    expect(await ids("/api/v1/rcs/webhooks/dead-letter", tokens.owner, "items")).toContain(developer.webhook_id)
    for (const who of ["operator", "viewer"] as const) {
      expect(await ids("/api/v1/rcs/webhooks", tokens[who], "webhooks"), who).toEqual([rcsEndpoint])
      expect(await ids("/api/v1/rcs/webhooks/stats", tokens[who], "endpoints"), who).toEqual([rcsEndpoint])
    }
    expect(await ids("/api/v1/rcs/webhooks/dead-letter", tokens.operator, "items")).toEqual([])
    // A key reads the list with webhooks:read, but it is no owner's session either.
    expect(await ids("/api/v1/rcs/webhooks", apiKey, "webhooks")).toEqual([rcsEndpoint])
  })

  it("answers an operator 403 forbidden on every route that reaches it, and changes nothing", async () => {
    const before = await stored()
    const path = `/api/v1/rcs/webhooks/${developer.webhook_id}`
    const routes: Array<[string, string, unknown?]> = [
      ["PATCH", path, { url: consumer.url("/stolen") }],
      ["PATCH", path, { active: false }],
      ["POST", `${path}/rotate-secret`],
      ["POST", `${path}/test`],
      ["GET", `${path}/deliveries`],
      ["POST", `/api/v1/rcs/webhooks/dead-letter/${DEAD}/replay`],
      ["DELETE", path]
    ]
    for (const [method, route, body] of routes) {
      const r = await call(method, route, tokens.operator, body)
      expect({ route: `${method} ${route}`, status: r.status, code: r.body.code }).toEqual({ route: `${method} ${route}`, status: 403, code: "forbidden" })
      expect(JSON.stringify(r.body)).not.toContain("whsec_")
    }
    // A viewer is refused as well (by its role on the writes; as not the owner on the read).
    for (const [method, route, body] of routes) {
      expect((await call(method, route, tokens.viewer, body)).status, `${method} ${route}`).toBe(403)
    }
    expect(await stored()).toEqual(before)
    expect(await db("SELECT 1 FROM webhook_dead_letters WHERE delivery_id = $1", [DEAD])).toHaveLength(1)
    expect(consumer.received.filter((r) => r.path === "/dev")).toEqual([])
    // The operator keeps its rights on the account's other endpoints.
    expect((await call("PATCH", `/api/v1/rcs/webhooks/${rcsEndpoint}`, tokens.operator, { active: true })).status).toBe(200)
  })

  it("lets the owner do all of it", async () => {
    const path = `/api/v1/rcs/webhooks/${developer.webhook_id}`
    expect((await call("PATCH", path, tokens.owner, { url: consumer.url("/dev2") })).status).toBe(200)
    const rotated = await call("POST", `${path}/rotate-secret`, tokens.owner)
    expect(rotated.status).toBe(200)
    expect(rotated.body.secret).toMatch(/^whsec_/)
    expect((await call("POST", `${path}/test`, tokens.owner)).status).toBe(200)
    expect((await call("GET", `${path}/deliveries`, tokens.owner)).status).toBe(200)
    expect((await call("POST", `/api/v1/rcs/webhooks/dead-letter/${DEAD}/replay`, tokens.owner)).status).toBe(200)
    expect((await call("DELETE", path, tokens.owner)).status).toBe(200)
    expect((await call("GET", "/api/v1/app/developer/webhook", tokens.owner)).status).toBe(404)
  })
})
