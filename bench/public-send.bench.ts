// WhatsApp sends through POST /api/v1/public/message (type Text, window open), the in-process
// gateway simulator answering, next to Herald's no-op route (GET /health/live) on the same node in
// the same run: accepted sends/s and p50/p99 at full load, p99 again at half that rate, and the
// time from accept to the `message.sent` webhook (each request carries its send time in
// callbackData, which every event echoes). Every accepted send must come back as a webhook: the
// count is checked, nothing accepted may be lost. Delivered/read statuses are deferred out of the
// window so the webhooks measured are the sends'. Prints one JSON line.
//   npm run bench -- public-send   (DURATION=10 seconds per run, CONNECTIONS=32, PROFILE=<dir>)
import autocannon from "autocannon"
import Pg from "pg"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { cleanup, envFor, makeIsolation } from "../test/support/isolation.ts"
import { heraldCommand, heraldEntry, startHerald } from "../test/support/HeraldProcess.ts"
import { callJson } from "../test/support/http.ts"
import { freePort } from "../test/support/TcpProxy.ts"
import { round2 } from "./support/figures.ts"

const SECONDS = Number(process.env.DURATION ?? 10)
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 32)
const CUSTOMER = "919876541234"
/** PROFILE=<dir>: the node writes a V8 CPU profile there (it is stopped, not killed, at the end). */
const PROFILE = process.env.PROFILE

interface Load {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly accepted: number
  readonly non2xx: number
  readonly errors: number
}

const load = (options: autocannon.Options) =>
  new Promise<Load>((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, duration: SECONDS, ...options }, (error, result) =>
      error
        ? reject(error)
        : resolve({
          rps: Math.round(result.requests.average),
          p50: result.latency.p50,
          p99: result.latency.p99,
          accepted: result["2xx"],
          non2xx: result.non2xx,
          errors: result.errors
        }))
  })

const cli = async (args: Array<string>, env: Record<string, string>) => JSON.parse((await heraldCommand(args, env)).stdout)

/** The developer webhook's consumer: counts message.sent events and keeps accept → webhook times. */
const startConsumer = async () => {
  const latencies: Array<number> = []
  let sent = 0
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      res.writeHead(200).end()
      const event = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { type: string; data: { callbackData: string | null } }
      if (event.type !== "message.sent") return
      sent++
      const at = Number(event.data.callbackData)
      if (Number.isFinite(at)) latencies.push(Date.now() - at)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    sent: () => sent,
    latencies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

const percentile = (values: ReadonlyArray<number>, p: number) => {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

const iso = makeIsolation()
const simPort = await freePort()
const env = envFor(iso, {
  LOG_LEVEL: "warning",
  GATEWAY_SIM_PORT: String(simPort),
  GATEWAY_SIM_DELIVERED_MS: "600000",
  GATEWAY_SIM_READ_MS: "600000"
})
const node = await startHerald(env, PROFILE ? { entry: { argv: ["--cpu-prof", `--cpu-prof-dir=${PROFILE}`, ...heraldEntry.argv, "serve"] } } : {})
const consumer = await startConsumer()
try {
  const account = (await cli(["admin", "create-account", "--email", "bench@wa.io", "--password", "bench password", "--label", "Bench", "--plan", "enterprise"], env)).account_id
  await cli(["admin", "set-plan", account, "enterprise", "--rate", "100000000"], env)
  const number = await cli(["admin", "create-wa-number", account, "--phone", "+919800000001", "--throughput", "1000000"], env)
  const token = (await callJson(node.url, "POST", "/api/v1/rcs/auth/login", undefined, { email: "bench@wa.io", password: "bench password" })).body.token
  const key = (await callJson(node.url, "POST", "/api/v1/app/developer/secret-key", token)).body.secret_key as string
  await callJson(node.url, "PUT", "/api/v1/app/developer/webhook", token, { url: consumer.url })
  // The customer writes first: the 24-hour window is open for free-form messages.
  await fetch(`http://127.0.0.1:${simPort}/simulate/wa/inbound`, {
    method: "POST",
    body: JSON.stringify({ phone_number_id: number.phone_number_id, from: CUSTOMER, text: "hi" })
  })
  const headers = { authorization: `Basic ${key}`, "content-type": "application/json" }
  const bodyAt = (at: number) => JSON.stringify({ fullPhoneNumber: CUSTOMER, callbackData: String(at), type: "Text", data: { message: "Your order has shipped." } })
  for (let tries = 0;; tries++) {
    const check = await fetch(`${node.url}/api/v1/public/message`, { method: "POST", headers, body: bodyAt(Date.now()) })
    if (check.status === 202) break
    if (tries > 50) throw new Error(`send failed: ${check.status} ${await check.text()}`)
    await new Promise((r) => setTimeout(r, 100))
  }
  const request = { url: `${node.url}/api/v1/public/message`, method: "POST" as const, headers, requests: [{ setupRequest: (req: any) => ({ ...req, body: bodyAt(Date.now()) }) }] }
  const full = await load(request as autocannon.Options)
  const noop = await load({ url: `${node.url}/health/live` })
  const half = await load({ ...request, overallRate: Math.max(1, Math.round(full.rps / 2)) } as autocannon.Options)
  // Accepted by Herald, counted where it keeps them (autocannon misses the answers still in
  // flight when a run ends); each must come back as one message.sent.
  const db = new Pg.Client({ connectionString: iso.databaseUrl })
  await db.connect()
  const recorded = async () => Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM wa_messages")).rows[0]!.n)
  let accepted = await recorded()
  const deadline = Date.now() + 120_000
  while (consumer.sent() < accepted && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200))
    accepted = await recorded()
  }
  await db.end()
  console.log(JSON.stringify({
    bench: "public-send",
    seconds: SECONDS,
    connections: CONNECTIONS,
    target: { sends_vs_noop_route: 0.5, p99_ms_at_half_rate: 100 },
    full_load: full,
    half_rate: { rate: Math.round(full.rps / 2), ...half },
    herald_noop_route: noop,
    sends_vs_noop_route: round2(full.rps / noop.rps),
    answered_202: 1 + full.accepted + half.accepted,
    recorded: accepted,
    sent_webhooks: consumer.sent(),
    // Neither may be above 0: a 202 without its row, a row without its message.sent.
    lost: Math.max(1 + full.accepted + half.accepted - accepted, 0) + Math.max(accepted - consumer.sent(), 0),
    accept_to_sent_webhook_ms: { p50: percentile(consumer.latencies, 50), p99: percentile(consumer.latencies, 99), max: percentile(consumer.latencies, 100) },
    note: "one herald process (role all: API, wa_sender actors, simulator in-process over HTTP) with Postgres, NATS, the webhook consumer and autocannon on the same 2 cores; a send is answered 202 once JetStream has its command"
  }))
} finally {
  await (PROFILE ? node.stop() : node.kill())
  await consumer.close()
  await cleanup(iso)
}
process.exit(0)
