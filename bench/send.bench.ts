// Single sends through POST /api/v1/rcs/messages/send, the in-process gateway simulator answering
// at once, next to the simulator hit directly in the same run (its RBM send endpoint, the same
// number of connections): sends/s, p50/p99. Two runs: delivery/read callbacks deferred out of the
// window (sends only) and callbacks on (each send also brings a delivered and a read callback).
// The HTTP ceilings of the same run, with the same connections: Herald's own route that does
// nothing (GET /health/live on the same node), a bare @effect/platform route and bare node:http.
// Prints one JSON line.   npm run bench -- send   (DURATION=10 seconds per run, CONNECTIONS=32, PROFILE=<dir>)
import autocannon from "autocannon"
import { randomUUID } from "node:crypto"
import Pg from "pg"
import { cleanup, envFor, makeIsolation } from "../test/support/isolation.ts"
import { heraldCommand, heraldEntry, startHerald } from "../test/support/HeraldProcess.ts"
import { callJson } from "../test/support/http.ts"
import { freePort } from "../test/support/TcpProxy.ts"
import { httpBaselines } from "./support/baselines.ts"
import { round2 } from "./support/figures.ts"

const SECONDS = Number(process.env.DURATION ?? 10)
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 32)
/** PROFILE=<dir>: the node writes a V8 CPU profile there (it is stopped, not killed, at the end). */
const PROFILE = process.env.PROFILE

interface Load {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly errors: number
  readonly non2xx: number
}

const load = (options: autocannon.Options) =>
  new Promise<Load>((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, duration: SECONDS, ...options }, (error, result) =>
      error
        ? reject(error)
        : resolve({ rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99, errors: result.errors, non2xx: result.non2xx }))
  })

const cli = async (args: Array<string>, env: Record<string, string>) => JSON.parse((await heraldCommand(args, env)).stdout)

/** One node with its simulator, an account with money and an unlimited bot; the load through Herald, then the simulator alone. */
const run = async (callbacks: boolean) => {
  const iso = makeIsolation()
  const simPort = await freePort()
  const env = envFor(iso, {
    LOG_LEVEL: "warning",
    GATEWAY_SIM_PORT: String(simPort),
    ...(callbacks ? {} : { GATEWAY_SIM_DELIVERED_MS: "600000", GATEWAY_SIM_READ_MS: "600000" })
  })
  const node = await startHerald(env, PROFILE ? { entry: { argv: ["--cpu-prof", `--cpu-prof-dir=${PROFILE}`, ...heraldEntry.argv, "serve"] } } : {})
  try {
    const account = (await cli(["admin", "create-account", "--email", "bench@send.io", "--password", "bench password", "--label", "Bench"], env)).account_id
    const bot = (await cli(["admin", "create-bot", account, "--name", "Bench", "--status", "active"], env)).bot_id
    await cli(["admin", "bot-throughput", bot, "unlimited"], env)
    await cli(["admin", "wallet-credit", account, "100000000"], env)
    const token = (await callJson(node.url, "POST", "/api/v1/rcs/auth/login", undefined, { email: "bench@send.io", password: "bench password" })).body.token
    const body = JSON.stringify({ bot_id: bot, to: "+919876541234", text: "Your order has shipped." })
    const check = await callJson(node.url, "POST", "/api/v1/rcs/messages/send", token, JSON.parse(body))
    if (check.status !== 200) throw new Error(`send failed: ${check.status} ${JSON.stringify(check.body)}`)
    const herald = await load({
      url: `${node.url}/api/v1/rcs/messages/send`,
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body
    })
    const noop = await load({ url: `${node.url}/health/live` })
    const db = new Pg.Client({ connectionString: iso.databaseUrl })
    await db.connect()
    const { rows } = await db.query<{ status: string; n: number }>("SELECT status, count(*)::int AS n FROM messages GROUP BY status ORDER BY status")
    await db.end()
    const simulator = await load({
      url: `http://127.0.0.1:${simPort}`,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ contentMessage: { text: "Your order has shipped." } }),
      requests: [{ setupRequest: (req: any) => ({ ...req, path: `/v1/phones/+919876541234/agentMessages?messageId=${randomUUID()}&agentId=${bot}` }) }]
    } as autocannon.Options)
    return { herald, herald_noop_route: noop, simulator_direct: simulator, herald_vs_simulator: round2(herald.rps / simulator.rps), messages_by_status: Object.fromEntries(rows.map((r) => [r.status, r.n])) }
  } finally {
    await (PROFILE ? node.stop() : node.kill())
    await cleanup(iso)
  }
}

const sendsOnly = await run(false)
const withCallbacks = await run(true)
const baselines = await httpBaselines({ success: true, bots: [] }, (url) => load({ url }))
console.log(JSON.stringify({
  bench: "send",
  seconds: SECONDS,
  connections: CONNECTIONS,
  target: { sends_per_second: 2000, p99_ms: 50 },
  sends_only: sendsOnly,
  with_callbacks: withCallbacks,
  baseline_bare_effect_route: baselines.bare_effect_route,
  baseline_bare_node_http: baselines.bare_node_http,
  sends_vs_herald_noop_route: round2(sendsOnly.herald.rps / sendsOnly.herald_noop_route.rps),
  sends_vs_bare_effect_route: round2(sendsOnly.herald.rps / baselines.bare_effect_route.rps),
  sends_vs_node_http: round2(sendsOnly.herald.rps / baselines.bare_node_http.rps),
  note: "one herald process (role all: API, sender actors, simulator in-process) with Postgres, NATS and autocannon on the same 2 cores; a send is answered once its outcome is committed; every message ends in Postgres"
}))
process.exit(0)
