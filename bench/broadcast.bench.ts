// A broadcast to N (1,000,000) recipients from POST /api/v1/rcs/broadcasts to status completed
// (every target's send outcome in Postgres), the gateway simulator in-process and the bot's
// throughput unlimited, next to the raw floor measured in the same run: COPY of the same N target
// rows into broadcast_targets, one set-based UPDATE of their status, and a plain JetStream publish
// of one ~SendChunk-sized message per chunk (N / CHUNK_TARGETS) on a stream of the same kind.
// The N run's node reaches its simulator by direct calls (GATEWAY_SIM_TRANSPORT=direct) with
// callbacks off (GATEWAY_SIM_CALLBACKS=false). Then SMALL_N (100,000) recipients through
// `herald gateway-sim` as its own process with delivery and read callbacks on: POST → completed,
// and until every target is delivered and read.
// Wall time, recipients/s, peak RSS of each process. Prints one JSON line.
//   npm run bench -- broadcast   (N=1000000, SMALL_N=100000, SKIP_SMALL=1, SIM_TRANSPORT=direct|http for the
//   N run's in-process simulator, TIMEOUT=1800 seconds a wait, STALL=60 seconds without a callback,
//   PROFILE=<dir> for a CPU profile of the N run's node, HEAP_MB=400 its V8 old space, 0 for V8's default)
//
// Setup is not measured: the contacts are written straight into `contacts` by one INSERT …
// generate_series (what an import ends with: E.164 numbers, contact_count kept), not through the
// CSV import (bench/import.bench.ts measures that); account, bot, wallet and template go through
// the CLI and the API as in test/e2e/broadcasts.test.ts.
import { randomUUID } from "node:crypto"
import { once } from "node:events"
import { readFileSync } from "node:fs"
import { connect, DiscardPolicy, nanos, RetentionPolicy, StorageType } from "nats"
import Pg from "pg"
import { CHUNK_TARGETS } from "../src/broadcasts/chunking.ts"
import { type HeraldProcess, heraldCommand, heraldEntry, startGatewaySim, startHerald } from "../test/support/HeraldProcess.ts"
import { callJson } from "../test/support/http.ts"
import { cleanup, envFor, type Isolation, makeIsolation, NATS_URL } from "../test/support/isolation.ts"
import { freePort } from "../test/support/TcpProxy.ts"
import { createBroadcast } from "./support/createBroadcast.ts"
import { round2 } from "./support/figures.ts"
import { cpuSeconds, machineCpu, peakRssMb, rssMb } from "./support/procStats.ts"

const N = Number(process.env.N ?? 1_000_000)
const SMALL_N = Number(process.env.SMALL_N ?? 100_000)
const SKIP_SMALL = process.env.SKIP_SMALL === "1"
const TIMEOUT_MS = Number(process.env.TIMEOUT ?? 1800) * 1000
/** The callbacks run ends when delivered and read counts have not moved for this long. */
const STALL_MS = Number(process.env.STALL ?? 60) * 1000
/** How the N run's node reaches its in-process simulator: `direct` (calls, so Herald's own cost is measured) or `http` (loopback). */
const SIM_TRANSPORT = process.env.SIM_TRANSPORT ?? "direct"
/**
 * HEAP_MB: the N run node's V8 old space cap (--max-old-space-size); 400 by default, as `npm
 * start` and the Docker image run nodes; 0 leaves V8's default (sized from the host's memory).
 */
const HEAP_MB = process.env.HEAP_MB === "0" ? undefined : process.env.HEAP_MB ?? "400"
/** PROFILE=<dir>: the node of the N run writes a CPU profile there when it stops. */
const PROFILE = process.env.PROFILE
const PRICE = 0.1

/**
 * Recipient i: a distinct valid Indian mobile number (+917…) whose last digit is 7, so its last
 * four digits are never one of the simulator's failure rules (0001-0006): every send is accepted.
 */
const phoneOf = (i: number) => `+91${7_000_000_007 + i * 10}`

const log = (message: string) => process.stderr.write(`[broadcast bench] ${message}\n`)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** A connected client of the bench's database; a connection the server ends fails its next query instead of the script. */
const pgClient = async (iso: Isolation) => {
  const client = new Pg.Client({ connectionString: iso.databaseUrl })
  client.on("error", (error) => log(`postgres connection: ${error.message}`))
  await client.connect()
  return client
}

/** GET of a broadcast; a failed or non-200 answer is retried a few times before it counts. */
const getBroadcast = async (node: HeraldProcess, token: string, id: string) => {
  for (let attempt = 1; ; attempt++) {
    try {
      const got = await callJson(node.url, "GET", `/api/v1/rcs/broadcasts/${id}`, token)
      if (got.status === 200 && got.body.broadcast) return got.body.broadcast
      if (attempt >= 5) throw new Error(`GET broadcast answered ${got.status}: ${JSON.stringify(got.body).slice(0, 300)}`)
    } catch (error) {
      if (attempt >= 5) throw error
    }
    log(`GET broadcast failed (attempt ${attempt}); node exit code ${node.child.exitCode}`)
    await sleep(200 * attempt)
  }
}

// ---- processes: memory and CPU from /proc ----

/** Samples a process's RSS (VmHWM is read at the end too; the sampler is for the report's curve). */
const rssSampler = (pids: () => ReadonlyArray<number>) => {
  const peak = new Map<number, number>()
  const timer = setInterval(() => {
    for (const pid of pids()) peak.set(pid, Math.max(peak.get(pid) ?? 0, rssMb(pid)))
  }, 250)
  return { stop: () => clearInterval(timer), peak: (pid: number) => Math.max(peak.get(pid) ?? 0, peakRssMb(pid)) }
}

// ---- Postgres: COPY FROM STDIN through pg's custom-query hook (no pg-copy-streams here) ----

/** Runs `COPY … FROM STDIN` with the text chunks `rows` yields; answers the rows copied. */
const copyIn = (client: Pg.Client, text: string, rows: Iterable<string>) =>
  new Promise<number>((resolve, reject) => {
    let copied = 0
    let failure: Error | undefined
    const query = {
      submit: (connection: any) => connection.query(text),
      handleCopyInResponse: async (connection: any) => {
        try {
          for (const chunk of rows) {
            connection.sendCopyFromChunk(Buffer.from(chunk))
            if (connection.stream.writableNeedDrain) await once(connection.stream, "drain")
          }
          connection.endCopyFrom()
        } catch (error) {
          connection.sendCopyFail(String(error))
        }
      },
      handleCommandComplete: (msg: { text: string }) => {
        copied = Number(/(\d+)$/.exec(msg.text)?.[1] ?? 0)
      },
      handleReadyForQuery: () => (failure ? reject(failure) : resolve(copied)),
      handleError: (error: Error) => {
        failure = error
      }
    }
    client.query(query as any)
  })

/** The COPY text of N targets of `broadcastId`: (broadcast_id, target_no, phone, message_id). */
function* targetRows(broadcastId: string, n: number) {
  let chunk = ""
  for (let i = 0; i < n; i++) {
    chunk += `${broadcastId}\t${i}\t${phoneOf(i)}\t${randomUUID()}\n`
    if (chunk.length >= 256 * 1024) {
      yield chunk
      chunk = ""
    }
  }
  if (chunk.length > 0) yield chunk
}

// ---- a node with an account, an unlimited promotional bot, money, a template and a list ----

interface Setup {
  readonly accountId: string
  readonly botId: string
  readonly templateId: string
  readonly listId: string
  readonly token: string
}

const setUp = async (node: HeraldProcess, env: Record<string, string>, iso: Isolation, n: number): Promise<Setup> => {
  const cli = async (...args: Array<string>) => {
    const r = await heraldCommand(args, env)
    if (r.code !== 0) throw new Error(`herald ${args.join(" ")} exited with ${r.code}: ${r.stderr}`)
    return JSON.parse(r.stdout)
  }
  const accountId = (await cli("admin", "create-account", "--email", "bench@broadcast.io", "--password", "bench password", "--label", "Bench")).account_id
  const botId = (await cli("admin", "create-bot", accountId, "--name", "Bench", "--use-case", "promotional", "--status", "active")).bot_id
  await cli("admin", "bot-throughput", botId, "unlimited")
  await cli("admin", "wallet-credit", accountId, String(Math.ceil(n * PRICE * 2) + 100))
  const token = (await callJson(node.url, "POST", "/api/v1/rcs/auth/login", undefined, { email: "bench@broadcast.io", password: "bench password" })).body.token
  const template = await callJson(node.url, "POST", "/api/v1/rcs/templates", token, { bot_id: botId, name: "bench offer", type: "text", text: "Big sale today" })
  if (template.status !== 200) throw new Error(`template: ${template.status} ${JSON.stringify(template.body)}`)
  const list = await callJson(node.url, "POST", "/api/v1/rcs/contact-lists", token, { name: "bench" })
  if (list.status !== 200) throw new Error(`contact list: ${list.status} ${JSON.stringify(list.body)}`)
  const listId = list.body.list.list_id as string
  const started = performance.now()
  const db = await pgClient(iso)
  try {
    await db.query(
      `INSERT INTO contacts (list_id, phone) SELECT $1, '+91' || (7000000007 + i * 10)::text FROM generate_series(0, $2 - 1) AS i ORDER BY i`,
      [listId, n]
    )
    await db.query("UPDATE contact_lists SET contact_count = $2 WHERE list_id = $1", [listId, n])
    await db.query("VACUUM ANALYZE contacts")
  } finally {
    await db.end()
  }
  log(`${n} contacts written in ${round2((performance.now() - started) / 1000)} s`)
  return { accountId, botId, templateId: template.body.template_id, listId, token }
}

// ---- one broadcast, watched until completed ----

interface Watched {
  readonly id: string
  readonly seconds: number
  readonly timeline: Record<string, number | null>
  readonly final: Record<string, number | string>
  readonly serverSeconds: number
  readonly nodeCpuS: number
  readonly machineBusyCores: number
  /** delivered_count + read_count when the broadcast completed. */
  readonly reportsAtCompletion: number
}

const runBroadcast = async (node: HeraldProcess, iso: Isolation, setup: Setup, n: number): Promise<Watched> => {
  const db = await pgClient(iso)
  try {
    return await watch(node, db, setup, n)
  } finally {
    await db.end().catch(() => undefined)
  }
}

const watch = async (node: HeraldProcess, db: Pg.Client, setup: Setup, n: number): Promise<Watched> => {
  const pid = node.child.pid!
  const cpu0 = cpuSeconds(pid)
  const machine0 = machineCpu()
  const started = performance.now()
  const at = () => round2((performance.now() - started) / 1000)
  const id = await createBroadcast(node.url, setup)
  const timeline: Record<string, number | null> = { running_s: null, first_sent_s: null, targets_written_s: null, half_sent_s: null }
  let lastLog = 0
  let final: any
  for (;;) {
    const b = await getBroadcast(node, setup.token, id)
    if (b.status !== "queued" && timeline.running_s === null) timeline.running_s = at()
    if (b.sent_count + b.failed_count > 0 && timeline.first_sent_s === null) timeline.first_sent_s = at()
    if (b.sent_count + b.failed_count >= n / 2 && timeline.half_sent_s === null) timeline.half_sent_s = at()
    if (timeline.targets_written_s === null && b.status !== "queued") {
      const written = (await db.query<{ n: number | null }>("SELECT max(target_no) + 1 AS n FROM broadcast_targets WHERE broadcast_id = $1", [id])).rows[0]!.n
      if (written !== null && written >= b.total_count && b.total_count > 0) timeline.targets_written_s = at()
    }
    if (b.status === "completed" || b.status === "cancelled") {
      final = b
      break
    }
    if (performance.now() - lastLog > 5_000) {
      lastLog = performance.now()
      log(`${at()} s: ${b.status} sent ${b.sent_count}/${b.total_count} failed ${b.failed_count}; node CPU ${round2(cpuSeconds(pid) - cpu0)} s, RSS ${rssMb(pid)} MB`)
    }
    if (performance.now() - started > TIMEOUT_MS) throw new Error(`broadcast not completed in ${TIMEOUT_MS / 1000} s: ${JSON.stringify(b)}`)
    await sleep(100)
  }
  const seconds = (performance.now() - started) / 1000
  const nodeCpuS = cpuSeconds(pid) - cpu0
  const machine1 = machineCpu()
  const [server] = (await db.query<{ s: number }>("SELECT extract(epoch FROM completed_at - created_at)::float8 AS s FROM broadcasts WHERE broadcast_id = $1", [id])).rows
  log(`${id} ${final.status} after ${round2(seconds)} s`)
  return {
    id,
    seconds,
    timeline,
    final: { status: final.status, total: final.total_count, sent: final.sent_count, failed: final.failed_count, cancelled: final.cancelled_count },
    reportsAtCompletion: final.delivered_count + final.read_count,
    serverSeconds: server!.s,
    nodeCpuS,
    // Of the machine's cores, how many were busy on average (Herald, Postgres, NATS, this script).
    machineBusyCores: (machine1.busy - machine0.busy) / ((machine1.total - machine0.total) / Math.max(1, cpuCores()))
  }
}

const cpuCores = () => readFileSync("/proc/stat", "utf8").split("\n").filter((l) => /^cpu\d/.test(l)).length

/** Targets by status, straight from broadcast_targets. */
const targetStates = async (iso: Isolation, id: string) => {
  const db = await pgClient(iso)
  try {
    const { rows } = await db.query<{ status: string; n: number }>(
      "SELECT status, count(*)::int AS n FROM broadcast_targets WHERE broadcast_id = $1 GROUP BY status ORDER BY status",
      [id]
    )
    return Object.fromEntries(rows.map((r) => [r.status, r.n]))
  } finally {
    await db.end()
  }
}

// ---- the raw floor, on this machine, in the same database before the broadcast runs ----

const measureFloor = async (iso: Isolation, setup: Setup, n: number) => {
  const db = await pgClient(iso)
  let copyS: number, updateS: number
  try {
    // A scratch broadcast owning the rows (broadcast_targets references broadcasts), in the real
    // table with its real indexes and foreign key; emptied again afterwards so the broadcast that
    // is measured starts on an empty table, as it would.
    const scratch = (await db.query<{ id: string }>(
      `INSERT INTO broadcasts (account_id, bot_id, template_id, list_id, name, content, price, status)
       VALUES ($1, $2, $3, $4, 'floor', '{"text":"Big sale today"}', $5, 'running') RETURNING broadcast_id AS id`,
      [setup.accountId, setup.botId, setup.templateId, setup.listId, PRICE]
    )).rows[0]!.id
    await db.query("CHECKPOINT")
    let started = performance.now()
    const copied = await copyIn(db, "COPY broadcast_targets (broadcast_id, target_no, phone, message_id) FROM STDIN", targetRows(scratch, n))
    copyS = (performance.now() - started) / 1000
    if (copied !== n) throw new Error(`COPY wrote ${copied} rows, not ${n}`)
    started = performance.now()
    const updated = await db.query("UPDATE broadcast_targets SET status = 'sent', sent_at = now() WHERE broadcast_id = $1", [scratch])
    updateS = (performance.now() - started) / 1000
    if (updated.rowCount !== n) throw new Error(`UPDATE changed ${updated.rowCount} rows, not ${n}`)
    await db.query("TRUNCATE broadcast_targets, broadcast_chunks")
    await db.query("DELETE FROM broadcasts WHERE broadcast_id = $1", [scratch])
    await db.query("CHECKPOINT")
  } finally {
    await db.end()
  }

  // JetStream: a stream like an actor kind's (file storage, work queue, discard new, duplicate
  // window) and one message per chunk, shaped like the SendChunk command with its Nats-Msg-Id;
  // all published at once, then every ack awaited.
  const chunks = Math.ceil(n / CHUNK_TARGETS)
  const nc = await connect({ servers: NATS_URL })
  let jetstreamS: number
  try {
    const jsm = await nc.jetstreamManager()
    const stream = `${iso.natsPrefix.toUpperCase()}_BENCH_FLOOR`
    const subject = `${iso.natsPrefix}.benchfloor`
    await jsm.streams.add({
      name: stream,
      subjects: [`${subject}.>`],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      discard: DiscardPolicy.New,
      duplicate_window: nanos(120_000)
    })
    const js = nc.jetstream()
    const broadcastId = randomUUID()
    const accountId = setup.accountId
    const encoder = new TextEncoder()
    const started = performance.now()
    const acks = []
    for (let c = 0; c < chunks; c++) {
      const first = c * CHUNK_TARGETS
      const last = Math.min(n, first + CHUNK_TARGETS) - 1
      const body = encoder.encode(JSON.stringify({ _tag: "SendChunk", order: { broadcastId, accountId, chunkNo: c, first, last } }))
      acks.push(js.publish(`${subject}.${c % 8}.${setup.botId}`, body, { msgID: `chunk-${broadcastId}-${c}` }))
    }
    const answered = await Promise.all(acks)
    jetstreamS = (performance.now() - started) / 1000
    if (answered.some((a) => a.duplicate)) throw new Error("a floor publish was taken as a duplicate")
    await jsm.streams.delete(stream)
  } finally {
    await nc.close()
  }
  return {
    copy_s: round2(copyS),
    update_s: round2(updateS),
    jetstream_s: round2(jetstreamS),
    jetstream_messages: chunks,
    total_s: round2(copyS + updateS + jetstreamS)
  }
}

// ---- run 1: N recipients, simulator in-process, callbacks deferred past the run ----

const large = async () => {
  const iso = makeIsolation()
  // Sends only: the simulator sends no delivery or read callbacks.
  const env = envFor(iso, {
    LOG_LEVEL: "warning",
    GATEWAY_SIM_CALLBACKS: "false",
    GATEWAY_SIM_TRANSPORT: SIM_TRANSPORT,
    ...(HEAP_MB === undefined ? {} : { NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` })
  })
  const node = await startHerald(env, PROFILE ? { entry: { argv: ["--cpu-prof", `--cpu-prof-dir=${PROFILE}`, ...heraldEntry.argv, "serve"] } } : {})
  const sampler = rssSampler(() => [node.child.pid!, process.pid])
  try {
    const setup = await setUp(node, env, iso, N)
    log("floor: COPY, UPDATE, JetStream publish")
    const floor = await measureFloor(iso, setup, N)
    log(`floor ${JSON.stringify(floor)}`)
    const rssBefore = rssMb(node.child.pid!)
    const run = await runBroadcast(node, iso, setup, N)
    const states = await targetStates(iso, run.id)
    sampler.stop()
    return {
      recipients: N,
      seconds: round2(run.seconds),
      per_s: Math.round(N / run.seconds),
      server_seconds: round2(run.serverSeconds),
      floor,
      x_floor: round2(run.seconds / floor.total_s),
      peak_rss_mb: {
        node: sampler.peak(node.child.pid!),
        node_before_broadcast: rssBefore,
        bench: sampler.peak(process.pid),
        ...(HEAP_MB === undefined ? {} : { node_old_space_cap: Number(HEAP_MB) })
      },
      timeline: run.timeline,
      cpu: { node_s: round2(run.nodeCpuS), node_cores: round2(run.nodeCpuS / run.seconds), machine_busy_cores: round2(run.machineBusyCores), cores: cpuCores() },
      broadcast: run.final,
      targets_by_status: states
    }
  } catch (error) {
    log(`node output (tail):\n${node.output().slice(-4000)}`)
    throw error
  } finally {
    sampler.stop()
    await (PROFILE ? node.stop() : node.kill())
    await cleanup(iso)
  }
}

// ---- run 2: SMALL_N recipients through `herald gateway-sim` as its own process, callbacks on ----

const small = async () => {
  const iso = makeIsolation()
  const delays = { GATEWAY_SIM_DELIVERED_MS: "200", GATEWAY_SIM_READ_MS: "500" }
  const nodePort = await freePort()
  const simPort = await freePort()
  const sim = await startGatewaySim(simPort, `http://127.0.0.1:${nodePort}`, { LOG_LEVEL: "warning", LOG_FORMAT: "json", ...delays })
  const env = envFor(iso, { LOG_LEVEL: "warning", PORT: String(nodePort), GATEWAY_RBM_URL: `http://127.0.0.1:${simPort}`, ...delays })
  let node: HeraldProcess | undefined
  let sampler: ReturnType<typeof rssSampler> | undefined
  try {
    node = await startHerald(env)
    const live = node
    sampler = rssSampler(() => [live.child.pid!, sim.child.pid!])
    const setup = await setUp(node, env, iso, SMALL_N)
    const simCpu0 = cpuSeconds(sim.child.pid!)
    const started = performance.now()
    const run = await runBroadcast(node, iso, setup, SMALL_N)
    // Delivered and read keep counting after completion: until every target has both, or until
    // neither has moved for STALL seconds (the simulator gives a callback up after ~10 s of retries).
    let deliveredS: number | null = null
    let readS: number | null = null
    let last: any
    let moved = { at: performance.now(), count: -1 }
    let lastLog = performance.now()
    for (;;) {
      last = await getBroadcast(node, setup.token, run.id)
      const now = performance.now()
      const elapsed = (now - started) / 1000
      if (deliveredS === null && last.delivered_count >= last.sent_count) deliveredS = elapsed
      if (readS === null && last.read_count >= last.sent_count) readS = elapsed
      if (deliveredS !== null && readS !== null) break
      if (last.delivered_count + last.read_count !== moved.count) moved = { at: now, count: last.delivered_count + last.read_count }
      if (now - moved.at > STALL_MS || now - started > TIMEOUT_MS) break
      if (now - lastLog > 10_000) {
        lastLog = now
        log(`${round2(elapsed)} s: delivered ${last.delivered_count}, read ${last.read_count} of ${last.sent_count}`)
      }
      await sleep(200)
    }
    const callbackWindowS = (performance.now() - started) / 1000 - run.seconds
    const simTotals = await fetch(`http://127.0.0.1:${simPort}/simulate/log`).then((r) => r.json() as Promise<any>, () => undefined)
    const simCpuS = cpuSeconds(sim.child.pid!) - simCpu0
    const states = await targetStates(iso, run.id)
    sampler.stop()
    return {
      recipients: SMALL_N,
      seconds: round2(run.seconds),
      per_s: Math.round(SMALL_N / run.seconds),
      all_delivered_s: deliveredS === null ? null : round2(deliveredS),
      all_read_s: readS === null ? null : round2(readS),
      delivered: last.delivered_count,
      read: last.read_count,
      // Delivered and read reports applied per second after completion (the sends' own were applied during the run too).
      reports_per_s_after_completed: callbackWindowS > 0 ? Math.round((last.delivered_count + last.read_count - run.reportsAtCompletion) / callbackWindowS) : null,
      simulator_callbacks: simTotals?.callbacks ?? null,
      callbacks: `on: DELIVERED ${delays.GATEWAY_SIM_DELIVERED_MS} ms and READ ${delays.GATEWAY_SIM_READ_MS} ms after each send`,
      peak_rss_mb: { node: sampler.peak(live.child.pid!), simulator: sampler.peak(sim.child.pid!) },
      cpu: { node_s: round2(run.nodeCpuS), simulator_s: round2(simCpuS), machine_busy_cores: round2(run.machineBusyCores) },
      timeline: run.timeline,
      broadcast: run.final,
      targets_by_status: states
    }
  } catch (error) {
    log(`node output (tail):\n${node?.output().slice(-4000)}\nsimulator exit code ${sim.child.exitCode}`)
    throw error
  } finally {
    sampler?.stop()
    await node?.kill()
    await sim.kill()
    await cleanup(iso)
  }
}

const big = await large()
log(`N run: ${JSON.stringify(big)}`)
const httpSim = SKIP_SMALL ? null : await small()
console.log(JSON.stringify({
  bench: "broadcast",
  ...big,
  peak_rss_mb: { ...big.peak_rss_mb, bench: peakRssMb(process.pid) },
  target: { seconds: 60, x_floor: 4, peak_rss_mb_per_node: 512 },
  sim_transport: SIM_TRANSPORT,
  callbacks: "off (GATEWAY_SIM_CALLBACKS=false)",
  http_sim_100k: httpSim,
  note: "one herald process (role all: API, broadcast and sender actors, in-process simulator) with Postgres, NATS and this script on the same cores; seconds = POST to status completed seen by polling GET every 100 ms (server_seconds = completed_at - created_at); contacts written by SQL as setup, not measured; floor = COPY of the same rows into broadcast_targets (real indexes and foreign key) + one UPDATE of their status + JetStream publish of one ~170-byte message per chunk with msg ids, awaited together; http_sim_100k: herald gateway-sim as its own process, callbacks on, all_delivered_s/all_read_s counted from the POST"
}))
process.exit(0)
