import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Webhook } from "standardwebhooks"
import { startConsumer } from "../support/consumer.ts"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"
import { freePort } from "../support/TcpProxy.ts"

// Webhooks end to end against a real local consumer: the failing endpoints are fired in
// beforeAll, so their 36-second schedules run while the quicker tests do.

const iso = useIsolation()
const db = useDb(iso)
const env = envFor(iso, { HERALD_WEBHOOK_TIMEOUT_MS: "1000" })
const cli = cliFor(env)
let node: HeraldProcess
let consumer: Awaited<ReturnType<typeof startConsumer>>
const tokens: Record<string, string> = {}
const bots = { one: "", two: "" }
const endpoints: Record<string, { webhook_id: string; secret: string; url: string }> = {}
const firstDeliveries: Record<string, string> = {}

const call = (method: string, path: string, token?: string, body?: unknown) => callJson(node.url, method, path, token, body)

const FAILING = ["status500", "status302", "status404", "refused", "timeout", "unresolvable", "deleted"] as const

beforeAll(async () => {
  consumer = await startConsumer()
  node = await startHerald(env)
  const account = (await cli("admin", "create-account", "--email", "hooks@example.com", "--password", "hooks password", "--label", "Hooks", "--plan", "growth")).account_id
  bots.one = (await cli("admin", "create-bot", account, "--name", "One", "--status", "active")).bot_id
  bots.two = (await cli("admin", "create-bot", account, "--name", "Two", "--status", "active")).bot_id
  const login = async (email: string, password: string) => (await call("POST", "/api/v1/rcs/auth/login", undefined, { email, password })).body.token as string
  tokens.owner = await login("hooks@example.com", "hooks password")
  for (const [name, role, scope] of [["viewer", "viewer", ["*"]], ["scopedOne", "operator", [bots.one]], ["scopedTwo", "operator", [bots.two]]] as const) {
    const added = await call("POST", "/api/v1/rcs/team", tokens.owner, { email: `${name}@example.com`, role, assigned_bots: scope, password: "member password" })
    expect(added.status).toBe(200)
    tokens[name] = await login(`${name}@example.com`, "member password")
  }
  const closedPort = await freePort()
  const specs: Record<string, [string, string | null]> = {
    ok: [consumer.url("/ok"), null],
    status500: [consumer.url("/status/500"), bots.one],
    status302: [consumer.url("/status/302"), bots.two],
    status404: [consumer.url("/status/404"), null],
    refused: [`http://127.0.0.1:${closedPort}/hook`, bots.one],
    timeout: [consumer.url("/hang"), bots.one],
    unresolvable: ["http://herald-no-such-host.invalid/hook", bots.two],
    deleted: [consumer.url("/status/503"), bots.one]
  }
  for (const [name, [url, bot]] of Object.entries(specs)) {
    const created = await call("POST", "/api/v1/rcs/webhooks", tokens.owner, { url, events: ["message.sent", "message.failed"], bot_id: bot })
    expect(created.status).toBe(200)
    endpoints[name] = { webhook_id: created.body.webhook_id, secret: created.body.secret, url }
  }
  for (const name of FAILING) {
    firstDeliveries[name] = (await call("POST", `/api/v1/rcs/webhooks/${endpoints[name]!.webhook_id}/test`, tokens.owner)).body.delivery_id
  }
})
afterAll(async () => {
  await node?.kill()
  await consumer?.close()
})

const attemptsOf = async (name: string, token = tokens.owner) =>
  (await call("GET", `/api/v1/rcs/webhooks/${endpoints[name]!.webhook_id}/deliveries?limit=500`, token)).body.deliveries as Array<any>

/** Waits (once) until every failing endpoint's delivery has its fourth attempt. */
let deadYet: Promise<void> | undefined
const allDead = () =>
  deadYet ??= eventually(async () => {
    for (const name of FAILING) expect((await attemptsOf(name)).length).toBe(4)
  }, { timeoutMs: 70_000, intervalMs: 500 })

describe("subscriptions", () => {
  it("are created by operators with a whsec_ secret shown once; listed without it", async () => {
    expect(endpoints.ok!.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32,}$/)
    const list = await call("GET", "/api/v1/rcs/webhooks", tokens.viewer)
    expect(list.status).toBe(200)
    const ok = list.body.webhooks.find((w: any) => w.webhook_id === endpoints.ok!.webhook_id)
    expect(ok).toMatchObject({ url: endpoints.ok!.url, active: true, bot_id: null, events: ["message.sent", "message.failed"] })
    expect(JSON.stringify(list.body)).not.toContain("whsec_")
    expect((await call("POST", "/api/v1/rcs/webhooks", tokens.viewer, { url: consumer.url("/ok"), events: ["message.sent"] })).status).toBe(403)
  })

  it("refuses bad URLs, unknown events and other accounts' bots with 400, writing nothing", async () => {
    const before = (await db("SELECT count(*)::int AS n FROM webhooks"))[0]!.n
    for (const body of [
      { url: "ftp://example.com/hook", events: ["message.sent"] },
      { url: "https://user:pw@example.com/hook", events: ["message.sent"] },
      { url: "not a url", events: ["message.sent"] },
      { url: "https://example.com/hook", events: [] },
      { url: "https://example.com/hook", events: ["message.exploded"] },
      { url: "https://example.com/hook", events: ["message.sent"], bot_id: "5b0e7a8c-8f1e-4a53-9f6a-1f2d3c4b5a69" }
    ]) {
      const r = await call("POST", "/api/v1/rcs/webhooks", tokens.owner, body)
      expect(r.status, JSON.stringify(body)).toBe(400)
      expect(r.body.code).toBe("invalid_request")
    }
    expect((await db("SELECT count(*)::int AS n FROM webhooks"))[0]!.n).toBe(before)
  })

  it("a member scoped to bots manages only endpoints of its bots", async () => {
    expect((await call("POST", "/api/v1/rcs/webhooks", tokens.scopedOne, { url: consumer.url("/ok"), events: ["message.sent"], bot_id: bots.two })).body.message).toBe("bot not in scope")
    expect((await call("POST", "/api/v1/rcs/webhooks", tokens.scopedOne, { url: consumer.url("/ok"), events: ["message.sent"] })).status).toBe(403)
    const own = await call("POST", "/api/v1/rcs/webhooks", tokens.scopedOne, { url: consumer.url("/ok"), events: ["message.sent"], bot_id: bots.one })
    expect(own.status).toBe(200)
    const listed = (await call("GET", "/api/v1/rcs/webhooks", tokens.scopedOne)).body.webhooks.map((w: any) => w.webhook_id)
    expect(listed).toContain(own.body.webhook_id)
    expect(listed).not.toContain(endpoints.ok!.webhook_id)
    expect(listed).not.toContain(endpoints.status302!.webhook_id)
    expect((await call("PATCH", `/api/v1/rcs/webhooks/${own.body.webhook_id}`, tokens.scopedOne, { active: false })).body.webhook.active).toBe(false)
    expect((await call("DELETE", `/api/v1/rcs/webhooks/${own.body.webhook_id}`, tokens.scopedOne)).status).toBe(200)
    expect((await call("DELETE", `/api/v1/rcs/webhooks/${own.body.webhook_id}`, tokens.scopedOne)).status).toBe(404)
  })
})

describe("delivery", () => {
  it("signs each request with the Standard Webhooks scheme; the envelope carries type, data, occurred_at and delivery_id", async () => {
    const sent = await call("POST", `/api/v1/rcs/webhooks/${endpoints.ok!.webhook_id}/test`, tokens.owner)
    expect(sent.body.delivery_id).toMatch(/^wd_[0-9a-f-]{36}$/)
    const request = await eventually(async () => {
      const found = consumer.received.find((r) => r.headers["webhook-id"] === sent.body.delivery_id)
      expect(found).toBeDefined()
      return found!
    })
    const verified = new Webhook(endpoints.ok!.secret).verify(request.body, request.headers as Record<string, string>) as any
    expect(verified).toMatchObject({ type: "webhook.test", delivery_id: sent.body.delivery_id, data: { webhook_id: endpoints.ok!.webhook_id } })
    expect(new Date(verified.occurred_at).toISOString()).toBe(verified.occurred_at)
    expect(() => new Webhook(endpoints.status500!.secret).verify(request.body, request.headers as Record<string, string>)).toThrow()
    const rows = await eventually(async () => {
      const attempts = (await attemptsOf("ok")).filter((a) => a.delivery_id === sent.body.delivery_id)
      expect(attempts).toHaveLength(1)
      return attempts
    })
    expect(rows[0]).toMatchObject({ attempt: 1, status_code: 200, event_type: "webhook.test", url: endpoints.ok!.url, response_snippet: "ok" })
    expect(rows[0].took_ms).toBeGreaterThanOrEqual(0)
  })

  it("retries 1 s, 5 s and 30 s after each failure; 3xx, 4xx, 5xx and no answer (refused, timeout, unresolvable) all fail", async () => {
    await allDead()
    for (const name of FAILING) {
      const attempts = (await attemptsOf(name)).filter((a) => a.delivery_id === firstDeliveries[name]).sort((a, b) => a.attempt - b.attempt)
      expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4])
      const gaps = [1, 2, 3].map((i) => Date.parse(attempts[i].sent_at) - (Date.parse(attempts[i - 1].sent_at) + attempts[i - 1].took_ms))
      // Never early; late by at most 1.5 s (timers on a loaded 2-core machine run late, and the
      // three gaps are seconds apart, so this still tells each step of the schedule apart).
      for (const [i, expected] of [1_000, 5_000, 30_000].entries()) {
        expect(gaps[i]! - expected, `${name}: gap ${i + 1} was ${gaps[i]} ms`).toBeGreaterThanOrEqual(-300)
        expect(gaps[i]! - expected, `${name}: gap ${i + 1} was ${gaps[i]} ms`).toBeLessThanOrEqual(1_500)
      }
    }
    const statuses = async (name: string) => (await attemptsOf(name)).map((a) => a.status_code)
    expect(await statuses("status500")).toEqual([500, 500, 500, 500])
    expect(await statuses("status302")).toEqual([302, 302, 302, 302])
    expect(await statuses("status404")).toEqual([404, 404, 404, 404])
    for (const [name, cause] of [["refused", /connection refused/], ["timeout", /timeout/], ["unresolvable", /unresolvable host/]] as const) {
      const attempts = await attemptsOf(name)
      expect(attempts.map((a) => a.status_code)).toEqual([0, 0, 0, 0])
      expect(attempts[0].response_snippet).toMatch(cause)
    }
    expect((await attemptsOf("timeout"))[0].took_ms).toBeGreaterThanOrEqual(950)
  }, 90_000)

  it("after the fourth failure the delivery is a dead-letter item with its full envelope", async () => {
    await allDead()
    const items = (await call("GET", "/api/v1/rcs/webhooks/dead-letter", tokens.owner)).body.items as Array<any>
    const item = items.find((i) => i.delivery_id === firstDeliveries.status500)
    expect(item).toMatchObject({
      webhook_id: endpoints.status500!.webhook_id,
      event_type: "webhook.test",
      url: endpoints.status500!.url,
      reason: "HTTP 500 after 4 attempts",
      envelope: { type: "webhook.test", delivery_id: firstDeliveries.status500 }
    })
    expect(items.find((i) => i.delivery_id === firstDeliveries.refused).reason).toBe("HTTP 0 after 4 attempts")
    expect(Date.parse(item.permanent_failure_at) - Date.parse(item.first_attempt_at)).toBeGreaterThanOrEqual(36_000)
    expect((await call("GET", "/api/v1/rcs/webhooks/dead-letter", tokens.viewer)).status).toBe(403)
  }, 90_000)
})

describe("dead letters", () => {
  it("visibility rule 2: scope-limited callers do not see deleted, all-bots or out-of-scope endpoints' items", async () => {
    await allDead()
    expect((await call("DELETE", `/api/v1/rcs/webhooks/${endpoints.deleted!.webhook_id}`, tokens.owner)).status).toBe(200)
    const seen = async (token: string) =>
      new Set(((await call("GET", "/api/v1/rcs/webhooks/dead-letter", token)).body.items as Array<any>).map((i) => i.delivery_id))
    const owner = await seen(tokens.owner!)
    for (const name of FAILING) expect(owner.has(firstDeliveries[name])).toBe(true)
    const one = await seen(tokens.scopedOne!)
    expect([...one].sort()).toEqual([firstDeliveries.status500, firstDeliveries.refused, firstDeliveries.timeout].sort())
    const two = await seen(tokens.scopedTwo!)
    expect([...two].sort()).toEqual([firstDeliveries.status302, firstDeliveries.unresolvable].sort())
  }, 90_000)

  it("replay: a new delivery_id, attempt 1, the archived event unchanged; the item is gone and a second replay is 404", async () => {
    await allDead()
    const original = ((await call("GET", "/api/v1/rcs/webhooks/dead-letter", tokens.owner)).body.items as Array<any>).find((i) => i.delivery_id === firstDeliveries.status404)
    // The endpoint now answers 200, so the replay is delivered at once.
    await call("PATCH", `/api/v1/rcs/webhooks/${endpoints.status404!.webhook_id}`, tokens.owner, { url: consumer.url("/ok?replayed") })
    expect((await call("POST", `/api/v1/rcs/webhooks/dead-letter/${firstDeliveries.status404}/replay`, tokens.scopedOne)).status).toBe(404)
    const replay = await call("POST", `/api/v1/rcs/webhooks/dead-letter/${firstDeliveries.status404}/replay`, tokens.owner)
    expect(replay.status).toBe(200)
    expect(replay.body.new_delivery_id).toMatch(/^wd_/)
    expect(replay.body.new_delivery_id).not.toBe(firstDeliveries.status404)
    const again = await call("POST", `/api/v1/rcs/webhooks/dead-letter/${firstDeliveries.status404}/replay`, tokens.owner)
    expect(again.status).toBe(404)
    const request = await eventually(async () => {
      const found = consumer.received.find((r) => r.headers["webhook-id"] === replay.body.new_delivery_id)
      expect(found).toBeDefined()
      return found!
    })
    const envelope = JSON.parse(request.body)
    expect(envelope).toEqual({ ...original.envelope, delivery_id: replay.body.new_delivery_id })
    const rows = await eventually(async () => {
      const r = (await attemptsOf("status404")).filter((a) => a.delivery_id === replay.body.new_delivery_id)
      expect(r).toHaveLength(1)
      return r
    })
    expect(rows[0]).toMatchObject({ attempt: 1, status_code: 200 })
    const items = (await call("GET", "/api/v1/rcs/webhooks/dead-letter", tokens.owner)).body.items as Array<any>
    expect(items.find((i) => i.delivery_id === firstDeliveries.status404)).toBeUndefined()
  }, 90_000)
})

describe("deliveries", () => {
  it("newest first, 100 by default, never more than 500; 404 for an unknown endpoint; 403 out of scope", async () => {
    const id = endpoints.ok!.webhook_id
    await db(
      `INSERT INTO webhook_attempts (delivery_id, webhook_id, account_id, event_type, url, attempt, status_code, took_ms, response_snippet, sent_at)
       SELECT 'wd_bulk_' || i, w.webhook_id, w.account_id, 'message.sent', w.url, 1, 200, 1, 'ok', now() - (i || ' seconds')::interval
       FROM generate_series(1, 600) AS i, webhooks w WHERE w.webhook_id = $1`,
      [id]
    )
    const byDefault = (await call("GET", `/api/v1/rcs/webhooks/${id}/deliveries`, tokens.viewer)).body.deliveries
    expect(byDefault).toHaveLength(100)
    const most = (await call("GET", `/api/v1/rcs/webhooks/${id}/deliveries?limit=5000`, tokens.viewer)).body.deliveries as Array<any>
    expect(most).toHaveLength(500)
    const times = most.map((d) => Date.parse(d.sent_at))
    expect([...times].sort((a, b) => b - a)).toEqual(times)
    expect((await call("GET", `/api/v1/rcs/webhooks/${id}/deliveries?limit=0`, tokens.viewer)).status).toBe(400)
    expect((await call("GET", "/api/v1/rcs/webhooks/00000000-0000-0000-0000-000000000000/deliveries", tokens.viewer)).status).toBe(404)
    const outOfScope = await call("GET", `/api/v1/rcs/webhooks/${endpoints.status302!.webhook_id}/deliveries`, tokens.scopedOne)
    expect(outOfScope.status).toBe(403)
    expect(outOfScope.body.message).toBe("bot not in scope")
    expect((await call("GET", `/api/v1/rcs/webhooks/${endpoints.status500!.webhook_id}/deliveries`, tokens.scopedOne)).status).toBe(200)
  })

  it("herald webhooks attempts: every endpoint's deliveries, newest first; a failed endpoint makes it partial", async () => {
    await allDead()
    const all = await cli("webhooks", "attempts", "--url", node.url, "--token", tokens.owner!)
    expect(all.partial).toBe(false)
    const times = (all.attempts as Array<any>).map((a) => Date.parse(a.sent_at))
    expect([...times].sort((a, b) => b - a)).toEqual(times)
    expect((all.attempts as Array<any>).some((a) => a.delivery_id === firstDeliveries.status500)).toBe(true)
    const scoped = await cli("webhooks", "attempts", "--url", node.url, "--token", tokens.scopedOne!)
    expect(scoped.partial).toBe(false)
    expect(new Set((scoped.attempts as Array<any>).map((a) => a.delivery_id))).toEqual(
      new Set([firstDeliveries.status500, firstDeliveries.refused, firstDeliveries.timeout])
    )
    // An API key may list endpoints but not read their deliveries (JWT only): every read fails,
    // each failed endpoint counts as an empty list, and the answer says it is partial.
    const key = (await call("POST", "/api/v1/rcs/api-keys", tokens.owner, { name: "hooks", scopes: ["webhooks:read"] })).body.raw_key
    const withKey = await cli("webhooks", "attempts", "--url", node.url, "--token", key)
    expect(withKey).toMatchObject({ partial: true, attempts: [] })
    expect(withKey.failed.length).toBeGreaterThan(0)
  }, 90_000)
})

it("every event its consumer received is what the API reference's webhooks document (strictly)", () => {
  expect(consumer.received.length).toBeGreaterThan(0)
  expect(consumer.undocumented).toEqual([])
})
