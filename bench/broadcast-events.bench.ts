// Per-recipient message.* events of a broadcast for an endpoint that opted in
// (include_broadcast_messages; docs/webhooks.md, Broadcast messages), against the floor of the same
// run: the same broadcast with no endpoint opted in, on the same node.
//
// Part 1, sends (N, 100,000 recipients; the in-process simulator called directly, callbacks off,
// so the broadcast's own path is what is measured): broadcasts without, with, and again without an
// opted-in endpoint (the floor is the mean of the two without); POST → completed, and for the one
// with, until the endpoint has every message.sent, the HTTP requests it took, events per request.
// Part 2, reports (REPORTS_N, 20,000 recipients; callbacks on, DELIVERED 200 ms and READ 500 ms
// after each send): the same three broadcasts; POST → every delivered and read report applied,
// and until the endpoint has all 3 × REPORTS_N events.
// The endpoint is this script's HTTP server answering 200 at once; it counts requests, bytes and
// events (deduplicated by event_id). Prints one JSON line.
//   npm run bench -- broadcast-events    (N=100000, REPORTS_N=20000, SKIP_REPORTS=1, TIMEOUT=900 seconds a wait)
//
// Setup is not measured: contacts are written by SQL (one INSERT … generate_series), as in
// bench/broadcast.bench.ts.
import http from "node:http"
import Pg from "pg"
import { BATCH_MAX_EVENTS_DEFAULT } from "../src/webhooks/MessageBatches.ts"
import { type HeraldProcess, heraldCommand, startHerald } from "../test/support/HeraldProcess.ts"
import { callJson } from "../test/support/http.ts"
import { cleanup, envFor, type Isolation, makeIsolation } from "../test/support/isolation.ts"
import { round2 } from "./support/figures.ts"
import { cpuSeconds, peakRssMb } from "./support/procStats.ts"

const N = Number(process.env.N ?? 100_000)
const REPORTS_N = Number(process.env.REPORTS_N ?? 20_000)
const SKIP_REPORTS = process.env.SKIP_REPORTS === "1"
const TIMEOUT_MS = Number(process.env.TIMEOUT ?? 900) * 1000
const PRICE = 0.1
const MESSAGE_EVENTS = ["message.sent", "message.delivered", "message.read", "message.failed"]

const log = (message: string) => process.stderr.write(`[broadcast-events bench] ${message}\n`)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

// ---- the endpoint: 200 at once; requests, bytes and events counted per path ----

interface Tally {
  requests: number
  bytes: number
  events: number
  unique: Set<string>
  duplicates: number
  largest: number
  lastAt: number
}
const tallies = new Map<string, Tally>()
const tallyOf = (path: string) => {
  let t = tallies.get(path)
  if (t === undefined) tallies.set(path, t = { requests: 0, bytes: 0, events: 0, unique: new Set(), duplicates: 0, largest: 0, lastAt: 0 })
  return t
}
const consumer = http.createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    res.end("ok")
    const body = Buffer.concat(chunks)
    const t = tallyOf(req.url ?? "/")
    t.requests++
    t.bytes += body.length
    t.lastAt = performance.now()
    const envelope = JSON.parse(body.toString("utf8"))
    if (envelope.type !== "message.batch") return
    const events = envelope.data.events as Array<{ event_id: string }>
    t.events += events.length
    t.largest = Math.max(t.largest, events.length)
    for (const e of events) {
      if (t.unique.has(e.event_id)) t.duplicates++
      else t.unique.add(e.event_id)
    }
  })
})
await new Promise<void>((resolve) => consumer.listen(0, "127.0.0.1", resolve))
const base = `http://127.0.0.1:${(consumer.address() as { port: number }).port}`

// ---- a node with an account, an unlimited promotional bot, money and a template ----

interface Setup {
  readonly node: HeraldProcess
  readonly iso: Isolation
  readonly env: Record<string, string>
  readonly accountId: string
  readonly botId: string
  readonly templateId: string
  readonly token: string
}

const setUp = async (overrides: Record<string, string>, lists: number, n: number): Promise<Setup> => {
  const iso = makeIsolation()
  const env = envFor(iso, { LOG_LEVEL: "warning", NODE_OPTIONS: "--max-old-space-size=400", ...overrides })
  const node = await startHerald(env)
  const cli = async (...args: Array<string>) => {
    const r = await heraldCommand(args, env)
    if (r.code !== 0) throw new Error(`herald ${args.join(" ")} exited with ${r.code}: ${r.stderr}`)
    return JSON.parse(r.stdout)
  }
  const accountId = (await cli("admin", "create-account", "--email", "bench@events.io", "--password", "bench password", "--label", "Bench")).account_id
  const botId = (await cli("admin", "create-bot", accountId, "--name", "Bench", "--use-case", "promotional", "--status", "active")).bot_id
  await cli("admin", "bot-throughput", botId, "unlimited")
  await cli("admin", "wallet-credit", accountId, String(Math.ceil(n * lists * PRICE * 2) + 100))
  const token = (await callJson(node.url, "POST", "/api/v1/rcs/auth/login", undefined, { email: "bench@events.io", password: "bench password" })).body.token
  const template = await callJson(node.url, "POST", "/api/v1/rcs/templates", token, { bot_id: botId, name: "bench offer", type: "text", text: "Big sale today" })
  if (template.status !== 200) throw new Error(`template: ${template.status} ${JSON.stringify(template.body)}`)
  // An endpoint that asks for every message.* event but not for broadcasts' (the floor's runs see it too).
  const plain = await callJson(node.url, "POST", "/api/v1/rcs/webhooks", token, { url: `${base}/plain`, events: MESSAGE_EVENTS, bot_id: null })
  if (plain.status !== 200) throw new Error(`webhook: ${plain.status} ${JSON.stringify(plain.body)}`)
  return { node, iso, env, accountId, botId, templateId: template.body.template_id, token }
}

/** A list of n contacts, written by SQL (distinct numbers per list, never a simulator failure rule). */
const listOf = async (setup: Setup, n: number, offset: number) => {
  const list = await callJson(setup.node.url, "POST", "/api/v1/rcs/contact-lists", setup.token, { name: `bench ${offset}` })
  if (list.status !== 200) throw new Error(`contact list: ${list.status}`)
  const listId = list.body.list.list_id as string
  const db = new Pg.Client({ connectionString: setup.iso.databaseUrl })
  await db.connect()
  try {
    await db.query(
      `INSERT INTO contacts (list_id, phone) SELECT $1, '+91' || (7000000007 + (i + $3) * 10)::text FROM generate_series(0, $2 - 1) AS i ORDER BY i`,
      [listId, n, offset]
    )
    await db.query("UPDATE contact_lists SET contact_count = $2 WHERE list_id = $1", [listId, n])
    await db.query("VACUUM ANALYZE contacts")
  } finally {
    await db.end()
  }
  return listId
}

const getBroadcast = async (setup: Setup, id: string) => {
  for (let attempt = 1; ; attempt++) {
    const got = await callJson(setup.node.url, "GET", `/api/v1/rcs/broadcasts/${id}`, setup.token).catch(() => undefined)
    if (got?.status === 200) return got.body.broadcast
    if (attempt >= 5) throw new Error(`GET broadcast answered ${got?.status}`)
    await sleep(200 * attempt)
  }
}

interface Run {
  readonly id: string
  /** POST → status completed. */
  readonly completedS: number
  /** POST → every report applied (delivered and read = sent), when waited for. */
  readonly reportsS: number | null
  /** POST → the endpoint had every event, when one opted in. */
  readonly eventsS: number | null
  readonly nodeCpuS: number
}

/**
 * One broadcast to `listId`, from POST until completed, then (`reports`) until every delivered and
 * read report is applied, and (`path`) until that endpoint has `events` distinct events.
 */
const runBroadcast = async (setup: Setup, listId: string, n: number, wait: { reports: boolean; path?: string; events?: number }): Promise<Run> => {
  const pid = setup.node.child.pid!
  const cpu0 = cpuSeconds(pid)
  const started = performance.now()
  const at = () => (performance.now() - started) / 1000
  const created = await callJson(setup.node.url, "POST", "/api/v1/rcs/broadcasts", setup.token, {
    name: "Bench",
    bot_id: setup.botId,
    template_id: setup.templateId,
    contact_list_id: listId
  })
  if (created.status !== 200) throw new Error(`broadcast: ${created.status} ${JSON.stringify(created.body)}`)
  const id = created.body.broadcast.id as string
  let completedS: number | null = null
  let reportsS: number | null = wait.reports ? null : 0
  let eventsS: number | null = wait.path === undefined ? 0 : null
  let lastLog = performance.now()
  for (;;) {
    const b = completedS !== null && reportsS !== null ? undefined : await getBroadcast(setup, id)
    if (b !== undefined && completedS === null && b.status === "completed") completedS = at()
    if (b !== undefined && completedS !== null && reportsS === null && b.delivered_count >= b.sent_count && b.read_count >= b.sent_count) reportsS = at()
    if (eventsS === null && tallyOf(wait.path!).unique.size >= wait.events!) eventsS = at()
    if (completedS !== null && reportsS !== null && eventsS !== null) break
    if (performance.now() - lastLog > 5_000) {
      lastLog = performance.now()
      const t = wait.path === undefined ? undefined : tallyOf(wait.path)
      log(`${round2(at())} s: ${b?.status ?? "completed"} sent ${b?.sent_count ?? "-"}/${n}, delivered ${b?.delivered_count ?? "-"}, read ${b?.read_count ?? "-"}` +
        (t === undefined ? "" : `; endpoint ${t.unique.size} events in ${t.requests} requests`))
    }
    if (at() * 1000 > TIMEOUT_MS) throw new Error(`broadcast ${id} not done in ${TIMEOUT_MS / 1000} s`)
    await sleep(100)
  }
  return { id, completedS: completedS!, reportsS: wait.reports ? reportsS : null, eventsS: wait.path === undefined ? null : eventsS, nodeCpuS: cpuSeconds(pid) - cpu0 }
}

const optIn = async (setup: Setup, path: string) => {
  const r = await callJson(setup.node.url, "POST", "/api/v1/rcs/webhooks", setup.token, {
    url: `${base}${path}`,
    events: MESSAGE_EVENTS,
    bot_id: null,
    include_broadcast_messages: true
  })
  if (r.status !== 200) throw new Error(`webhook: ${r.status} ${JSON.stringify(r.body)}`)
  return r.body.webhook_id as string
}

const optOut = (setup: Setup, webhookId: string) =>
  callJson(setup.node.url, "PATCH", `/api/v1/rcs/webhooks/${webhookId}`, setup.token, { include_broadcast_messages: false })

/** Rows left staged and batch deliveries written, from the database. */
const rowsOf = async (setup: Setup) => {
  const db = new Pg.Client({ connectionString: setup.iso.databaseUrl })
  await db.connect()
  try {
    const staged = (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_batch_items")).rows[0]!.n
    const deliveries = (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_type = 'message.batch'")).rows[0]!.n
    const attempts = (await db.query<{ n: number; failed: number }>(
      "SELECT count(*)::int AS n, count(*) FILTER (WHERE status_code NOT BETWEEN 200 AND 299)::int AS failed FROM webhook_attempts WHERE event_type = 'message.batch'"
    )).rows[0]!
    return { staged_left: staged, batch_deliveries: deliveries, batch_attempts: attempts.n, failed_attempts: attempts.failed }
  } finally {
    await db.end()
  }
}

/**
 * Three broadcasts of `n` on one node: without an opted-in endpoint, with one, without again.
 * `perTarget`: events each target makes (1: sent; 3: sent, delivered, read).
 */
const part = async (name: string, overrides: Record<string, string>, n: number, perTarget: number) => {
  const setup = await setUp(overrides, 3, n)
  try {
    const lists = [await listOf(setup, n, 0), await listOf(setup, n, n), await listOf(setup, n, 2 * n)]
    const reports = perTarget > 1
    log(`${name}: without`)
    const before = await runBroadcast(setup, lists[0]!, n, { reports })
    const path = `/opted-${name}`
    const hook = await optIn(setup, path)
    log(`${name}: with`)
    const withRun = await runBroadcast(setup, lists[1]!, n, { reports, path, events: n * perTarget })
    // Whatever is still coming (a repeated batch) comes before the endpoint is switched off.
    await sleep(2_000)
    const t = tallyOf(path)
    const figures = {
      events: t.unique.size,
      events_expected: n * perTarget,
      duplicates: t.duplicates,
      requests: t.requests,
      requests_at_least: Math.ceil((n * perTarget) / BATCH_MAX_EVENTS_DEFAULT),
      events_per_request: round2(t.events / Math.max(1, t.requests)),
      largest_batch: t.largest,
      kb_per_request: round2(t.bytes / Math.max(1, t.requests) / 1024),
      ...(await rowsOf(setup))
    }
    await optOut(setup, hook)
    log(`${name}: without, again`)
    const after = await runBroadcast(setup, lists[2]!, n, { reports })
    const plain = tallyOf("/plain").requests
    const key = reports ? "reportsS" : "completedS"
    const floor = (before[key]! + after[key]!) / 2
    return {
      recipients: n,
      without_s: [round2(before[key]!), round2(after[key]!)],
      with_s: round2(withRun[key]!),
      x_without: round2(withRun[key]! / floor),
      completed_s: { without: [round2(before.completedS), round2(after.completedS)], with: round2(withRun.completedS) },
      every_event_at_endpoint_s: round2(withRun.eventsS!),
      node_cpu_s: { without: [round2(before.nodeCpuS), round2(after.nodeCpuS)], with: round2(withRun.nodeCpuS) },
      endpoint: figures,
      requests_to_endpoint_without_flag: plain,
      node_peak_rss_mb: peakRssMb(setup.node.child.pid!)
    }
  } catch (error) {
    log(`node output (tail):\n${setup.node.output().slice(-4000)}`)
    throw error
  } finally {
    await setup.node.kill()
    await cleanup(setup.iso)
  }
}

const sends = await part("sends", { GATEWAY_SIM_CALLBACKS: "false", GATEWAY_SIM_TRANSPORT: "direct" }, N, 1)
log(`sends: ${JSON.stringify(sends)}`)
tallies.clear()
const reports = SKIP_REPORTS
  ? null
  : await part("reports", { GATEWAY_SIM_TRANSPORT: "direct", GATEWAY_SIM_DELIVERED_MS: "200", GATEWAY_SIM_READ_MS: "500" }, REPORTS_N, 3)
consumer.closeAllConnections()
consumer.close()
console.log(JSON.stringify({
  bench: "broadcast-events",
  sends,
  reports,
  batch: { max_events: BATCH_MAX_EVENTS_DEFAULT, window_ms: 1000, max_kb: 256 },
  floor: "the same broadcast on the same node with no endpoint opted in (include_broadcast_messages false), run before and after the one with; " +
    "x_without = with ÷ the mean of the two",
  note: "one herald process (role all, in-process simulator called directly) with Postgres, NATS and this script (the endpoint) on the same cores; " +
    "sends: seconds = POST → completed, callbacks off, 1 event per recipient; reports: seconds = POST → every delivered and read report applied, " +
    "callbacks on (DELIVERED 200 ms, READ 500 ms), 3 events per recipient; contacts written by SQL as setup"
}))
process.exit(0)
