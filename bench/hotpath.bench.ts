// Issue 20's HTTP hot-path rows, each next to its floor measured in the same run:
//   live         GET /health/live (no-op route)                  vs bare GET   target ≥ 0.5
//   post         POST with a Schema-decoded JSON body             vs bare POST  target ≥ 0.35
//   bots         GET /api/v1/rcs/bots with an API key             vs bare GET   target ≥ 0.35
//   rcs_send     POST /api/v1/rcs/messages/send, owner token      vs live       target ≥ 0.25,
//                (answered once the outcome is committed; the gateway simulator in-process over
//                HTTP), and p99 < 50 ms at half the sends/s measured (autocannon overallRate)
//   public_send  POST /api/v1/public/message, secret key, Text   vs live       target ≥ 0.5
//                inside the window (answered 202 once JetStream has it)
// The bare floors run in a node:http process of their own; `live` is Herald's own no-op route on
// the same process as the sends. The sends go to varied recipients (bench/support/sendRows.ts) from
// an account of their own with money, an unlimited bot and number and its plan rate out of the
// way; the simulator's delivered/read callbacks are deferred out of the bench, so a send row times
// the send alone; after each public_send run the bench waits until the sends it accepted have left
// (Meta's `sent` back) before the next run. Every answer's status is checked; a run with more than
// TOLERATED others fails the bench.
// This VM's speed drifts within a session, so the variants run interleaved (ROUNDS rounds, each
// variant once per round) and each figure is the median of its rounds; the half-rate runs of
// rcs_send follow the rounds (ROUNDS of them, at half the median). Only the ratios compare across
// runs. Prints one JSON line.
//   npm run bench -- hotpath   (DURATION=5 seconds per run, ROUNDS=3; PROFILE=<dir>: Herald writes a
//   V8 CPU profile there; ONLY=live,bots or ONLY=rcs_send,public_send: those variants and their floors alone)
import autocannon from "autocannon"
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { cleanup, envFor, makeIsolation } from "../test/support/isolation.ts"
import { heraldEntry, startHerald, untilAnswers } from "../test/support/HeraldProcess.ts"
import { callJson } from "../test/support/http.ts"
import { freePort } from "../test/support/TcpProxy.ts"
import { accountWithTenBots } from "./support/botsAccount.ts"
import { round2 } from "./support/figures.ts"
import { prepareSends, WA_CUSTOMERS } from "./support/sendRows.ts"

const SECONDS = Number(process.env.DURATION ?? 5)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const CONNECTIONS = 50
/** Answers other than the expected status a run may have (a run cut mid-request) before it counts as broken. */
const TOLERATED = 10

interface Variant {
  readonly name: string
  readonly url: string
  readonly method?: "GET" | "POST"
  readonly headers?: Record<string, string>
  readonly body?: string
  /** A new body for each request (the send rows' recipients vary). */
  readonly bodyOf?: () => string
  readonly expect: number
}

interface Run {
  readonly rps: number
  readonly p99: number
  readonly unexpected: number
  /** Answers with the expected status. */
  readonly expected: number
}

const load = (v: Variant, seconds: number, overallRate?: number) =>
  new Promise<Run>((resolve, reject) => {
    const bodyOf = v.bodyOf
    autocannon(
      {
        url: v.url,
        method: v.method ?? "GET",
        headers: v.headers ?? {},
        body: v.body,
        connections: CONNECTIONS,
        duration: seconds,
        ...(overallRate === undefined ? {} : { overallRate }),
        ...(bodyOf === undefined ? {} : { requests: [{ setupRequest: (req: any) => ({ ...req, body: bodyOf() }) }] })
      } as autocannon.Options,
      (error, r) => {
        if (error) return reject(error)
        const expected = (r.statusCodeStats as Record<string, { count: number }>)[String(v.expect)]?.count ?? 0
        // Every other answer, connection error and timeout counts: a broken route must not look fast.
        const unexpected = r.requests.total - expected + r.errors + r.timeouts
        if (expected === 0 || unexpected > TOLERATED) {
          return reject(new Error(`${v.name}: ${expected} answers ${v.expect}, ${unexpected} others/errors (${JSON.stringify(r.statusCodeStats)}, errors ${r.errors}, timeouts ${r.timeouts})`))
        }
        resolve({ rps: Math.round(r.requests.average), p99: r.latency.p99, unexpected, expected })
      }
    )
  })

const median = (xs: ReadonlyArray<number>) => {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

// The floor in a process of its own, as Herald is, so neither shares the bench's event loop with autocannon.
const startBare = async () => {
  const port = await freePort()
  const child: ChildProcess = spawn(process.execPath, [fileURLToPath(new URL("./support/bare-json.mjs", import.meta.url)), String(port)], { stdio: "ignore" })
  const url = `http://127.0.0.1:${port}`
  await untilAnswers(child, url, "bare node:http")
  return { url, kill: () => child.kill("SIGKILL") }
}

const iso = makeIsolation()
const simPort = await freePort()
// The key's rate limit is raised out of the way: the row measures the check, not refusals. The
// simulator's delivered/read callbacks come after the bench (as bench/send's sends-only run and
// bench/public-send): no row pays for the callbacks of the sends before it.
const env = envFor(iso, {
  LOG_LEVEL: "warning",
  HERALD_API_KEY_RATE: "10000000",
  HERALD_API_KEY_BURST: "100000",
  GATEWAY_SIM_PORT: String(simPort),
  GATEWAY_SIM_DELIVERED_MS: "600000",
  GATEWAY_SIM_READ_MS: "600000"
})
const PROFILE = process.env.PROFILE
const node = await startHerald(env, PROFILE === undefined ? {} : { entry: { argv: ["--cpu-prof", `--cpu-prof-dir=${PROFILE}`, ...heraldEntry.argv, "serve"] } })
const bare = await startBare()
let closeSends: (() => Promise<void>) | undefined
try {
  const { accountId, key } = await accountWithTenBots(node.url, env, iso.databaseUrl)

  // Row 2: Herald has no validation-only route, every Schema-bodied handler reaches Postgres,
  // NATS or argon2. POST /api/v1/rcs/auth/select-account comes closest: no credential middleware,
  // a body Schema-decoded in full (onExcessProperty "error"), then the handler's first step,
  // verifying the session token, fails on a malformed JWT in memory (the key set is cached) and
  // answers 401 before any I/O. So it pays adapter, body read, decode, handler and the error
  // envelope, and no database; a 400 from a body failing its Schema would skip the handler instead.
  const postBody = JSON.stringify({ session_token: "not-a-jwt", account_id: accountId })
  const json = { "content-type": "application/json" }
  const only = process.env.ONLY?.split(",")
  const floorOf: Record<string, string> = { live: "bare_get", bots: "bare_get", post: "bare_post", rcs_send: "live", public_send: "live" }
  const wanted = (name: string) => only === undefined || only.includes(name)
  // The send rows' account, set up only when a send row runs (it takes a few seconds).
  const sends = wanted("rcs_send") || wanted("public_send")
    ? await prepareSends({ url: node.url, simUrl: `http://127.0.0.1:${simPort}`, env, databaseUrl: iso.databaseUrl })
    : undefined
  closeSends = sends?.close
  const all: Array<Variant> = [
    { name: "bare_get", url: `${bare.url}/health/live`, expect: 200 },
    { name: "live", url: `${node.url}/health/live`, expect: 200 },
    { name: "bots", url: `${node.url}/api/v1/rcs/bots`, headers: { authorization: `Bearer ${key}` }, expect: 200 },
    { name: "bare_post", url: `${bare.url}/`, method: "POST", headers: json, body: postBody, expect: 200 },
    { name: "post", url: `${node.url}/api/v1/rcs/auth/select-account`, method: "POST", headers: json, body: postBody, expect: 401 },
    ...(sends === undefined ? [] : [
      {
        name: "rcs_send",
        url: `${node.url}/api/v1/rcs/messages/send`,
        method: "POST" as const,
        headers: { ...json, authorization: `Bearer ${sends.token}` },
        bodyOf: sends.rcsBody,
        expect: 200
      },
      {
        name: "public_send",
        url: `${node.url}/api/v1/public/message`,
        method: "POST" as const,
        headers: { ...json, authorization: `Basic ${sends.key}` },
        bodyOf: sends.waBody,
        expect: 202
      }
    ])
  ]
  const variants = only === undefined ? all : all.filter((v) => only.includes(v.name) || only.some((o) => floorOf[o] === v.name))
  // The answers are what the rows claim they are, before anything is timed.
  const bots = await callJson(node.url, "GET", "/api/v1/rcs/bots", key)
  if (bots.status !== 200 || bots.body.bots?.length !== 10) throw new Error(`bots: ${bots.status} ${JSON.stringify(bots.body).slice(0, 200)}`)
  const post = await fetch(`${node.url}/api/v1/rcs/auth/select-account`, { method: "POST", headers: json, body: postBody })
  const postAnswer = await post.text()
  if (post.status !== 401 || !postAnswer.includes("unauthorized")) throw new Error(`select-account: ${post.status} ${postAnswer.slice(0, 200)}`)
  // WhatsApp sends answered 202 so far: the drain waits until as many have left.
  let waAccepted = 0
  if (sends !== undefined) {
    const rcs = await fetch(`${node.url}/api/v1/rcs/messages/send`, { method: "POST", headers: { ...json, authorization: `Bearer ${sends.token}` }, body: sends.rcsBody() })
    const rcsAnswer = await rcs.text()
    if (rcs.status !== 200 || !rcsAnswer.includes("\"status\":\"sent\"")) throw new Error(`rcs send: ${rcs.status} ${rcsAnswer.slice(0, 300)}`)
    // Every customer once: each window is open and each answer is the 202 the row counts.
    for (let i = 0; i < WA_CUSTOMERS; i++) {
      const wa = await fetch(`${node.url}/api/v1/public/message`, { method: "POST", headers: { ...json, authorization: `Basic ${sends.key}` }, body: sends.waBody() })
      const waAnswer = await wa.text()
      if (wa.status !== 202 || !waAnswer.includes("Message queued")) throw new Error(`public send: ${wa.status} ${waAnswer.slice(0, 300)}`)
      waAccepted++
    }
    await sends.drainWhatsApp(waAccepted)
  }
  const drains: Array<number> = []
  const timed = async (v: Variant, seconds: number) => {
    const run = await load(v, seconds)
    if (v.name === "public_send") {
      waAccepted += run.expected
      drains.push(await sends!.drainWhatsApp(waAccepted))
    }
    return run
  }

  // One short run each first, so no variant's first round pays JIT warm-up the others do not.
  for (const v of variants) await timed(v, 1)
  drains.length = 0
  const runs = new Map<string, Array<Run>>(variants.map((v) => [v.name, []]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const v of variants) runs.get(v.name)!.push(await timed(v, SECONDS))
  }
  // p99 of the single send at half the sends/s it reached at full load (the median above).
  const rcsVariant = variants.find((v) => v.name === "rcs_send")
  const halfRate = rcsVariant === undefined ? NaN : Math.max(1, Math.round(median(runs.get("rcs_send")!.map((r) => r.rps)) / 2))
  const halfRuns: Array<Run> = []
  if (rcsVariant !== undefined) {
    for (let round = 0; round < ROUNDS; round++) halfRuns.push(await load(rcsVariant, SECONDS, halfRate))
  }
  // A variant left out by ONLY has no figure (NaN, printed as null).
  const rps = (name: string) => median((runs.get(name) ?? []).map((r) => r.rps))
  const p99 = (name: string) => median((runs.get(name) ?? []).map((r) => r.p99))
  const unexpected = (name: string) => runs.get(name)!.reduce((n, r) => n + r.unexpected, 0)
  // Ratios are minimums; rcs_send_p99_ms_at_half is a maximum (p99 below it).
  const targets = { live_ratio: 0.5, post_ratio: 0.35, bots_ratio: 0.35, rcs_send_ratio: 0.25, rcs_send_p99_ms_at_half: 50, public_send_ratio: 0.5 }
  const p99AtHalf = median(halfRuns.map((r) => r.p99))
  const figures = {
    live_ratio: round2(rps("live") / rps("bare_get")),
    post_ratio: round2(rps("post") / rps("bare_post")),
    bots_ratio: round2(rps("bots") / rps("bare_get")),
    rcs_send_ratio: round2(rps("rcs_send") / rps("live")),
    rcs_send_p99_ms_at_half: p99AtHalf,
    public_send_ratio: round2(rps("public_send") / rps("live"))
  }
  const met = (k: keyof typeof targets) => k === "rcs_send_p99_ms_at_half" ? figures[k] < targets[k] : figures[k] >= targets[k]
  console.log(JSON.stringify({
    bench: "hotpath",
    seconds: SECONDS,
    rounds: ROUNDS,
    connections: CONNECTIONS,
    bare_get_rps: rps("bare_get"),
    bare_post_rps: rps("bare_post"),
    live_rps: rps("live"),
    live_ratio: figures.live_ratio,
    post_rps: rps("post"),
    post_ratio: figures.post_ratio,
    bots_rps: rps("bots"),
    bots_ratio: figures.bots_ratio,
    rcs_send_rps: rps("rcs_send"),
    rcs_send_ratio: figures.rcs_send_ratio,
    rcs_send_half_rate: Number.isNaN(halfRate) ? null : halfRate,
    rcs_send_p99_ms_at_half: p99AtHalf,
    rcs_send_half_runs: halfRuns.map((r) => ({ rps: r.rps, p99: r.p99, unexpected: r.unexpected })),
    public_send_rps: rps("public_send"),
    public_send_ratio: figures.public_send_ratio,
    public_send_drain_s_by_round: drains.map(round2),
    floors: { live_ratio: "bare_get", post_ratio: "bare_post", bots_ratio: "bare_get", rcs_send_ratio: "live", rcs_send_p99_ms_at_half: "rcs_send_half_rate", public_send_ratio: "live" },
    p99_ms: Object.fromEntries(variants.map((v) => [v.name, p99(v.name)])),
    unexpected_answers: Object.fromEntries(variants.map((v) => [v.name, unexpected(v.name)])),
    rps_by_round: Object.fromEntries(variants.map((v) => [v.name, runs.get(v.name)!.map((r) => r.rps)])),
    ...(sends === undefined ? {} : { send_statuses: await sends.statuses() }),
    targets,
    // A row left out by ONLY: null, neither met nor missed.
    met: Object.fromEntries(Object.keys(targets).map((k) => [k, Number.isNaN(figures[k as keyof typeof targets]) ? null : met(k as keyof typeof targets)])),
    note: "medians of interleaved runs; post = POST /api/v1/rcs/auth/select-account with a well-formed body and a malformed session token (Schema decode, handler, 401 envelope, no I/O); bots with an API key (cached), 10 bots; rcs_send = single RCS text send with the owner's token, answered once committed, gateway simulator in-process over HTTP, varied recipients; public_send = WhatsApp Text inside the window (500 customers cycled), secret key, answered 202 once JetStream has it, each run's backlog drained before the next run (drain seconds reported); rcs_send_p99_ms_at_half = median p99 of ROUNDS runs at overallRate = half the median rcs_send_rps (target < 50); send rows' floor is live; one herald process (serve, role all) and one bare node:http process, autocannon in the bench process, all on the same 2 cores"
  }))
} finally {
  bare.kill()
  await (PROFILE === undefined ? node.kill() : node.stop()) // stopped, not killed, so the profile is written
  await closeSends?.()
  await cleanup(iso)
}
process.exit(0)
