import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import http from "node:http"
import { eventually, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startGatewaySim, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"
import { freePort } from "../support/TcpProxy.ts"

// Traces for operators (docs/operations.md, Traces): with OTEL_EXPORTER_OTLP_ENDPOINT set, one
// trace follows a send from its HTTP request on the api node, through its JetStream command (the
// context travels in the message's headers), the actor's commit and the gateway call on a worker,
// to its status webhook's attempts, the retry after a failed first attempt included (its durable
// timer carries the trace). The collector is a local OTLP/HTTP receiver run by this file.

interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly attributes: ReadonlyArray<{ key: string; value: Record<string, unknown> }>
  readonly service: string
  readonly node: string
}

const iso = useIsolation()
const spans: Array<OtlpSpan> = []
const contentTypes = new Set<string>()
let receiver: http.Server
let hooks: http.Server
const hookRequests: Array<{ id: string; attempt: number }> = []
let api: HeraldProcess
let worker: HeraldProcess
let sim: Awaited<ReturnType<typeof startGatewaySim>>

const attr = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value
  // OTLP's JSON has int64 as a string or a number depending on the exporter: compared as text.
  return value === undefined ? undefined : String(Object.values(value)[0])
}

/** An OTLP/HTTP JSON receiver: every span of every request, with its resource's service and node. */
const startReceiver = async () => {
  const server = http.createServer((req, res) => {
    let body = ""
    req.on("data", (chunk) => (body += chunk))
    req.on("end", () => {
      contentTypes.add(String(req.headers["content-type"]))
      if (req.url === "/v1/traces") {
        const data = JSON.parse(body) as any
        for (const rs of data.resourceSpans ?? []) {
          const resource = Object.fromEntries((rs.resource?.attributes ?? []).map((a: any) => [a.key, Object.values(a.value)[0]]))
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) spans.push({ ...s, service: resource["service.name"], node: resource["service.instance.id"] })
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" })
      res.end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return server
}

/** A webhook endpoint that refuses each delivery's first attempt (503) and takes the second. */
const startHooks = async () => {
  const seen = new Map<string, number>()
  const server = http.createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      const id = String(req.headers["webhook-id"])
      const attempt = (seen.get(id) ?? 0) + 1
      seen.set(id, attempt)
      hookRequests.push({ id, attempt })
      res.writeHead(attempt === 1 ? 503 : 200)
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return server
}

const portOf = (server: http.Server) => (server.address() as { port: number }).port

beforeAll(async () => {
  receiver = await startReceiver()
  hooks = await startHooks()
  const apiPort = await freePort()
  const base = envFor(iso, {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${portOf(receiver)}`,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    GATEWAY_SIM_DELIVERED_MS: "100",
    GATEWAY_SIM_READ_MS: "600000"
  })
  sim = await startGatewaySim(await freePort(), `http://127.0.0.1:${apiPort}`, base)
  const env = { ...base, GATEWAY_RBM_URL: sim.url }
  ;[api, worker] = await Promise.all([
    startHerald({ ...env, PORT: String(apiPort), HERALD_ROLE: "api", HERALD_NODE_ID: `api-${iso.id}` }),
    startHerald({ ...env, HERALD_ROLE: "worker", HERALD_NODE_ID: `worker-${iso.id}` })
  ])
  const cli = cliFor(env)
  const account = (await cli("admin", "create-account", "--email", "trace@send.io", "--password", "trace password", "--label", "Trace")).account_id
  await cli("admin", "wallet-credit", account, "100")
  const bot = (await cli("admin", "create-bot", account, "--name", "Traced", "--use-case", "transactional", "--status", "active")).bot_id
  Object.assign(globalThis, { traceBot: bot })
}, 300_000)

afterAll(async () => {
  await Promise.all([api?.kill(), worker?.kill(), sim?.kill()])
  await new Promise<void>((resolve) => receiver?.close(() => resolve()))
  hooks?.closeAllConnections()
  await new Promise<void>((resolve) => hooks?.close(() => resolve()))
})

describe("traces", () => {
  it("one trace runs from a send's request through its command, commit and gateway call to its status webhook's attempts, across nodes", async () => {
    const token = (await callJson(api.url, "POST", "/api/v1/rcs/auth/login", undefined, { email: "trace@send.io", password: "trace password" })).body.token
    const bot = (globalThis as unknown as { traceBot: string }).traceBot
    const hook = await callJson(api.url, "POST", "/api/v1/rcs/webhooks", token, { url: `http://127.0.0.1:${portOf(hooks)}/hook`, events: ["message.sent"], bot_id: null })
    expect(hook.status, JSON.stringify(hook.body)).toBe(200)
    // The caller's own trace: the request's span continues it.
    const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
    const res = await fetch(`${api.url}/api/v1/rcs/messages/send`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", traceparent: `00-${callerTrace}-00f067aa0ba902b7-01` },
      body: JSON.stringify({ bot_id: bot, to: "+919876501234", text: "traced" })
    })
    const sent = (await res.json()) as any
    expect(res.status, JSON.stringify(sent)).toBe(200)
    const messageId = sent.message_id as string

    // Both attempts of message.sent: the first refused, the second (after the 1 s retry) taken.
    await eventually(async () => expect(hookRequests.map((r) => r.attempt).sort()).toEqual([1, 2]), { timeoutMs: 60_000, intervalMs: 200 })
    const trace = await eventually(async () => {
      const inTrace = spans.filter((s) => s.traceId === callerTrace)
      const names = inTrace.map((s) => s.name)
      expect(names).toContain("POST /api/v1/rcs/messages/send")
      expect(names.filter((n) => n === "POST").length).toBeGreaterThanOrEqual(3)
      expect(names).toContain("commit delivery")
      return inTrace
    }, { timeoutMs: 30_000, intervalMs: 250 })

    const byId = new Map(trace.map((s) => [s.spanId, s]))
    const request = trace.find((s) => s.name === "POST /api/v1/rcs/messages/send")!
    expect(request).toMatchObject({ kind: 2, node: `api-${iso.id}`, service: "herald" })
    expect(request.parentSpanId).toBe("00f067aa0ba902b7")
    expect(attr(request, "http.route")).toBe("/api/v1/rcs/messages/send")
    expect(attr(request, "http.response.status_code")).toBe("200")

    // The command published by the api node and applied by the worker, in the same trace.
    const produce = trace.find((s) => s.name === "send sender" && s.parentSpanId === request.spanId)!
    expect(produce).toMatchObject({ kind: 4, node: `api-${iso.id}` })
    const processes = trace.filter((s) => s.name === "process sender")
    expect(processes.length).toBeGreaterThanOrEqual(2)
    expect(processes.every((s) => s.kind === 5 && s.node === `worker-${iso.id}`)).toBe(true)
    const first = processes.find((s) => s.parentSpanId === produce.spanId)!
    expect(first).toBeDefined()
    expect(trace.some((s) => s.name === "commit sender" && s.parentSpanId === first.spanId)).toBe(true)

    // The gateway call, a client span under the command's, with its answer.
    const gatewayCall = trace.find((s) => s.name === "POST" && attr(s, "herald.gateway") === "rbm")!
    expect(gatewayCall).toMatchObject({ kind: 3, node: `worker-${iso.id}` })
    expect(attr(gatewayCall, "herald.message.id")).toBe(messageId)
    expect(attr(gatewayCall, "http.response.status_code")).toBe("200")

    // The status webhook: its delivery's commands, and both attempts as client spans.
    const attempts = trace.filter((s) => s.name === "POST" && attr(s, "herald.webhook.attempt") !== undefined)
    expect(attempts.map((s) => attr(s, "herald.webhook.attempt")).sort()).toEqual(["1", "2"])
    expect(attempts.map((s) => attr(s, "http.response.status_code")).sort()).toEqual(["200", "503"])
    for (const a of attempts) expect(byId.get(a.parentSpanId!)?.name).toBe("process delivery")

    // Every span of the trace hangs off another of it, up to the caller's.
    for (const s of trace) if (s !== request) expect(byId.has(s.parentSpanId!), `${s.name} has no parent in the trace`).toBe(true)
    expect([...contentTypes]).toEqual(["application/json"])
  }, 120_000)
})
