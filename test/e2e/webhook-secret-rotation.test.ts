import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Webhook } from "standardwebhooks"
import { startConsumer } from "../support/consumer.ts"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { openSealed } from "../support/sealed.ts"
import { callJson, cliFor } from "../support/http.ts"

// Rotating a webhook's signing secret (docs/webhooks.md): the new secret is answered once; while
// the overlap lasts (24 h by default, 6 s here) every request carries a signature under each
// secret, then under the new one alone.

const OVERLAP_MS = 6_000

const iso = useIsolation()
const db = useDb(iso)
const env = envFor(iso, { HERALD_WEBHOOK_SECRET_OVERLAP_MS: String(OVERLAP_MS) })
const cli = cliFor(env)
let node: HeraldProcess
let consumer: Awaited<ReturnType<typeof startConsumer>>
const tokens: Record<string, string> = {}
const bots = { one: "", two: "" }
let endpoint = { webhook_id: "", secret: "" }

const call = (method: string, path: string, token?: string, body?: unknown) => callJson(node.url, method, path, token, body)

beforeAll(async () => {
  consumer = await startConsumer()
  node = await startHerald(env)
  const account = (await cli("admin", "create-account", "--email", "rotate@example.com", "--password", "rotate password", "--label", "Rotate", "--plan", "growth")).account_id
  bots.one = (await cli("admin", "create-bot", account, "--name", "One", "--status", "active")).bot_id
  bots.two = (await cli("admin", "create-bot", account, "--name", "Two", "--status", "active")).bot_id
  const login = async (email: string, password: string) => (await call("POST", "/api/v1/rcs/auth/login", undefined, { email, password })).body.token as string
  tokens.owner = await login("rotate@example.com", "rotate password")
  for (const [name, role, scope] of [["viewer", "viewer", ["*"]], ["operator", "operator", ["*"]], ["scopedTwo", "operator", [bots.two]]] as const) {
    expect((await call("POST", "/api/v1/rcs/team", tokens.owner, { email: `${name}@example.com`, role, assigned_bots: scope, password: "member password" })).status).toBe(200)
    tokens[name] = await login(`${name}@example.com`, "member password")
  }
  const created = await call("POST", "/api/v1/rcs/webhooks", tokens.owner, { url: consumer.url("/ok"), events: ["message.sent"], bot_id: bots.one })
  expect(created.status).toBe(200)
  endpoint = { webhook_id: created.body.webhook_id, secret: created.body.secret }
})
afterAll(async () => {
  await node?.kill()
  await consumer?.close()
})

/** A test event to the endpoint, as the consumer received it. */
const delivered = async (webhookId: string) => {
  const sent = await call("POST", `/api/v1/rcs/webhooks/${webhookId}/test`, tokens.owner)
  expect(sent.status).toBe(200)
  return eventually(async () => {
    const found = consumer.received.find((r) => r.headers["webhook-id"] === sent.body.delivery_id)
    expect(found).toBeDefined()
    return found!
  })
}

/** The secrets (by name) each value of the request's webhook-signature verifies with, value by value. */
const verifiers = (request: { body: string; headers: Record<string, unknown> }, secrets: Record<string, string>) =>
  String(request.headers["webhook-signature"]).split(" ").map((value) =>
    Object.entries(secrets).filter(([, secret]) => {
      try {
        new Webhook(secret).verify(request.body, { ...(request.headers as Record<string, string>), "webhook-signature": value })
        return true
      } catch {
        return false
      }
    }).map(([name]) => name)
  )

const rotate = async (webhookId: string, token = tokens.owner) => {
  const r = await call("POST", `/api/v1/rcs/webhooks/${webhookId}/rotate-secret`, token)
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  return r.body as { success: true; webhook_id: string; secret: string; previous_secret_expires_at: string }
}

describe("rotating a webhook's secret", () => {
  it("is for operators and owners who see the endpoint; the unknown endpoint is 404", async () => {
    const path = `/api/v1/rcs/webhooks/${endpoint.webhook_id}/rotate-secret`
    expect(await call("POST", path, tokens.viewer)).toMatchObject({ status: 403, body: { code: "forbidden" } })
    expect(await call("POST", path, tokens.scopedTwo)).toMatchObject({ status: 403, body: { code: "bot_not_in_scope", message: "bot not in scope" } })
    expect((await call("POST", "/api/v1/rcs/webhooks/00000000-0000-4000-8000-000000000000/rotate-secret", tokens.owner)).status).toBe(404)
    // Nothing changed: the endpoint still signs with its first secret alone.
    const [row] = await db<{ secret: string; previous_secret: string | null }>("SELECT secret, previous_secret FROM webhooks WHERE webhook_id = $1", [endpoint.webhook_id])
    expect({ secret: openSealed(row!.secret), previous_secret: row!.previous_secret }).toEqual({ secret: endpoint.secret, previous_secret: null })
  })

  it("answers a new secret once; both secrets sign during the overlap, then the new one alone", async () => {
    const before = Date.now()
    const rotated = await rotate(endpoint.webhook_id, tokens.operator)
    expect(rotated.webhook_id).toBe(endpoint.webhook_id)
    expect(rotated.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32,}$/)
    expect(rotated.secret).not.toBe(endpoint.secret)
    const expiresAt = Date.parse(rotated.previous_secret_expires_at)
    expect(expiresAt).toBeGreaterThanOrEqual(before + OVERLAP_MS - 1_000)
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + OVERLAP_MS + 1_000)
    // Shown once: no read carries a secret.
    expect(JSON.stringify((await call("GET", "/api/v1/rcs/webhooks", tokens.owner)).body)).not.toContain("whsec_")
    const secrets = { old: endpoint.secret, new: rotated.secret }

    const during = await delivered(endpoint.webhook_id)
    expect(Number(during.headers["webhook-timestamp"]) * 1000).toBeLessThan(expiresAt)
    expect(verifiers(during, secrets)).toEqual([["new"], ["old"]])
    // A consumer holding either secret accepts the request as it came.
    for (const secret of [secrets.old, secrets.new]) {
      expect(new Webhook(secret).verify(during.body, during.headers as Record<string, string>)).toMatchObject({ type: "webhook.test" })
    }

    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 200))
    const after = await delivered(endpoint.webhook_id)
    expect(verifiers(after, secrets)).toEqual([["new"]])
    expect(() => new Webhook(secrets.old).verify(after.body, after.headers as Record<string, string>)).toThrow()
    endpoint = { ...endpoint, secret: rotated.secret }
  }, 30_000)

  it("a second rotation inside the overlap leaves only the secret it replaced signing beside the newest", async () => {
    const first = await rotate(endpoint.webhook_id)
    const second = await rotate(endpoint.webhook_id)
    const request = await delivered(endpoint.webhook_id)
    expect(verifiers(request, { original: endpoint.secret, first: first.secret, second: second.secret })).toEqual([["second"], ["first"]])
    endpoint = { ...endpoint, secret: second.secret }
  })
})

describe("rotating the developer webhook's secret", () => {
  it("is the owner's, under /api/v1/app/developer/webhook/rotate-secret, and signs as an RCS endpoint's does", async () => {
    const path = "/api/v1/app/developer/webhook/rotate-secret"
    expect((await call("POST", path, tokens.owner)).status).toBe(404)
    const set = await call("PUT", "/api/v1/app/developer/webhook", tokens.owner, { url: consumer.url("/ok") })
    expect(set.status).toBe(200)
    expect((await call("POST", path, tokens.operator)).status).toBe(403)
    const rotated = await call("POST", path, tokens.owner)
    expect(rotated.status).toBe(200)
    expect(rotated.body).toMatchObject({ success: true, webhook_id: set.body.webhook_id, secret: expect.stringMatching(/^whsec_/) })
    // A later PUT keeps the rotated secret (and its overlap).
    expect((await call("PUT", "/api/v1/app/developer/webhook", tokens.owner, { url: consumer.url("/ok?moved") })).body.secret).toBeUndefined()
    const request = await delivered(set.body.webhook_id)
    expect(verifiers(request, { old: set.body.secret, new: rotated.body.secret })).toEqual([["new"], ["old"]])
  })
})

it("every event its consumer received is what the API reference's webhooks document (strictly)", () => {
  expect(consumer.received.length).toBeGreaterThan(0)
  expect(consumer.undocumented).toEqual([])
})
