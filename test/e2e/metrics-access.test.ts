import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { startConsumer } from "../support/consumer.ts"
import { eventually, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"

// Who may read /metrics (docs/operations.md, Metrics): the API's port, which clients reach, serves
// it only behind METRICS_TOKEN; METRICS_PORT is a listener of its own for the cluster's private
// network. Either way the text is the operator's: no account, bot or webhook id in a label.

const iso = useIsolation()
const env = envFor(iso)
const cli = cliFor(env)
const TOKEN = "metrics-token-for-the-test-0123456789"

/** The default of the test harness: METRICS_PORT on a free port, no token. */
let node: HeraldProcess
/** METRICS_PORT empty and METRICS_TOKEN set: /metrics on the API's port, behind the token. */
let tokenOnApiPort: HeraldProcess
/** Both set: the metrics port asks for the token too. */
let tokenOnOwnPort: HeraldProcess
let consumer: Awaited<ReturnType<typeof startConsumer>>
const ids = { account: "", bot: "", webhook: "" }

const scrape = (url: string, headers: Record<string, string> = {}) =>
  fetch(`${url}/metrics`, { headers }).then(async (r) => ({ status: r.status, text: await r.text(), authenticate: r.headers.get("www-authenticate") }))

beforeAll(async () => {
  consumer = await startConsumer()
  // One after the other: the first creates and migrates the database.
  node = await startHerald(env)
  ;[tokenOnApiPort, tokenOnOwnPort] = await Promise.all([
    startHerald({ ...env, HERALD_ROLE: "api", METRICS_PORT: "", METRICS_TOKEN: TOKEN }),
    startHerald({ ...env, HERALD_ROLE: "api", METRICS_TOKEN: TOKEN })
  ])
  ids.account = (await cli("admin", "create-account", "--email", "metrics@example.com", "--password", "metrics password", "--label", "Metrics")).account_id
  ids.bot = (await cli("admin", "create-bot", ids.account, "--name", "Metered", "--status", "active")).bot_id
  const owner = (await callJson(node.url, "POST", "/api/v1/rcs/auth/login", undefined, { email: "metrics@example.com", password: "metrics password" })).body.token
  // An endpoint that refuses every attempt: the node counts attempts and failures.
  const created = await callJson(node.url, "POST", "/api/v1/rcs/webhooks", owner, { url: consumer.url("/status/500"), events: ["message.sent"], bot_id: ids.bot })
  ids.webhook = created.body.webhook_id
  expect((await callJson(node.url, "POST", `/api/v1/rcs/webhooks/${ids.webhook}/test`, owner)).status).toBe(200)
  expect((await callJson(node.url, "GET", `/api/v1/rcs/bots/${ids.bot}`, owner)).status).toBe(200)
})
afterAll(async () => {
  await Promise.all([node?.kill(), tokenOnApiPort?.kill(), tokenOnOwnPort?.kill()])
  await consumer?.close()
})

describe("/metrics", () => {
  it("is not served on the API's port without METRICS_TOKEN", async () => {
    const answer = await scrape(node.url)
    expect(answer.status).toBe(404)
    expect(answer.text).not.toContain("http_requests_total")
  })

  it("is served on METRICS_PORT, which serves nothing else", async () => {
    const answer = await scrape(node.metricsUrl)
    expect(answer.status).toBe(200)
    expect(answer.text).toContain("# TYPE http_requests_total counter")
    for (const path of ["/health/live", "/api/v1/rcs/bots", "/api/v1/openapi.json", "/console"]) {
      expect((await fetch(`${node.metricsUrl}${path}`)).status, path).toBe(404)
    }
  })

  it("holds no account, bot or webhook id: webhook attempts are the node's totals, routes their patterns", async () => {
    const text = await eventually(async () => {
      const { text } = await scrape(node.metricsUrl)
      expect(text).toMatch(/^herald_webhook_failures_total [1-9]/m)
      return text
    }, { timeoutMs: 30_000 })
    for (const [what, id] of Object.entries(ids)) expect(text.includes(id), `the ${what} id is in /metrics`).toBe(false)
    expect(text).not.toMatch(/\b(account|bot|webhook)_id="/)
    expect(text).toMatch(/http_requests_total\{method="GET",route="\/api\/v1\/rcs\/bots\/:bot_id",status="200"\} [1-9]/)
  })

  it("on the API's port with METRICS_TOKEN: only for Authorization: Bearer <token>", async () => {
    const attempts: ReadonlyArray<Record<string, string>> = [{}, { authorization: "Bearer wrong-token-wrong-token-wrong-token-00" }, { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString("base64")}` }, { authorization: TOKEN }]
    for (const headers of attempts) {
      const refused = await scrape(tokenOnApiPort.url, headers)
      expect(refused.status, JSON.stringify(headers)).toBe(401)
      expect(refused.authenticate).toBe("Bearer realm=\"metrics\"")
      expect(JSON.parse(refused.text)).toMatchObject({ success: false, code: "unauthorized" })
    }
    const answer = await scrape(tokenOnApiPort.url, { authorization: `Bearer ${TOKEN}` })
    expect(answer.status).toBe(200)
    expect(answer.text).toContain("# TYPE http_requests_total counter")
  })

  it("with both settings: the metrics port asks for the token, the API's port has no /metrics", async () => {
    expect((await scrape(tokenOnOwnPort.metricsUrl)).status).toBe(401)
    expect((await scrape(tokenOnOwnPort.metricsUrl, { authorization: `Bearer ${TOKEN}` })).status).toBe(200)
    expect((await scrape(tokenOnOwnPort.url, { authorization: `Bearer ${TOKEN}` })).status).toBe(404)
  })
})
