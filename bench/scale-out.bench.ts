// Scaling out, measured (../shared/design/cluster.md): one fixed workload run on 1, 2 and 4 worker
// processes beside one api node, and what each costs.
//
// The workload: a broadcast to N (200,000) recipients, the bot's throughput unlimited, through
// `herald gateway-sim` as its own process with its delivery reports on (DELIVERED 200 ms and READ
// 500 ms after each send, called back to the api node); and W (100,000) webhook deliveries to a
// local receiver answering 200 at once (bench/support/webhookReceiver.mjs, its own process): W /
// ENDPOINTS `message.sent` events, each fanned out to ENDPOINTS (100) endpoints, committed by
// bench/support/emitWebhookEvents.ts (Herald's own code in a process of its own, EMITTERS commits at
// once, as bench/webhooks.bench.ts does) when the broadcast is posted. A run ends when the
// broadcast is completed with every report applied and every delivery's attempt is committed;
// it then checks that the run was exact (the broadcast's counters equal its targets' statuses, the
// simulator got each message once, every delivery succeeded at its first attempt and reached the
// receiver once).
//
// For each run: the wall time, and the CPU seconds per 1,000 messages (a message: one recipient of
// the broadcast, with its send and two reports, or one webhook delivery) of Herald (the api node,
// the workers and the event emitter), Postgres (every `postgres` process of the machine, the
// postmaster's reaped children included) and NATS (the run's own nats-server processes), each apart
// and summed; apart from the sum, the simulator's and the receiver's CPU, and the run database's own
// backends (a cross-check of Postgres's figure when the server has other clients); and, measured
// just before, what each process costs per second at rest (leases, heartbeats, idle consumers): a
// worker's fixed cost. The figure to read: the cost at 4 workers against 1 (target: within 1.15×).
// Then the rebalance: 2 workers under the same workload, a third started once JOIN_AT (25%) of the
// recipients are sent; the time until every partition of every kind is owned by exactly the node
// rendezvous hashing assigns it (each node's /health/ready `partitions_owned`), from the new
// worker's start and from its first ready answer (target: under 5 s), and the run still exact.
// Then replication: the workload on 2 workers against a 3-server NATS cluster started here with
// HERALD_NATS_REPLICAS=3, next to the same on one server (the 2-worker run above, or one run for
// it): the price of R3 as ratios of CPU per 1,000 messages and of wall time.
//
// Every run starts its own NATS (one server, or three in one cluster, /usr/sbin/nats-server on free
// loopback ports, fresh store directories), database, simulator, receiver and nodes, and removes
// them after. Postgres is the machine's: the bench should be its only client while it runs (no
// test suite beside it). On a 2-core machine a full-size run takes about a quarter of an hour (the
// 400,000 delivery and read reports dominate), the whole bench well over an hour.
// Prints one JSON line; progress on stderr; exits 1 if a run was not exact.
//   npm run bench -- scale-out
//   N=200000 W=100000 ENDPOINTS=100 EMITTERS=8 SCALE_WORKERS=1,2,4 PARTITIONS=32 DB_POOL=10
//   JOIN_AT=0.25 SKIP_REBALANCE=1 SKIP_REPLICATION=1 TIMEOUT=3600 (seconds a run may take)
//   STALL=180 (seconds without progress before a run fails) IDLE=5 (seconds at rest measured
//   before each run, 0: none) NATS_SERVER=/usr/sbin/nats-server
//   A quick check: N=5000 W=2000 ENDPOINTS=20 SCALE_WORKERS=1,2 npm run bench -- scale-out
//
// DB_POOL: HERALD_DB_POOL of each node (each also holds one LISTEN connection): 5 nodes and the
// emitter at Herald's default of 16 would pass Postgres's default max_connections of 100.
// Setup is not measured: contacts are written by SQL (as bench/broadcast.bench.ts does), the
// account, bot, template and endpoints through the CLI and the API, and every node is started and
// its partitions settled before the clock starts.
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { createInterface } from "node:readline"
import Pg from "pg"
import { assignedTo } from "../src/actors/runtime/partitioning.ts"
import { type HeraldProcess, heraldCommand, startGatewaySim, startHerald } from "../test/support/HeraldProcess.ts"
import { callJson } from "../test/support/http.ts"
import { envFor, type Isolation, makeIsolation, PG_ADMIN_URL } from "../test/support/isolation.ts"
import { freePort } from "../test/support/TcpProxy.ts"
import { createBroadcast } from "./support/createBroadcast.ts"
import { cpuOfPids, cpuTracker, postgresCpuSeconds } from "./support/cpuGroups.ts"
import { round2 } from "./support/figures.ts"
import { type BenchNats, startNats } from "./support/natsServers.ts"
import { cpuSeconds, machineCpu, peakRssMb } from "./support/procStats.ts"

const N = Number(process.env.N ?? 200_000)
const W = Number(process.env.W ?? 100_000)
const ENDPOINTS = Math.max(1, Math.min(W, Number(process.env.ENDPOINTS ?? 100)))
const EVENTS = Math.max(1, Math.round(W / ENDPOINTS))
/** The deliveries the workload makes: EVENTS × ENDPOINTS (W rounded to a multiple of ENDPOINTS). */
const DELIVERIES = EVENTS * ENDPOINTS
const MESSAGES = N + DELIVERIES
const EMITTERS = Number(process.env.EMITTERS ?? 8)
const SCALE_WORKERS = (process.env.SCALE_WORKERS ?? "1,2,4").split(",").map((s) => Number(s.trim())).filter((n) => n > 0)
const PARTITIONS = Number(process.env.PARTITIONS ?? 32)
const DB_POOL = process.env.DB_POOL ?? "10"
const JOIN_AT = Number(process.env.JOIN_AT ?? 0.25)
const SKIP_REBALANCE = process.env.SKIP_REBALANCE === "1"
const SKIP_REPLICATION = process.env.SKIP_REPLICATION === "1"
const TIMEOUT_MS = Number(process.env.TIMEOUT ?? 3600) * 1000
const STALL_MS = Number(process.env.STALL ?? 180) * 1000
/** Seconds of the deployment at rest, measured before each run: what each process costs doing nothing. */
const IDLE_S = Number(process.env.IDLE ?? 5)
const DELAYS = { GATEWAY_SIM_DELIVERED_MS: "200", GATEWAY_SIM_READ_MS: "500" }
const PRICE = 0.1

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const RECEIVER = fileURLToPath(new URL("./support/webhookReceiver.mjs", import.meta.url))
const EMITTER = fileURLToPath(new URL("./support/emitWebhookEvents.ts", import.meta.url))

const log = (message: string) => process.stderr.write(`[scale-out bench] ${message}\n`)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

// ---- child processes of the bench's own: the receiver and the event emitter ----

interface Child {
  readonly child: ChildProcess
  /** The next JSON line it prints on stdout. */
  readonly nextLine: () => Promise<any>
  readonly output: () => string
  readonly kill: () => Promise<void>
}

const spawnChild = (args: ReadonlyArray<string>, env: Record<string, string>): Child => {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env }, stdio: ["pipe", "pipe", "pipe"] })
  let stderr = ""
  child.stderr!.on("data", (d) => (stderr = (stderr + d).slice(-8_000)))
  const lines: Array<string> = []
  const waiters: Array<(line: string) => void> = []
  createInterface({ input: child.stdout! }).on("line", (line) => {
    const waiter = waiters.shift()
    if (waiter) waiter(line)
    else lines.push(line)
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  return {
    child,
    output: () => stderr,
    nextLine: () => {
      const line = lines.shift()
      const got = line !== undefined ? Promise.resolve(line) : new Promise<string>((resolve) => waiters.push(resolve))
      return Promise.race([
        got.then((l) => JSON.parse(l)),
        exited.then(() => sleep(200)).then(() => {
          const late = lines.shift()
          if (late !== undefined) return JSON.parse(late)
          throw new Error(`${args.join(" ")} exited with ${child.exitCode ?? child.signalCode}:\n${stderr}`)
        })
      ])
    },
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill("SIGKILL")
      await exited
    }
  }
}

// ---- set-up: account, unlimited bot, money, template, N contacts, ENDPOINTS endpoints ----

interface Setup {
  readonly accountId: string
  readonly botId: string
  readonly templateId: string
  readonly listId: string
  readonly token: string
}

const setUp = async (api: HeraldProcess, env: Record<string, string>, db: Pg.Client, receiverUrl: string): Promise<Setup> => {
  const cli = async (...args: Array<string>) => {
    const r = await heraldCommand(args, env)
    if (r.code !== 0) throw new Error(`herald ${args.join(" ")} exited with ${r.code}: ${r.stderr}`)
    return JSON.parse(r.stdout)
  }
  const email = "bench@scale-out.io"
  const accountId = (await cli("admin", "create-account", "--email", email, "--password", "bench password", "--label", "Bench")).account_id
  const botId = (await cli("admin", "create-bot", accountId, "--name", "Bench", "--use-case", "promotional", "--status", "active")).bot_id
  await cli("admin", "bot-throughput", botId, "unlimited")
  await cli("admin", "wallet-credit", accountId, String(Math.ceil(N * PRICE * 2) + 100))
  const token = (await callJson(api.url, "POST", "/api/v1/rcs/auth/login", undefined, { email, password: "bench password" })).body.token
  const template = await callJson(api.url, "POST", "/api/v1/rcs/templates", token, { bot_id: botId, name: "bench offer", type: "text", text: "Big sale today" })
  if (template.status !== 200) throw new Error(`template: ${template.status} ${JSON.stringify(template.body)}`)
  const list = await callJson(api.url, "POST", "/api/v1/rcs/contact-lists", token, { name: "bench" })
  if (list.status !== 200) throw new Error(`contact list: ${list.status} ${JSON.stringify(list.body)}`)
  const listId = list.body.list.list_id as string
  // Distinct Indian mobiles ending in 7: never one of the simulator's failure rules (…0001-0006).
  await db.query(
    `INSERT INTO contacts (list_id, phone) SELECT $1, '+91' || (7000000007 + i * 10)::text FROM generate_series(0, $2 - 1) AS i ORDER BY i`,
    [listId, N]
  )
  await db.query("UPDATE contact_lists SET contact_count = $2 WHERE list_id = $1", [listId, N])
  await db.query("VACUUM ANALYZE contacts")
  for (let i = 0; i < ENDPOINTS; i++) {
    const created = await callJson(api.url, "POST", "/api/v1/rcs/webhooks", token, { url: `${receiverUrl}/ok/${i}`, events: ["message.sent"] })
    if (created.status >= 300) throw new Error(`webhook endpoint: ${created.status} ${JSON.stringify(created.body)}`)
  }
  return { accountId, botId, templateId: template.body.template_id, listId, token }
}

// ---- partitions: what each worker owns against what rendezvous hashing assigns it ----

interface Worker {
  readonly nodeId: string
  readonly node: HeraldProcess
}

const ownedBy = (node: HeraldProcess) =>
  fetch(`${node.url}/health/ready`, { signal: AbortSignal.timeout(2_000) }).then(
    async (r) => (r.ok ? ((await r.json()) as { partitions_owned: Record<string, Array<number>> }).partitions_owned : undefined),
    () => undefined
  )

/**
 * One sample: whether every worker owns exactly its rendezvous share of every kind (so every
 * partition has exactly one owner), and the partitions two workers reported at once. `kinds`
 * collects every kind seen.
 */
const sampleAssignment = async (workers: ReadonlyArray<Worker>, kinds: Set<string>) => {
  const reports = await Promise.all(workers.map((w) => ownedBy(w.node)))
  const owners = new Map<string, number>()
  for (const report of reports) {
    for (const [kind, partitions] of Object.entries(report ?? {})) {
      kinds.add(kind)
      for (const p of partitions) owners.set(`${kind}/${p}`, (owners.get(`${kind}/${p}`) ?? 0) + 1)
    }
  }
  const doubles = [...owners].filter(([, n]) => n > 1).map(([id]) => id)
  if (reports.some((r) => r === undefined) || kinds.size === 0) return { reached: false, doubles }
  const ids = workers.map((w) => w.nodeId).sort()
  const reached = [...kinds].every((kind) =>
    workers.every((w, i) => JSON.stringify(reports[i]![kind] ?? []) === JSON.stringify(assignedTo(w.nodeId, ids, kind, PARTITIONS)))
  )
  return { reached, doubles }
}

/** Until the assignment has held for `stableMs` (new kinds may show up while partitions are acquired). */
const awaitSettled = async (workers: ReadonlyArray<Worker>, kinds: Set<string>, stableMs = 2_000, timeoutMs = 120_000) => {
  const deadline = Date.now() + timeoutMs
  let since: number | undefined
  for (;;) {
    const { reached } = await sampleAssignment(workers, kinds)
    if (!reached) since = undefined
    else if (since === undefined) since = Date.now()
    else if (Date.now() - since >= stableMs) return
    if (Date.now() > deadline) throw new Error(`partitions not settled in ${timeoutMs / 1000} s across ${workers.map((w) => w.nodeId).join(", ")}`)
    await sleep(200)
  }
}

// ---- one run of the workload ----

interface RunOptions {
  readonly label: string
  readonly workers: number
  readonly natsServers: 1 | 3
  readonly replicas: 1 | 3
  /** Start one more worker once JOIN_AT of the recipients are sent, and time the rebalance. */
  readonly join?: boolean
}

const dropDatabase = async (iso: Isolation) => {
  const admin = new Pg.Client({ connectionString: PG_ADMIN_URL })
  await admin.connect()
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${iso.database}" WITH (FORCE)`)
  } finally {
    await admin.end()
  }
}

const runWorkload = async (o: RunOptions) => {
  log(`${o.label}: ${o.workers} worker(s), NATS ${o.natsServers} server(s) R${o.replicas}${o.join ? ", a worker joins under load" : ""}`)
  const iso = makeIsolation()
  let nats: BenchNats | undefined
  let receiver: Child | undefined
  let emitter: Child | undefined
  let sim: Awaited<ReturnType<typeof startGatewaySim>> | undefined
  let api: HeraldProcess | undefined
  const workers: Array<Worker> = []
  const db = new Pg.Client({ connectionString: iso.databaseUrl })
  db.on("error", (error) => log(`postgres connection: ${error.message}`))
  let dbConnected = false
  try {
    nats = await startNats(o.natsServers, `b${iso.id}`)
    receiver = spawnChild([RECEIVER], {})
    const receiverUrl = `http://127.0.0.1:${(await receiver.nextLine()).port}`
    const receiverStats = () => fetch(`${receiverUrl}/stats`).then((r) => r.json() as Promise<{ requests: number; unique: number; duplicates: number }>)
    const apiPort = await freePort()
    const simPort = await freePort()
    sim = await startGatewaySim(simPort, `http://127.0.0.1:${apiPort}`, { LOG_LEVEL: "warning", LOG_FORMAT: "json", ...DELAYS })
    const env = envFor(iso, {
      NATS_URL: nats.urls,
      HERALD_NATS_REPLICAS: String(o.replicas),
      HERALD_PARTITIONS: String(PARTITIONS),
      HERALD_DB_POOL: DB_POOL,
      LOG_LEVEL: "warning",
      GATEWAY_RBM_URL: sim.url,
      GATEWAY_WA_URL: sim.url,
      GATEWAY_CAPI_URL: sim.url,
      NODE_OPTIONS: "--max-old-space-size=400",
      ...DELAYS
    })
    api = await startHerald({ ...env, HERALD_ROLE: "api", PORT: String(apiPort), HERALD_NODE_ID: `${iso.id}-api` }, { timeoutMs: 180_000 })
    await db.connect()
    dbConnected = true
    const setup = await setUp(api, env, db, receiverUrl)
    log(`${o.label}: set up (${N} contacts, ${ENDPOINTS} endpoints)`)

    const startWorker = async (i: number) => {
      const nodeId = `${iso.id}-w${i}`
      const node = await startHerald({ ...env, HERALD_ROLE: "worker", HERALD_NODE_ID: nodeId }, { timeoutMs: 180_000 })
      const worker = { nodeId, node }
      workers.push(worker)
      return worker
    }
    await Promise.all(Array.from({ length: o.workers }, (_, i) => startWorker(i + 1)))
    const kinds = new Set<string>()
    await awaitSettled(workers, kinds)
    log(`${o.label}: ${workers.length} worker(s) own their partitions (${kinds.size} kinds × ${PARTITIONS})`)

    emitter = spawnChild(["--import", "tsx", EMITTER, setup.accountId, String(EVENTS), String(EMITTERS)], {
      ...env,
      HERALD_ROLE: "api",
      HERALD_NODE_ID: `${iso.id}-emitter`,
      HERALD_DB_POOL: String(Math.max(2, EMITTERS))
    })
    await emitter.nextLine()

    // At rest: leases, heartbeats, assignment rounds, idle consumers and relays, per second.
    const idle = await (async () => {
      if (IDLE_S <= 0) return null
      const pids = { api: [api!.child.pid!], workers: workers.map((w) => w.node.child.pid!), emitter: [emitter!.child.pid!] }
      const before = { api: cpuOfPids(pids.api), workers: cpuOfPids(pids.workers), emitter: cpuOfPids(pids.emitter), postgres: postgresCpuSeconds(), nats: cpuOfPids(nats!.pids()) }
      await sleep(IDLE_S * 1000)
      const rate = (now: number, then: number) => round2((now - then) / IDLE_S)
      return {
        api: rate(cpuOfPids(pids.api), before.api),
        workers: rate(cpuOfPids(pids.workers), before.workers),
        emitter: rate(cpuOfPids(pids.emitter), before.emitter),
        postgres: rate(postgresCpuSeconds(), before.postgres),
        nats: rate(cpuOfPids(nats!.pids()), before.nats)
      }
    })()
    if (idle) log(`${o.label}: at rest, CPU seconds per second: ${JSON.stringify(idle)}`)

    // ---- measured from here ----
    // The run database's own backends, apart: unlike the machine's postgres total, untouched by
    // any other client of the server (but without the shared WAL writer, checkpointer, vacuum).
    const ownBackends = cpuTracker(async () =>
      (await db.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [iso.database])).rows.map((r) => r.pid)
    )
    await ownBackends.start()
    const heraldPids = () => [api!.child.pid!, ...workers.map((w) => w.node.child.pid!)]
    const cpu0 = {
      herald: new Map(heraldPids().map((pid) => [pid, cpuSeconds(pid)])),
      postgres: postgresCpuSeconds(),
      nats: cpuOfPids(nats.pids()),
      sim: cpuSeconds(sim.child.pid!),
      receiver: cpuSeconds(receiver.child.pid!),
      bench: process.cpuUsage(),
      machine: machineCpu()
    }
    const started = performance.now()
    const at = () => round2((performance.now() - started) / 1000)
    emitter.child.stdin!.write("go\n")
    const emitted = emitter.nextLine()
    const broadcastId = await createBroadcast(api.url, setup)

    const counters = async () =>
      (await db.query<{ status: string; total: number; sent: number; delivered: number; read: number; failed: number; cancelled: number }>(
        `SELECT b.status, b.total_count AS total,
           coalesce(sum(c.sent_count), 0)::int AS sent, coalesce(sum(c.delivered_count), 0)::int AS delivered,
           coalesce(sum(c.read_count), 0)::int AS read, coalesce(sum(c.failed_count), 0)::int AS failed,
           coalesce(sum(c.cancelled_count), 0)::int AS cancelled
         FROM broadcasts b LEFT JOIN broadcast_counters c USING (broadcast_id)
         WHERE b.broadcast_id = $1 GROUP BY b.broadcast_id`,
        [broadcastId]
      )).rows[0]!
    const attempts = async () =>
      (await db.query<{ ok: number; attempts: number }>(
        `SELECT count(DISTINCT delivery_id) FILTER (WHERE status_code BETWEEN 200 AND 299)::int AS ok, count(*)::int AS attempts FROM webhook_attempts`
      )).rows[0]!

    // The join: a third worker once JOIN_AT of the recipients are sent; sampled every 50 ms until
    // every worker owns exactly its share.
    let rebalance: Promise<Record<string, unknown>> | undefined
    const joinWhen = Math.ceil(N * JOIN_AT)

    let completedS: number | null = null
    let lastLog = performance.now()
    let moved = { at: performance.now(), count: -1 }
    let final: Awaited<ReturnType<typeof counters>>
    let received: Awaited<ReturnType<typeof receiverStats>>
    for (;;) {
      const c = await counters()
      received = await receiverStats()
      if (c.status === "completed" && completedS === null) completedS = at()
      if (o.join && rebalance === undefined && c.sent >= joinWhen) {
        const joinedAt = at()
        log(`${o.label}: ${joinedAt} s, ${c.sent} sent: a worker joins`)
        rebalance = (async () => {
          const spawnedAt = performance.now()
          const worker = await startWorker(workers.length + 1)
          const readyAt = performance.now()
          const doubles = new Set<string>()
          let samples = 0
          for (;;) {
            const sample = await sampleAssignment(workers, kinds)
            samples++
            for (const d of sample.doubles) doubles.add(d)
            if (sample.reached) break
            if (performance.now() - readyAt > 120_000) throw new Error("the rebalance did not settle in 120 s")
            await sleep(50)
          }
          const settledAt = performance.now()
          return {
            joined_at_s: joinedAt,
            sent_at_join: c.sent,
            worker: worker.nodeId,
            start_to_ready_s: round2((readyAt - spawnedAt) / 1000),
            settled_after_start_s: round2((settledAt - spawnedAt) / 1000),
            settled_after_ready_s: round2((settledAt - readyAt) / 1000),
            samples,
            partitions_reported_by_two_nodes: [...doubles]
          }
        })()
        // A failure is reported once awaited.
        rebalance.catch(() => undefined)
      }
      const allReports = c.status === "completed" && c.delivered >= c.total && c.read >= c.total
      if (allReports && received.unique >= DELIVERIES) {
        const committed = await attempts()
        if (committed.ok >= DELIVERIES) {
          final = c
          break
        }
      }
      const count = c.sent + c.delivered + c.read + received.unique
      if (count !== moved.count) moved = { at: performance.now(), count }
      if (performance.now() - moved.at > STALL_MS) throw new Error(`no progress for ${STALL_MS / 1000} s: ${JSON.stringify({ ...c, received })}`)
      if (performance.now() - started > TIMEOUT_MS) throw new Error(`not done in ${TIMEOUT_MS / 1000} s: ${JSON.stringify({ ...c, received })}`)
      if (performance.now() - lastLog > 5_000) {
        lastLog = performance.now()
        log(`${o.label}: ${at()} s: ${c.status} sent ${c.sent}/${c.total} delivered ${c.delivered} read ${c.read}; webhooks received ${received.unique}/${DELIVERIES}`)
      }
      await sleep(250)
    }
    const wallS = (performance.now() - started) / 1000
    const ownBackendsS = await ownBackends.stop()
    const herald1 = new Map(heraldPids().map((pid) => [pid, cpuSeconds(pid)]))
    const cpu1 = {
      postgres: postgresCpuSeconds(),
      nats: cpuOfPids(nats.pids()),
      sim: cpuSeconds(sim.child.pid!),
      receiver: cpuSeconds(receiver.child.pid!),
      bench: process.cpuUsage(cpu0.bench),
      machine: machineCpu()
    }
    const emission = await emitted
    const rebalanced = rebalance === undefined ? undefined : await rebalance
    // A worker started during the run counts from 0 (its start-up included).
    const heraldDelta = (pid: number) => (herald1.get(pid) ?? 0) - (cpu0.herald.get(pid) ?? 0)
    const apiS = heraldDelta(api.child.pid!)
    const workersS = workers.reduce((sum, w) => sum + heraldDelta(w.node.child.pid!), 0)
    const emitterS = Number(emission.cpu_s)
    const heraldS = apiS + workersS + emitterS
    const postgresS = cpu1.postgres - cpu0.postgres
    const natsS = cpu1.nats - cpu0.nats
    const totalS = heraldS + postgresS + natsS
    const per1k = (s: number) => round2((s / MESSAGES) * 1000)

    // ---- exact? ----
    const problems: Array<string> = []
    const targets = (await db.query<{ sent: number; delivered: number; read: number; failed: number; cancelled: number; total: number }>(
      `SELECT count(*) FILTER (WHERE status IN ('sent', 'delivered', 'read'))::int AS sent,
         count(*) FILTER (WHERE delivered_at IS NOT NULL)::int AS delivered,
         count(*) FILTER (WHERE read_at IS NOT NULL)::int AS read,
         count(*) FILTER (WHERE status = 'failed')::int AS failed,
         count(*) FILTER (WHERE status = 'cancelled')::int AS cancelled,
         count(*)::int AS total
       FROM broadcast_targets WHERE broadcast_id = $1`,
      [broadcastId]
    )).rows[0]!
    const counted = { total: final!.total, sent: final!.sent, delivered: final!.delivered, read: final!.read, failed: final!.failed, cancelled: final!.cancelled }
    const fields = ["total", "sent", "delivered", "read", "failed", "cancelled"] as const
    if (fields.some((f) => counted[f] !== targets[f])) problems.push(`counters ${JSON.stringify(counted)} ≠ targets ${JSON.stringify(targets)}`)
    if (targets.total !== N || targets.read !== N) problems.push(`${targets.total} targets, ${targets.read} read, of ${N}`)
    const simTotals = (await fetch(`${sim.url}/simulate/log`).then((r) => r.json())) as { messages: number; sends: number; deliveries: number; callbacks: Record<string, number> }
    if (simTotals.messages !== N || simTotals.deliveries !== N) problems.push(`simulator: ${simTotals.messages} messages, ${simTotals.deliveries} reached, of ${N}`)
    if (simTotals.sends !== simTotals.messages) problems.push(`simulator: ${simTotals.sends} sends for ${simTotals.messages} messages`)
    const hooks = (await db.query<{ deliveries: number; ok: number; attempts: number; gaps: number }>(
      `SELECT (SELECT count(*) FROM webhook_deliveries)::int AS deliveries,
         count(DISTINCT delivery_id) FILTER (WHERE status_code BETWEEN 200 AND 299)::int AS ok,
         count(*)::int AS attempts,
         (SELECT count(*) FROM (SELECT delivery_id FROM webhook_attempts GROUP BY delivery_id HAVING max(attempt) <> count(*)) g)::int AS gaps
       FROM webhook_attempts`
    )).rows[0]!
    received = await receiverStats()
    if (hooks.deliveries !== DELIVERIES || hooks.ok !== DELIVERIES) problems.push(`webhooks: ${hooks.deliveries} deliveries, ${hooks.ok} succeeded, of ${DELIVERIES}`)
    if (hooks.gaps > 0) problems.push(`webhooks: ${hooks.gaps} deliveries with attempts not numbered 1..n`)
    if (received.unique !== DELIVERIES || received.duplicates > 0) problems.push(`receiver: ${received.unique} deliveries, ${received.duplicates} received twice`)
    if (rebalanced && (rebalanced.partitions_reported_by_two_nodes as Array<string>).length > 0) problems.push(`rebalance: partitions owned by two nodes at once`)
    for (const p of problems) log(`${o.label}: NOT EXACT: ${p}`)

    const busyCores = (cpu1.machine.busy - cpu0.machine.busy) / wallS
    const result = {
      label: o.label,
      workers: o.workers,
      nats_servers: o.natsServers,
      replicas: o.replicas,
      wall_s: round2(wallS),
      broadcast_completed_s: completedS,
      emitted_in_s: round2(Number(emission.seconds)),
      cpu_s: {
        herald: round2(heraldS),
        api: round2(apiS),
        workers: round2(workersS),
        emitter: round2(emitterS),
        postgres: round2(postgresS),
        nats: round2(natsS),
        total: round2(totalS)
      },
      cpu_s_per_1k_messages: {
        herald: per1k(heraldS),
        postgres: per1k(postgresS),
        nats: per1k(natsS),
        total: per1k(totalS)
      },
      apart_cpu_s: {
        postgres_run_database_backends: round2(ownBackendsS),
        simulator: round2(cpu1.sim - cpu0.sim),
        receiver: round2(cpu1.receiver - cpu0.receiver),
        bench: round2((cpu1.bench.user + cpu1.bench.system) / 1e6)
      },
      machine_busy_cores: round2(busyCores),
      idle_cpu_s_per_s: idle,
      peak_rss_mb: { api: peakRssMb(api.child.pid!), workers: workers.map((w) => peakRssMb(w.node.child.pid!)) },
      ...(rebalanced ? { rebalance: rebalanced } : {}),
      exact: problems.length === 0,
      problems,
      checks: {
        broadcast: { ...counted, status: final!.status },
        simulator: { messages: simTotals.messages, sends: simTotals.sends, reached: simTotals.deliveries, callbacks: simTotals.callbacks },
        webhooks: { deliveries: hooks.deliveries, succeeded: hooks.ok, attempts: hooks.attempts, receiver: received }
      }
    }
    log(`${o.label}: ${JSON.stringify(result)}`)
    return result
  } catch (error) {
    log(`${o.label} failed; api output (tail):\n${api?.output().slice(-3000) ?? ""}`)
    for (const w of workers) log(`${w.nodeId} exit ${w.node.child.exitCode}, output (tail):\n${w.node.output().slice(-3000)}`)
    if (emitter) log(`emitter output (tail):\n${emitter.output().slice(-2000)}`)
    if (nats) log(`NATS:\n${nats.logTails(10)}`)
    throw error
  } finally {
    await emitter?.kill()
    await Promise.all(workers.map((w) => w.node.kill()))
    await api?.kill()
    await sim?.kill()
    await receiver?.kill()
    if (dbConnected) await db.end().catch(() => undefined)
    await nats?.stop()
    await dropDatabase(iso).catch((error) => log(`dropping ${iso.database}: ${error}`))
  }
}

// ---- the runs ----

log(`workload: ${N} recipients + ${DELIVERIES} webhook deliveries (${EVENTS} events × ${ENDPOINTS} endpoints) = ${MESSAGES} messages`)
const scale: Array<Awaited<ReturnType<typeof runWorkload>>> = []
for (const workers of SCALE_WORKERS) scale.push(await runWorkload({ label: `${workers} worker(s)`, workers, natsServers: 1, replicas: 1 }))
const costOf = (workers: number) => scale.find((r) => r.workers === workers)?.cpu_s_per_1k_messages.total
const base = costOf(Math.min(...SCALE_WORKERS))
const vsFewest = Object.fromEntries(scale.map((r) => [String(r.workers), base ? round2(r.cpu_s_per_1k_messages.total / base) : null]))

const rebalance = SKIP_REBALANCE ? null : await runWorkload({ label: "2 workers + 1 joining", workers: 2, natsServers: 1, replicas: 1, join: true })

let replication: Record<string, unknown> | null = null
if (!SKIP_REPLICATION) {
  const r1 = scale.find((r) => r.workers === 2) ?? await runWorkload({ label: "2 workers, NATS R1", workers: 2, natsServers: 1, replicas: 1 })
  const r3 = await runWorkload({ label: "2 workers, NATS cluster R3", workers: 2, natsServers: 3, replicas: 3 })
  replication = {
    r1_one_server: { wall_s: r1.wall_s, cpu_s_per_1k_messages: r1.cpu_s_per_1k_messages, exact: r1.exact },
    r3_three_servers: r3,
    cpu_per_1k_r3_vs_r1: round2(r3.cpu_s_per_1k_messages.total / r1.cpu_s_per_1k_messages.total),
    nats_cpu_per_1k_r3_vs_r1: r1.cpu_s_per_1k_messages.nats > 0 ? round2(r3.cpu_s_per_1k_messages.nats / r1.cpu_s_per_1k_messages.nats) : null,
    herald_cpu_per_1k_r3_vs_r1: round2(r3.cpu_s_per_1k_messages.herald / r1.cpu_s_per_1k_messages.herald),
    wall_r3_vs_r1: round2(r3.wall_s / r1.wall_s)
  }
}

const runs = [...scale, ...(rebalance ? [rebalance] : []), ...(replication ? [replication.r3_three_servers as typeof scale[number]] : [])]
const exact = runs.every((r) => r.exact)
console.log(JSON.stringify({
  bench: "scale-out",
  recipients: N,
  webhook_deliveries: DELIVERIES,
  messages: MESSAGES,
  partitions: PARTITIONS,
  db_pool: Number(DB_POOL),
  scale,
  cost_per_1k_vs_fewest_workers: vsFewest,
  ...(costOf(1) !== undefined && costOf(4) !== undefined ? { cost_4_vs_1: round2(costOf(4)! / costOf(1)!) } : {}),
  rebalance: rebalance ? { ...rebalance.rebalance, exact: rebalance.exact, wall_s: rebalance.wall_s } : null,
  replication,
  exact,
  target: { cost_4_vs_1: 1.15, rebalance_s: 5 },
  note: "a message: one broadcast recipient (its send and its DELIVERED and READ reports) or one webhook delivery; Herald = api node + workers + the event emitter (Herald's code committing the webhook events, as sender actors would); Postgres = every postgres process of the machine (reaped backends included); NATS = the run's own nats-server processes; simulator, receiver and this script apart; every process shares the machine's cores; wall time from the broadcast's POST (and the events' emission) until every report is applied and every delivery's attempt committed; rebalance: settled = every worker owns exactly its rendezvous share of every kind"
}))
process.exit(exact ? 0 : 1)
