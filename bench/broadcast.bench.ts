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
import { connect, DiscardPolicy, nanos, RetentionPolicy, StorageType } from "nats"
import type Pg from "pg"
import { CHUNK_TARGETS } from "../src/broadcasts/chunking.ts"
import { type HeraldProcess, heraldEntry, startGatewaySim, startHerald } from "../test/support/HeraldProcess.ts"
import { cleanup, envFor, type Isolation, makeIsolation, NATS_URL } from "../test/support/isolation.ts"
import { freePort } from "../test/support/TcpProxy.ts"
import {
  benchLog,
  cpuCores,
  getBroadcast,
  pgClient,
  RCS_PRICE,
  type RcsSetup,
  rssSampler,
  runRcsBroadcast,
  setUpRcs,
  sleep,
  targetStates
} from "./support/broadcastRuns.ts"
import { round2 } from "./support/figures.ts"
import { cpuSeconds, peakRssMb, rssMb } from "./support/procStats.ts"

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

/**
 * Recipient i: a distinct valid Indian mobile number (+917…) whose last digit is 7, so its last
 * four digits are never one of the simulator's failure rules (0001-0006): every send is accepted.
 */
const phoneOf = (i: number) => `+91${7_000_000_007 + i * 10}`

const log = benchLog("broadcast")

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

// ---- the raw floor, on this machine, in the same database before the broadcast runs ----

const measureFloor = async (iso: Isolation, setup: RcsSetup, n: number) => {
  const db = await pgClient(iso, log)
  let copyS: number, updateS: number
  try {
    // A scratch broadcast owning the rows (broadcast_targets references broadcasts), in the real
    // table with its real indexes and foreign key; emptied again afterwards so the broadcast that
    // is measured starts on an empty table, as it would.
    const scratch = (await db.query<{ id: string }>(
      `INSERT INTO broadcasts (account_id, bot_id, template_id, list_id, name, content, price, status)
       VALUES ($1, $2, $3, $4, 'floor', '{"text":"Big sale today"}', $5, 'running') RETURNING broadcast_id AS id`,
      [setup.accountId, setup.botId, setup.templateId, setup.listId, RCS_PRICE]
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
    const setup = await setUpRcs(node, env, iso, N, log)
    log("floor: COPY, UPDATE, JetStream publish")
    const floor = await measureFloor(iso, setup, N)
    log(`floor ${JSON.stringify(floor)}`)
    const rssBefore = rssMb(node.child.pid!)
    const run = await runRcsBroadcast(node, iso, setup, N, TIMEOUT_MS, log)
    const states = await targetStates(iso, run.id, log)
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
    const setup = await setUpRcs(node, env, iso, SMALL_N, log)
    const simCpu0 = cpuSeconds(sim.child.pid!)
    const started = performance.now()
    const run = await runRcsBroadcast(node, iso, setup, SMALL_N, TIMEOUT_MS, log)
    // Delivered and read keep counting after completion: until every target has both, or until
    // neither has moved for STALL seconds (the simulator gives a callback up after ~10 s of retries).
    let deliveredS: number | null = null
    let readS: number | null = null
    let last: any
    let moved = { at: performance.now(), count: -1 }
    let lastLog = performance.now()
    for (;;) {
      last = await getBroadcast(node, setup.token, run.id, log)
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
    const states = await targetStates(iso, run.id, log)
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
