import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { createHash } from "node:crypto"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor, ownerSession } from "../support/http.ts"
import { freePort } from "../support/TcpProxy.ts"

// Conversions to Meta's CAPI end to end (docs/conversions.md): the owner's configuration (token
// sealed, shown as its last four), events checked and hashed as Meta's SDK hashes them, the
// account's capi actor batching up to 1,000 a request to the simulator, deduplication on
// (event_name, event_id), an outage retried with nothing lost or duplicated, a dead end that is
// listed and redriven, and a log row for every request.

const MAX_ATTEMPTS = 3
const iso = useIsolation()
const db = useDb(iso)
let node: HeraldProcess
let env: Record<string, string>
let simUrl: string
const accounts: Record<string, string> = {}
const jwt: Record<string, string> = {}
const keys: Record<string, string> = {}

type Json = Record<string, any>
const call = (method: string, path: string, token?: string, body?: unknown) => callJson(node.url, method, path, token, body)
const app = (method: string, path: string, body?: unknown, key = keys.a!) => call(method, `/api/v1/app${path}`, key, body)
const sha = (text: string) => createHash("sha256").update(text).digest("hex")
const now = () => Math.floor(Date.now() / 1000)

const simPost = async (path: string, body: unknown) => {
  const r = await fetch(`${simUrl}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
  return { status: r.status, body: (await r.json()) as any }
}
const simLog = async (datasetId: string): Promise<Array<{ path: string; body: Json; status: number }>> =>
  ((await (await fetch(`${simUrl}/simulate/capi/log?dataset_id=${datasetId}`)).json()) as any).requests
/** Event ids Meta took (2xx requests only), in order, repeats kept. */
const accepted = async (datasetId: string) => (await simLog(datasetId)).filter((r) => r.status === 200).flatMap((r) => r.body.data.map((e: Json) => e.event_id as string))

let datasets = 0
/** A fresh dataset for account a, so each test reads only its own requests in the simulator's log. */
const useDataset = async (extra: Json = {}) => {
  const datasetId = `${Date.now()}${++datasets}`.slice(-15)
  const r = await call("PUT", "/api/v1/app/meta-ads/capi/config", jwt.a, { dataset_id: datasetId, access_token: "EAAB-test-token-9876", ...extra })
  expect(r.status).toBe(200)
  return datasetId
}
const statusOf = async (id: string) => (await app("GET", `/meta-ads/capi/events/${id}`)).body.event?.status
const logRows = async (account = accounts.a!) =>
  db<{ outcome: string; status_code: number | null; events: number; attempt: number }>(
    "SELECT outcome, status_code, events, attempt FROM integration_logs WHERE account_id = $1 ORDER BY created_at, attempt",
    [account]
  )

beforeAll(async () => {
  const simPort = await freePort()
  simUrl = `http://127.0.0.1:${simPort}`
  env = envFor(iso, {
    GATEWAY_SIM_PORT: String(simPort),
    // A request Meta answers after the timeout is sent again (at least once, which Meta's
    // deduplication absorbs); on a loaded machine the simulator can take over a second to answer
    // 1,000 events, and the "none twice" assertions below read its raw log.
    GATEWAY_TIMEOUT_MS: "15000",
    HERALD_CAPI_BATCH_WINDOW_MS: "300",
    HERALD_CAPI_RETRY_BASE_MS: "100",
    HERALD_CAPI_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
    LOG_LEVEL: "error"
  })
  const cli = cliFor(env)
  node = await startHerald(env)
  const made = await Promise.all(
    [["a", "enterprise"], ["b", "growth"]].map(([name, plan]) =>
      cli("admin", "create-account", "--email", `${name}@capi.io`, "--password", `${name} password`, "--label", name!, "--plan", plan!)
    )
  )
  accounts.a = made[0].account_id
  accounts.b = made[1].account_id
  await cli("admin", "set-plan", accounts.a!, "enterprise", "--rate", "60000")
  for (const name of ["a", "b"]) {
    const session = await ownerSession(node.url, `${name}@capi.io`, `${name} password`)
    jwt[name] = session.jwt
    keys[name] = session.key
  }
}, 300_000)
afterAll(async () => {
  await node?.kill()
})

describe("configuration", () => {
  it("events before any configuration are 409 capi_not_configured", async () => {
    const r = await app("POST", "/meta-ads/capi/events", { event_name: "Lead", fullPhoneNumber: "+919876543210" }, keys.b)
    expect(r.status).toBe(409)
    expect(r.body.code).toBe("capi_not_configured")
  })

  it("the owner sets it; the token is sealed at rest and shown again only as its last four", async () => {
    const put = await call("PUT", "/api/v1/app/meta-ads/capi/config", jwt.b, { dataset_id: "123456789", access_token: "EAAB-secret-token-4321", test_event_code: "TEST123" })
    expect(put.status).toBe(200)
    expect(put.body).toMatchObject({ dataset_id: "123456789", access_token: "…4321", test_event_code: "TEST123" })
    const get = await call("GET", "/api/v1/app/meta-ads/capi/config", jwt.b)
    expect(get.body.access_token).toBe("…4321")
    const [row] = await db<{ sealed: string }>("SELECT access_token_sealed AS sealed FROM capi_configs WHERE account_id = $1", [accounts.b])
    expect(row!.sealed).not.toContain("secret-token")
    expect(row!.sealed).toMatch(/^v1\./)
  })

  it("a secret key cannot configure it; bad values are 400 with nothing written", async () => {
    expect((await call("PUT", "/api/v1/app/meta-ads/capi/config", keys.b, { dataset_id: "1", access_token: "EAAB-other-0000" })).status).toBe(401)
    const bad = await call("PUT", "/api/v1/app/meta-ads/capi/config", jwt.b, { dataset_id: "not digits", access_token: "x y" })
    expect(bad.status).toBe(400)
    expect(bad.body.errors.map((e: Json) => e.path).sort()).toEqual(["access_token", "dataset_id"])
    expect((await call("GET", "/api/v1/app/meta-ads/capi/config", jwt.b)).body.dataset_id).toBe("123456789")
  })
})

describe("events", () => {
  it("an event reaches Meta in Meta's format, user data hashed as Meta's SDK hashes it, and is logged", async () => {
    const dataset = await useDataset({ test_event_code: "TEST42" })
    const time = now() - 60
    const r = await app("POST", "/meta-ads/capi/events", {
      event_name: "Purchase",
      event_id: "order-1001",
      event_time: time,
      fullPhoneNumber: "+91 98765 43210",
      email: "  John_Smith@Gmail.com ",
      value: 499.5,
      currency: "inr",
      ctwa_clid: "ARAkLkA8rmlFeiCktEJQ-QTwRiyYHAFDLMNDBH0CD3qpjd0HR4irJ6LEkR7JwFF4XvnO2E4Nx0-eM-GABDLOPaOdRMv-_zfUQ2a"
    })
    expect(r.status).toBe(202)
    expect(r.body).toMatchObject({ result: true, success: true, id: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    await eventually(async () => expect(await statusOf(r.body.id)).toBe("sent"))
    const [request] = await simLog(dataset)
    expect(request!.status).toBe(200)
    expect(request!.body.test_event_code).toBe("TEST42")
    expect(request!.body.data).toEqual([{
      event_name: "Purchase",
      event_time: time,
      event_id: "order-1001",
      action_source: "business_messaging",
      messaging_channel: "whatsapp",
      user_data: {
        ph: [sha("919876543210")],
        // Meta's published example (Customer Information Parameters): john_smith@gmail.com.
        em: ["62a14e44f765419d10fea99367361a727c12365e2520f32218d505ed9aa0f62f"],
        ctwa_clid: expect.stringMatching(/^ARAk/)
      },
      custom_data: { value: 499.5, currency: "INR" }
    }])
    expect(request!.path).toBe(`/v23.0/${dataset}/events`)
    await eventually(async () => expect(await logRows()).toContainEqual({ outcome: "delivered", status_code: 200, events: 1, attempt: 1 }))
    const logs = await app("GET", "/integrations/logs?integration=meta_capi&limit=5")
    expect(logs.status).toBe(200)
    expect(logs.body.logs[0]).toMatchObject({ integration: "meta_capi", status_code: 200, outcome: "delivered", events: 1, took_ms: expect.any(Number) })
  })

  it("bad events are 400 naming each field, and nothing is queued", async () => {
    const before = (await db("SELECT 1 FROM capi_events")).length
    const cases: Array<[Json, Array<string>]> = [
      [{ event_name: "Purchase", fullPhoneNumber: "+919876543210" }, ["currency", "value"]],
      [{ event_name: "AddToCart", fullPhoneNumber: "+919876543210" }, ["event_name"]],
      [{ event_name: "Lead", email: "not-an-email" }, ["email"]],
      [{ event_name: "Lead", fullPhoneNumber: "12" }, ["fullPhoneNumber"]],
      [{ event_name: "Lead" }, ["fullPhoneNumber"]],
      [{ event_name: "Lead", fullPhoneNumber: "+919876543210", event_time: now() - 8 * 86_400 }, ["event_time"]],
      [{ event_name: "Lead", fullPhoneNumber: "+919876543210", event_time: now() + 3_600 }, ["event_time"]],
      [{ event_name: "Lead", customer_id: "00000000-0000-4000-8000-000000000000" }, ["customer_id"]],
      [{ event_name: "Lead", fullPhoneNumber: "+919876543210", value: -1, currency: "RUPEES" }, ["currency", "value"]]
    ]
    for (const [body, paths] of cases) {
      const r = await app("POST", "/meta-ads/capi/events", body)
      expect(r.status, JSON.stringify(body)).toBe(400)
      expect(r.body.code).toBe("invalid_request")
      expect(r.body.errors.map((e: Json) => e.path).sort(), JSON.stringify(body)).toEqual(paths)
    }
    const batch = await app("POST", "/meta-ads/capi/events/batch", { events: [{ event_name: "Lead", fullPhoneNumber: "+919876543210" }, { event_name: "Lead" }] })
    expect(batch.status).toBe(400)
    expect(batch.body.errors.map((e: Json) => e.path)).toEqual(["events[1].fullPhoneNumber"])
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect((await db("SELECT 1 FROM capi_events")).length).toBe(before)
  })

  it("an event for a customer by id carries the customer's phone", async () => {
    const dataset = await useDataset()
    const tracked = await call("POST", "/api/v1/public/track/users", `Basic ${keys.a}`, { fullPhoneNumber: "919812345678", name: "Asha" })
    expect(tracked.status).toBe(200)
    const r = await app("POST", "/meta-ads/capi/events", { event_name: "Subscribe", customer_id: tracked.body.id })
    expect(r.status).toBe(202)
    await eventually(async () => expect(await statusOf(r.body.id)).toBe("sent"))
    const [request] = await simLog(dataset)
    expect(request!.body.data[0].user_data.ph).toEqual([sha("919812345678")])
    // Another account's customer is not this account's.
    const other = await app("POST", "/meta-ads/capi/events", { event_name: "Subscribe", customer_id: tracked.body.id }, keys.b)
    expect(other.status).toBe(400)
    expect(other.body.errors[0].path).toBe("customer_id")
  })

  it("a repeated (event_name, event_id) is the same event and is forwarded once", async () => {
    const dataset = await useDataset()
    const body = { event_name: "Lead", event_id: "lead-77", fullPhoneNumber: "+919876543210" }
    const [first, second] = await Promise.all([app("POST", "/meta-ads/capi/events", body), app("POST", "/meta-ads/capi/events", body)])
    expect(first.status).toBe(202)
    expect(second.body.id).toBe(first.body.id)
    await eventually(async () => expect(await statusOf(first.body.id)).toBe("sent"))
    const third = await app("POST", "/meta-ads/capi/events", body)
    expect(third.body.id).toBe(first.body.id)
    // Another name with the same id is another event (Meta's key is the pair).
    const purchase = await app("POST", "/meta-ads/capi/events", { ...body, event_name: "Subscribe" })
    expect(purchase.body.id).not.toBe(first.body.id)
    await eventually(async () => expect(await statusOf(purchase.body.id)).toBe("sent"))
    await new Promise((resolve) => setTimeout(resolve, 600))
    expect((await accepted(dataset)).filter((id) => id === "lead-77")).toHaveLength(2)
    expect((await simLog(dataset)).flatMap((r) => r.body.data.map((e: Json) => e.event_name)).sort()).toEqual(["Lead", "Subscribe"])
  })

  it("1,001 events leave in two requests: 1,000 (Meta's limit) and 1", async () => {
    const dataset = await useDataset()
    const event = (i: number) => ({ event_name: "Lead", event_id: `split-${i}`, fullPhoneNumber: "+919876543210" })
    const [big, last] = await Promise.all([
      app("POST", "/meta-ads/capi/events/batch", { events: Array.from({ length: 1_000 }, (_, i) => event(i)) }),
      app("POST", "/meta-ads/capi/events", event(1_000))
    ])
    expect(big.status).toBe(202)
    expect(big.body.ids).toHaveLength(1_000)
    expect(last.status).toBe(202)
    await eventually(async () => expect(await accepted(dataset)).toHaveLength(1_001), { timeoutMs: 20_000 })
    const sizes = (await simLog(dataset)).map((r) => r.body.data.length).sort((x, y) => x - y)
    expect(sizes).toEqual([1, 1_000])
    expect(new Set(await accepted(dataset)).size).toBe(1_001)
    expect((await app("POST", "/meta-ads/capi/events/batch", { events: Array.from({ length: 1_001 }, (_, i) => event(i)) })).status).toBe(400)
  })
})

describe("outages", () => {
  it("an outage is retried with backoff: once Meta is back every event arrives, none twice", async () => {
    const dataset = await useDataset()
    await simPost("/simulate/capi/outage", { dataset_id: dataset, requests: 2, status: 503 })
    const logsBefore = (await logRows()).length
    const ids = await Promise.all(Array.from({ length: 5 }, async (_, i) =>
      (await app("POST", "/meta-ads/capi/events", { event_name: "Lead", event_id: `outage-${i}`, fullPhoneNumber: "+919876543210" })).body.id as string))
    await eventually(async () => {
      for (const id of ids) expect(await statusOf(id)).toBe("sent")
    }, { timeoutMs: 20_000 })
    const took = await accepted(dataset)
    expect(took.sort()).toEqual(Array.from({ length: 5 }, (_, i) => `outage-${i}`).sort())
    const statuses = (await simLog(dataset)).map((r) => r.status)
    expect(statuses.slice(0, 2)).toEqual([503, 503])
    const outcomes = (await logRows()).slice(logsBefore).map((r) => r.outcome)
    expect(outcomes.filter((o) => o === "retrying")).toHaveLength(2)
    expect(outcomes.at(-1)).toBe("delivered")
  })

  it("a backlog goes out several requests at a time; one that fails is retried alone", async () => {
    const dataset = await useDataset()
    await simPost("/simulate/capi/outage", { dataset_id: dataset, requests: 1, status: 503 })
    const event = (i: number) => ({ event_name: "Lead", event_id: `backlog-${i}`, fullPhoneNumber: "+919876543210" })
    const answers = await Promise.all([0, 1, 2].map((b) =>
      app("POST", "/meta-ads/capi/events/batch", { events: Array.from({ length: b === 2 ? 500 : 1_000 }, (_, i) => event(b * 1_000 + i)) })))
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202])
    await eventually(async () => expect(await accepted(dataset)).toHaveLength(2_500), { timeoutMs: 20_000 })
    expect(new Set(await accepted(dataset)).size).toBe(2_500)
    const log = await simLog(dataset)
    expect(log.filter((r) => r.status === 503)).toHaveLength(1)
    expect(log.every((r) => r.body.data.length <= 1_000)).toBe(true)
  })

  it("a cut connection is retried too", async () => {
    const dataset = await useDataset()
    await simPost("/simulate/capi/outage", { dataset_id: dataset, requests: 1, status: 0 })
    const r = await app("POST", "/meta-ads/capi/events", { event_name: "Lead", event_id: "cut-1", fullPhoneNumber: "+919876543210" })
    await eventually(async () => expect(await statusOf(r.body.id)).toBe("sent"), { timeoutMs: 20_000 })
    expect(await accepted(dataset)).toEqual(["cut-1"])
  })

  it("past the last try the events fail visibly (event status, error, log row); a redrive sends them", async () => {
    const dataset = await useDataset()
    await simPost("/simulate/capi/outage", { dataset_id: dataset, requests: MAX_ATTEMPTS, status: 500 })
    const r = await app("POST", "/meta-ads/capi/events", { event_name: "Lead", event_id: "dead-1", fullPhoneNumber: "+919876543210" })
    await eventually(async () => expect(await statusOf(r.body.id)).toBe("failed"), { timeoutMs: 20_000 })
    const event = (await app("GET", `/meta-ads/capi/events/${r.body.id}`)).body.event
    expect(event).toMatchObject({ status: "failed", attempts: MAX_ATTEMPTS, error: expect.stringMatching(/^HTTP 500/) })
    expect((await app("GET", "/integrations/logs?limit=1")).body.logs[0]).toMatchObject({ outcome: "failed", status_code: 500, attempt: MAX_ATTEMPTS })
    const redrive = await app("POST", "/meta-ads/capi/events/redrive")
    expect(redrive.body).toMatchObject({ success: true, requeued: 1 })
    await eventually(async () => expect(await statusOf(r.body.id)).toBe("sent"), { timeoutMs: 20_000 })
    expect(await accepted(dataset)).toEqual(["dead-1"])
  })

  it("a 4xx from Meta is not retried: the batch fails at once", async () => {
    const dataset = await useDataset()
    await simPost("/simulate/capi/outage", { dataset_id: dataset, requests: 1, status: 400 })
    const r = await app("POST", "/meta-ads/capi/events", { event_name: "Lead", event_id: "refused-1", fullPhoneNumber: "+919876543210" })
    await eventually(async () => expect(await statusOf(r.body.id)).toBe("failed"), { timeoutMs: 20_000 })
    expect((await app("GET", `/meta-ads/capi/events/${r.body.id}`)).body.event.attempts).toBe(1)
    expect((await simLog(dataset)).map((x) => x.status)).toEqual([400])
  })
})

describe("isolation", () => {
  it("another account sees neither the events nor the log", async () => {
    const [mine] = await db<{ id: string }>("SELECT event_uid::text AS id FROM capi_events WHERE account_id = $1 LIMIT 1", [accounts.a])
    expect((await app("GET", `/meta-ads/capi/events/${mine!.id}`, undefined, keys.b)).status).toBe(404)
    expect((await app("GET", "/meta-ads/capi/events/not-a-uuid")).status).toBe(404)
    const theirs = await app("GET", "/integrations/logs", undefined, keys.b)
    expect(theirs.status).toBe(200)
    expect(theirs.body.logs).toEqual([])
  })
})

describe("crash", () => {
  // Last: it restarts the node (and with it the in-process simulator, whose log starts empty).
  it("events accepted just before the node is killed (kill -9) all reach Meta after a restart, none twice", async () => {
    const dataset = await useDataset()
    const answer = await app("POST", "/meta-ads/capi/events/batch", {
      events: Array.from({ length: 20 }, (_, i) => ({ event_name: "Lead", event_id: `crash-${i}`, fullPhoneNumber: "+919876543210" }))
    })
    expect(answer.status).toBe(202)
    // Within the 300 ms batch window: the 202 promised them, nothing has been forwarded yet.
    await node.kill()
    node = await startHerald(env)
    const ids = answer.body.ids as Array<string>
    await eventually(async () => {
      for (const id of ids) expect(await statusOf(id)).toBe("sent")
    }, { timeoutMs: 30_000 })
    const took = await accepted(dataset)
    expect(took.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `crash-${i}`).sort())
  }, 60_000)
})
