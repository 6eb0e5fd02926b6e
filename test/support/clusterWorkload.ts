import { afterAll, beforeAll, expect } from "@effect/vitest"
import { createHash } from "node:crypto"
import { mkdirSync, writeFileSync } from "node:fs"
import http from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import Pg from "pg"
import { ownerOf, partitionOf } from "../../src/actors/runtime/partitioning.ts"
import { eventually } from "./e2e.ts"
import { type HeraldProcess, startGatewaySim, startHerald } from "./HeraldProcess.ts"
import { callJson, cliFor } from "./http.ts"
import { envFor, type Isolation } from "./isolation.ts"
import { type NatsCluster, startNatsCluster } from "./natsCluster.ts"
import { freePort } from "./TcpProxy.ts"

// The deployment and workload of ../shared/design/cluster.md's fault tests, and what "exact" means
// after each fault. A deployment: one api node, two workers and a standalone `herald gateway-sim`
// on a 3-server NATS cluster (HERALD_NATS_REPLICAS=3), a local webhook consumer that refuses the
// first attempt of some deliveries. A workload: broadcasts through the simulator at a bot
// throughput of 200/s (so they run during the fault), a stream of single sends and a stream of
// webhook test events, every HTTP answer recorded. `Workload.verify` then checks exactness.

export const PARTITIONS = 8
/** The bot's messages per second upstream: a 2,000-recipient broadcast takes about 10 s. */
export const RATE = 200
const PRICE = 0.1
const RBM_TOKEN = "cluster-faults-client-token"
/** A request's own ceiling: a send waits at most GATEWAY_TIMEOUT_MS + ~7 s for its outcome. */
const REQUEST_TIMEOUT_MS = 90_000
/** How long a single send answered 503 keeps being retried with its Idempotency-Key. */
const RETRY_CEILING_MS = 240_000

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// ---------------------------------------------------------------------------------------------
// The webhook consumer

interface Seen {
  /** Requests that carried this webhook-id. */
  requests: number
  /** Of them, answered 2xx. */
  ok: number
  /** Whether the first request was refused (500) on purpose. */
  refusedFirst: boolean
}

/** About a quarter of the deliveries, chosen by their id (stable across attempts). */
export const refusesFirst = (deliveryId: string) => createHash("sha1").update(deliveryId).digest()[0]! % 4 === 0

/**
 * A webhook consumer that answers 500 to the first request of about a quarter of the deliveries
 * (by `webhook-id`, the delivery_id) and 200 to everything else, recording what it saw per
 * delivery. Unlike test/support/consumer.ts, the answer depends on the delivery's history.
 */
export const startFlakyConsumer = async () => {
  const seen = new Map<string, Seen>()
  const server = http.createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      const id = String(req.headers["webhook-id"] ?? "")
      let entry = seen.get(id)
      if (entry === undefined) seen.set(id, entry = { requests: 0, ok: 0, refusedFirst: false })
      entry.requests++
      if (entry.requests === 1 && refusesFirst(id)) {
        entry.refusedFirst = true
        res.writeHead(500, { "content-type": "text/plain" }).end("first attempt refused")
        return
      }
      entry.ok++
      res.writeHead(200, { "content-type": "text/plain" }).end("ok")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  return {
    url: `http://127.0.0.1:${port}/hook`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
export type FlakyConsumer = Awaited<ReturnType<typeof startFlakyConsumer>>

// ---------------------------------------------------------------------------------------------
// The deployment

type Owned = Record<string, Array<number>>

/** What a node reports owning (kind → partitions) on /health/ready; undefined when it does not say. */
export const readOwned = (url: string): Promise<Owned | undefined> =>
  fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(2_000) })
    .then(async (r) => ((await r.json()) as { partitions_owned?: Owned }).partitions_owned)
    .catch(() => undefined)

/**
 * Partitions a node holds by its own metric (`herald_actor_partitions_owned`, summed over kinds),
 * read from its metrics port (`HeraldProcess.metricsUrl`). /metrics answers whatever the node's
 * dependencies do, where /health/ready (503 while NATS or Postgres is down) leaves the partitions out.
 */
export const metricOwned = (metricsUrl: string): Promise<number | undefined> =>
  fetch(`${metricsUrl}/metrics`, { signal: AbortSignal.timeout(2_000) })
    .then(async (r) => {
      const lines = (await r.text()).split("\n").filter((line) => line.startsWith("herald_actor_partitions_owned{"))
      // No gauge at all says nothing (a node that never owned anything may not have one yet).
      return lines.length === 0 ? undefined : lines.reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0)
    })
    .catch(() => undefined)

export interface WorkerNode {
  readonly nodeId: string
  readonly env: Record<string, string>
  process: HeraldProcess
  /** What the worker's earlier runs printed (before a kill or a restart). */
  readonly earlier: Array<string>
  /** Between a SIGTERM the test sent and the next start: what it owned is being handed off. */
  stopping: boolean
}

export interface DeploymentOptions {
  readonly iso: Isolation
  readonly nats: NatsCluster
  /** Names the workers (`<name>-w1`, …) and the evidence directory. */
  readonly name: string
  /** Every Herald process's environment on top of the cluster's (e.g. DATABASE_URL through a proxy). */
  readonly nodeEnv?: Record<string, string>
  /** A worker's own additions (e.g. NATS_URL through proxies), by index. */
  readonly workerEnv?: (index: number) => Record<string, string>
  /** Which worker (index) the bot's sender partition must be assigned to; node ids are picked so. */
  readonly senderOwner?: number
}

export interface Ownership {
  readonly reports: Record<string, Owned | undefined>
  /** "kind/partition" → the workers reporting it. */
  readonly owners: Map<string, Array<string>>
}

export class Deployment {
  private constructor(
    readonly options: DeploymentOptions,
    /** The environment of every Herald process (CLI included, with Postgres direct). */
    readonly base: Record<string, string>,
    readonly api: HeraldProcess,
    readonly workers: Array<WorkerNode>,
    readonly sim: Awaited<ReturnType<typeof startGatewaySim>>,
    readonly consumer: FlakyConsumer,
    readonly account: { readonly accountId: string; readonly botId: string; readonly templateId: string; readonly webhookId: string; readonly token: string },
    /** Every (kind/partition) the workers own between them. */
    readonly keys: ReadonlyArray<string>
  ) {}

  get simUrl() {
    return this.sim.url
  }

  /** The bot's sender partition: where its broadcasts and single sends run. */
  get senderPartition() {
    return partitionOf(this.account.botId, PARTITIONS)
  }

  static async start(options: DeploymentOptions): Promise<Deployment> {
    const { iso, nats } = options
    const base = envFor(iso, {
      NATS_URL: nats.urls,
      HERALD_NATS_REPLICAS: "3",
      HERALD_PARTITIONS: String(PARTITIONS),
      GATEWAY_RBM_CLIENT_TOKEN: RBM_TOKEN,
      // A claim a stopped node left goes stale after this + 7 s; a single send waits this + ~7 s.
      GATEWAY_TIMEOUT_MS: "3000",
      // Reports come 100 ms after a send: a target waits this long for one only when its report
      // was lost (its node stopped before the outcome, or the callback could not get through).
      // 20 s: on a loaded machine the callbacks of a killed node's last sends (answered 503 while
      // the API node's pool was busy, retried with backoff) took more than 10 s, and their targets
      // were sent again with their message_id (dropped by RBM, counted twice by the simulator).
      HERALD_BROADCAST_REPORT_WINDOW_MS: "20000",
      GATEWAY_SIM_DELIVERED_MS: "100",
      // Never read within a test: "delivered" is every reached recipient's final status.
      GATEWAY_SIM_READ_MS: "600000",
      // Four Herald processes per file and three files at a time: at the default pool (16 + 1
      // each) they alone would pass Postgres's max_connections of 100 ("too many clients").
      HERALD_DB_POOL: "5",
      LOG_LEVEL: "info"
    })
    const nodeEnv = { ...base, ...options.nodeEnv }
    const cli = cliFor(base)
    const apiPort = await freePort()
    const sim = await startGatewaySim(await freePort(), `http://127.0.0.1:${apiPort}`, base)
    const consumer = await startFlakyConsumer()
    const started: Array<{ kill: () => Promise<unknown> }> = [sim, { kill: consumer.close }]
    try {
      const api = await startHerald({ ...nodeEnv, PORT: String(apiPort), HERALD_ROLE: "api", GATEWAY_RBM_URL: sim.url }, { timeoutMs: 120_000 })
      started.push(api)
      const email = `ops-${options.name}@cluster.io`
      const accountId = (await cli("admin", "create-account", "--email", email, "--password", "cluster password", "--label", options.name)).account_id as string
      const botId = (await cli("admin", "create-bot", accountId, "--name", "Cluster", "--use-case", "promotional", "--status", "active")).bot_id as string
      await cli("admin", "bot-throughput", botId, String(RATE))
      await cli("admin", "wallet-credit", accountId, "100000")
      const token = (await callJson(api.url, "POST", "/api/v1/rcs/auth/login", undefined, { email, password: "cluster password" })).body.token as string
      const template = await callJson(api.url, "POST", "/api/v1/rcs/templates", token, { bot_id: botId, name: "offer", type: "text", text: "Big sale today" })
      expect(template.status, JSON.stringify(template.body)).toBe(200)
      const endpoint = await callJson(api.url, "POST", "/api/v1/rcs/webhooks", token, {
        url: consumer.url,
        events: ["message.sent", "message.delivered", "message.failed", "broadcast.completed"],
        bot_id: null
      })
      expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(200)

      // Node ids chosen so that rendezvous hashing gives the bot's sender partition to the worker
      // the file wants it on (the one it will cut off, say).
      const partition = partitionOf(botId, PARTITIONS)
      let nodeIds = [`${options.name}-w1`, `${options.name}-w2`]
      for (let k = 0; options.senderOwner !== undefined && ownerOf(nodeIds, "sender", partition) !== nodeIds[options.senderOwner]; k++) {
        nodeIds = nodeIds.map((id, i) => (i === options.senderOwner ? `${options.name}-w${i + 1}-${k}` : id))
      }
      // Side by side; every one that came up is in `started` before a failure of another is thrown.
      const starts = await Promise.allSettled(nodeIds.map(async (nodeId, i): Promise<WorkerNode> => {
        const env = { ...nodeEnv, HERALD_ROLE: "worker", HERALD_NODE_ID: nodeId, GATEWAY_RBM_URL: sim.url, ...options.workerEnv?.(i) }
        const process = await startHerald(env, { timeoutMs: 120_000 })
        started.push(process)
        return { nodeId, env, process, earlier: [], stopping: false }
      }))
      const failed = starts.find((s): s is PromiseRejectedResult => s.status === "rejected")
      if (failed !== undefined) throw failed.reason
      const workers = starts.map((s) => (s as PromiseFulfilledResult<WorkerNode>).value)
      const account = { accountId, botId, templateId: template.body.template_id as string, webhookId: endpoint.body.webhook_id as string, token }
      // Every kind's partitions, once both workers have taken theirs.
      const keys = await eventually(async () => {
        const reports = await Promise.all(workers.map((w) => readOwned(w.process.url)))
        const owned = reports.flatMap((r) => Object.entries(r ?? {}).flatMap(([kind, ps]) => ps.map((p) => `${kind}/${p}`)))
        const kinds = new Set(owned.map((k) => k.split("/")[0]))
        expect(kinds.size).toBeGreaterThan(0)
        expect(new Set(owned).size).toBe(kinds.size * PARTITIONS)
        return [...new Set(owned)].sort()
      }, { timeoutMs: 120_000, intervalMs: 250 })
      return new Deployment(options, base, api, workers, sim, consumer, account, keys)
    } catch (error) {
      await Promise.all(started.map((p) => p.kill().catch(() => undefined)))
      throw error
    }
  }

  /** Who reports owning what, sampled from both workers at once. */
  async ownership(): Promise<Ownership> {
    const reports = await Promise.all(this.workers.map(async (w) => [w.nodeId, await readOwned(w.process.url)] as const))
    const owners = new Map<string, Array<string>>()
    for (const [node, owned] of reports) {
      for (const [kind, partitions] of Object.entries(owned ?? {})) {
        for (const p of partitions) owners.set(`${kind}/${p}`, [...(owners.get(`${kind}/${p}`) ?? []), node])
      }
    }
    return { reports: Object.fromEntries(reports), owners }
  }

  /** Until every partition of every kind is owned by exactly one worker. */
  async awaitFullOwnership(timeoutMs = 120_000): Promise<Ownership> {
    return eventually(async () => {
      const seen = await this.ownership()
      const problems = this.keys.filter((k) => seen.owners.get(k)?.length !== 1).map((k) => `${k}: ${seen.owners.get(k)?.join(", ") ?? "none"}`)
      expect(problems, JSON.stringify(seen.reports)).toEqual([])
      return seen
    }, { timeoutMs, intervalMs: 250 })
  }

  /**
   * Until `worker` reports owning every partition; how long that took from `since`. Past the
   * ceiling it fails naming the partitions it lacks and what Postgres's sessions of this
   * database were doing (an epoch raise waiting on a lock is how a takeover stalls).
   */
  async awaitOwnedBy(worker: WorkerNode, since: number, timeoutMs = 60_000): Promise<number> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const owned = await readOwned(worker.process.url)
      const have = new Set(Object.entries(owned ?? {}).flatMap(([kind, ps]) => ps.map((p) => `${kind}/${p}`)))
      const missing = this.keys.filter((k) => !have.has(k))
      if (missing.length === 0) return Date.now() - since
      if (Date.now() > deadline) {
        throw new Error(`${worker.nodeId} did not take over ${missing.join(", ")} in ${timeoutMs} ms; Postgres sessions:\n${await this.pgActivity()}`)
      }
      await sleep(100)
    }
  }

  /** What the sessions on this deployment's database are doing: who waits, who holds a transaction open. */
  async pgActivity(): Promise<string> {
    const client = new Pg.Client({ connectionString: this.options.iso.databaseUrl })
    try {
      await client.connect()
      const { rows } = await client.query(
        `SELECT pid, application_name, state, wait_event_type, wait_event, (now() - xact_start)::text AS in_transaction, pg_blocking_pids(pid) AS blocked_by, left(query, 160) AS query
         FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND (state <> 'idle' OR xact_start IS NOT NULL)`
      )
      return rows.map((r) => JSON.stringify(r)).join("\n") || "(none busy)"
    } catch (error) {
      return `(could not read pg_stat_activity: ${error})`
    } finally {
      await client.end().catch(() => undefined)
    }
  }

  /** The worker that reports owning the bot's sender partition now. */
  async senderOwner(): Promise<WorkerNode> {
    return eventually(async () => {
      const owners = (await this.ownership()).owners.get(`sender/${this.senderPartition}`) ?? []
      expect(owners).toHaveLength(1)
      return this.workers.find((w) => w.nodeId === owners[0])!
    }, { timeoutMs: 60_000, intervalMs: 250 })
  }

  /** SIGTERM and wait for the exit: a graceful stop, as an upgrade does. */
  async stop(worker: WorkerNode): Promise<{ code: number | null; ms: number }> {
    worker.stopping = true
    return worker.process.stop()
  }

  /** Starts a stopped or killed worker again: the same node id and environment. */
  async restart(worker: WorkerNode): Promise<void> {
    if (worker.process.child.exitCode === null && worker.process.child.signalCode === null) throw new Error(`${worker.nodeId} is still running`)
    worker.earlier.push(worker.process.output())
    worker.process = await startHerald(worker.env, { timeoutMs: 120_000 })
    worker.stopping = false
  }

  /**
   * Brings back any worker a fault left down (killed, stopped) or paused, so that the next fault
   * starts from a whole deployment even when this one's test failed half-way.
   */
  async restoreWorkers(): Promise<void> {
    for (const worker of this.workers) {
      worker.process.child.kill("SIGCONT")
      if (worker.process.child.exitCode !== null || worker.process.child.signalCode !== null) await this.restart(worker)
    }
  }

  /** SIGSTOP / SIGCONT: a long GC pause or a frozen VM. */
  pause(worker: WorkerNode) {
    worker.process.child.kill("SIGSTOP")
  }
  resume(worker: WorkerNode) {
    worker.process.child.kill("SIGCONT")
  }

  /**
   * Every Herald process is the one started at the beginning or by `restart` (none exited on its
   * own), each answers /health/ready 200, and every partition has exactly one owner.
   */
  async assertRecovered(timeoutMs = 180_000): Promise<void> {
    const processes = [this.api, ...this.workers.map((w) => w.process)]
    for (const p of processes) expect(p.child.exitCode ?? p.child.signalCode, `a node exited:\n${p.output().slice(-3_000)}`).toBeNull()
    await eventually(async () => {
      const answers = await Promise.all(processes.map((p) => fetch(`${p.url}/health/ready`, { signal: AbortSignal.timeout(3_000) }).then(async (r) => `${r.status} ${await r.text()}`, (e) => String(e))))
      expect(answers.filter((a) => !a.startsWith("200 "))).toEqual([])
    }, { timeoutMs, intervalMs: 500 })
    await this.awaitFullOwnership(timeoutMs)
  }

  /**
   * Writes every process's output and the NATS servers' logs into a directory that outlives the
   * test, and returns where, with the warnings and errors of each node: what a failing fault test
   * prints.
   */
  evidence(label: string): string {
    const dir = join(tmpdir(), `herald-cluster-evidence-${this.options.name}-${label}-${Date.now()}`)
    mkdirSync(dir, { recursive: true })
    const nodes: Array<[string, string]> = [
      ["api", this.api.output()],
      ...this.workers.map((w): [string, string] => [w.nodeId, [...w.earlier, w.process.output()].join("\n--- restarted ---\n")]),
      ["gateway-sim", this.sim.stdout() + this.sim.stderr()]
    ]
    for (const [name, output] of nodes) writeFileSync(join(dir, `${name}.log`), output)
    writeFileSync(join(dir, "nats.log"), this.options.nats.logTails(2_000))
    // Warnings and errors, without the access log's lines for the test's own polling of
    // /health/ready (503 while a dependency is down: expected, and hundreds of them).
    const notable = nodes.map(([name, output]) => {
      const lines = output.split("\n").filter((l) => (/"level":"(WARN|ERROR|FATAL)/i.test(l) || /Error|error:/.test(l)) && !l.includes('"route":"/health/ready"'))
      return `--- ${name}: ${lines.length} warnings/errors, the last:\n${lines.slice(-15).map((l) => l.slice(0, 400)).join("\n")}`
    })
    // Consumer leader elections are routine (one per ephemeral consumer): the rest is what matters.
    return `evidence in ${dir}\n${notable.join("\n")}\n${this.options.nats.logTails(15, /new consumer leader/)}`
  }

  /**
   * Runs a fault test's body: on failure prints the evidence before failing, and either way
   * brings back any worker the fault left down, so the next fault starts from a whole deployment.
   */
  async fault<A>(label: string, body: () => Promise<A>): Promise<A> {
    try {
      // From a whole deployment: a fault the previous test left unrecovered fails here, by name,
      // rather than as this fault's.
      await this.assertRecovered().catch((error) => {
        throw new Error(`the deployment had not recovered before ${label}: ${(error as Error).message}`)
      })
      return await body()
    } catch (error) {
      console.error(this.evidence(label))
      throw error
    } finally {
      // A workload whose test failed before its check still runs: stopped, so that its requests
      // do not count in the next fault's.
      await Promise.all([...this.loads].map((load) => load.halt()))
      await this.restoreWorkers().catch((error) => console.error(`could not restore the workers after ${label}: ${error}`))
    }
  }

  /** Workloads still running their streams: halted on close, whatever the tests did. */
  readonly loads = new Set<{ readonly halt: () => Promise<void> }>()

  async close(): Promise<void> {
    for (const load of this.loads) void load.halt()
    await Promise.all([this.api, ...this.workers.map((w) => w.process), this.sim].map((p) => p.kill().catch(() => undefined)))
    await this.consumer.close()
  }
}

// ---------------------------------------------------------------------------------------------
// Ownership sampling

/** What one worker said about its partitions: a report, nothing (its process is gone), or no answer worth reading. */
type Report = { readonly _tag: "owned"; readonly owned: Owned } | { readonly _tag: "down" } | { readonly _tag: "unknown"; readonly why: string }

const readReport = (url: string): Promise<Report> =>
  fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(2_000) })
    .then(async (r): Promise<Report> => {
      const body = (await r.json()) as { partitions_owned?: Owned }
      return r.status === 200 && body.partitions_owned !== undefined ? { _tag: "owned", owned: body.partitions_owned } : { _tag: "unknown", why: `status ${r.status}` }
    })
    .catch((error): Report => (String((error as { cause?: { code?: string } }).cause?.code) === "ECONNREFUSED" ? { _tag: "down" } : { _tag: "unknown", why: String(error) }))

/**
 * Samples who owns what every `everyMs` until stopped: for each partition, the longest stretch
 * in which no worker reported it (from the last sample that saw it owned to the next that did),
 * and every sample where two workers reported the same partition. A worker whose process is gone
 * owns nothing, and so does one the test is stopping (SIGTERM) once it stops listing them. A
 * running worker whose /health/ready does not list its partitions (a 503 while its pool is busy,
 * no answer within 2 s) is taken to own what it last reported: such samples are counted, and
 * never count as a double.
 */
export const sampleOwnership = (dep: Deployment, options: { readonly everyMs?: number; readonly origin?: number } = {}) => {
  const everyMs = options.everyMs ?? 250
  const origin = options.origin ?? Date.now()
  const lastOwned = new Map<string, number>(dep.keys.map((k) => [k, Date.now()]))
  const lastReport = new Map<string, Owned>()
  /** Each partition's longest gap: from the last sample that saw it owned to the next (Date.now()). */
  const longest = new Map<string, { from: number; to: number }>()
  const doubles: Array<string> = []
  let samples = 0
  let unknown = 0
  let running = true
  const loop = (async () => {
    while (running) {
      const at = Date.now()
      const reports = await Promise.all(dep.workers.map(async (w) => [w.nodeId, await readReport(w.process.url), w.stopping] as const))
      samples++
      const owners = new Map<string, Array<{ node: string; fresh: boolean }>>()
      for (const [node, report, stopping] of reports) {
        if (report._tag === "unknown") unknown++
        if (report._tag === "owned") lastReport.set(node, report.owned)
        // A worker the test is stopping is handing its partitions off: they are not carried over.
        if (report._tag === "down" || stopping) lastReport.delete(node)
        const owned = report._tag === "owned" ? report.owned : report._tag === "unknown" ? lastReport.get(node) ?? {} : {}
        for (const [kind, partitions] of Object.entries(owned)) {
          for (const p of partitions) owners.set(`${kind}/${p}`, [...(owners.get(`${kind}/${p}`) ?? []), { node, fresh: report._tag === "owned" }])
        }
      }
      for (const key of dep.keys) {
        const nodes = owners.get(key) ?? []
        const fresh = nodes.filter((n) => n.fresh)
        if (fresh.length > 1) doubles.push(`${new Date(at).toISOString()} ${key}: ${fresh.map((n) => n.node).join(", ")}`)
        const from = lastOwned.get(key)!
        const was = longest.get(key)
        if (was === undefined || at - from > was.to - was.from) longest.set(key, { from, to: at })
        if (nodes.length > 0) lastOwned.set(key, at)
      }
      await sleep(Math.max(0, everyMs - (Date.now() - at)))
    }
  })()
  // Stopped with the workloads if the test fails before it stops it.
  const handle = {
    halt: async () => {
      running = false
      await loop
    }
  }
  dep.loads.add(handle)
  return {
    stop: async () => {
      dep.loads.delete(handle)
      running = false
      await loop
      const gaps = [...longest].map(([key, w]) => [key, w.to - w.from, w] as const).sort((a, b) => b[1] - a[1])
      return {
        samples,
        unknown,
        doubles,
        longestGapMs: gaps[0]?.[1] ?? 0,
        gapsOver: (ms: number) => gaps.filter(([, gap]) => gap > ms).map(([key, gap]) => `${key}: ${gap} ms`),
        /** The longest gaps with where they lay on the `origin` clock (a workload's marks use it). */
        longestGaps: (n: number) =>
          gaps.slice(0, n).map(([key, gap, w]) => `${key}: ${gap} ms (${((w.from - origin) / 1000).toFixed(1)} s to ${((w.to - origin) / 1000).toFixed(1)} s)`)
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The workload

export interface Answer {
  readonly what: string
  readonly status: number
  readonly code: string | undefined
  readonly retryAfter: string | null
  /** Milliseconds since the workload started. */
  readonly at: number
  /** How long the answer took. */
  readonly ms: number
  /** The request's x-request-id, to find it in the node's log. */
  readonly requestId: string | null
}

interface SingleRun {
  readonly i: number
  readonly phone: string
  readonly key: string
  /** Every answer to the send's copies, in order. */
  readonly answers: Array<Answer>
  final?: { readonly status: number; readonly code: string | undefined; readonly messageId: string | undefined }
}

interface BroadcastRun {
  readonly id: string
  readonly name: string
  readonly phones: ReadonlyArray<string>
}

type TargetRow = {
  readonly target_no: number
  readonly phone: string
  readonly message_id: string
  readonly status: string
  readonly failure_reason: string | null
}

type Query = <R extends Record<string, unknown>>(text: string, values?: ReadonlyArray<unknown>) => Promise<Array<R>>

const is2xx = (status: number) => status >= 200 && status < 300

/** A send's copies as the client saw them: status, when sent and how long the answer took (ms since the workload started), request id. */
const history = (s: SingleRun) => s.answers.map((a) => `${a.status}${a.code ? ` ${a.code}` : ""} at ${a.at}+${a.ms} ms (${a.requestId ?? "no id"})`).join(" → ")

/**
 * One fault's workload. `start` begins the streams of single sends and webhook test events;
 * `broadcast` adds a broadcast (several when a fault has several steps); `stop` ends the streams
 * and waits for the sends in flight; `verify` checks exactness.
 */
export class Workload {
  readonly answers: Array<Answer> = []
  readonly broadcasts: Array<BroadcastRun> = []
  readonly singles: Array<SingleRun> = []
  readonly tests: Array<{ readonly status: number; readonly deliveryId: string | undefined }> = []
  private running = true
  private readonly streams: Array<Promise<void>> = []
  /** When the workload started (Date.now()); answers' `at` counts from it. */
  readonly startedAtMs = Date.now()
  private readonly startedAtDb: string
  private callbacksFailedAtStart = 0
  private replayed = 0
  /** Events of the test (a kill, a resume) on the workload's clock, for the record. */
  readonly marks: Array<{ readonly at: number; readonly label: string }> = []
  /** The simulator's totals every second: repeated sends (sends - messages) over time. */
  private readonly simTimeline: Array<{ readonly at: number; readonly messages: number; readonly sends: number }> = []
  private sampling = true

  private constructor(readonly dep: Deployment, readonly db: Query, readonly run: number, startedAtDb: string) {
    this.startedAtDb = startedAtDb
  }

  /** `run` (0-9) keeps this workload's numbers apart from the other faults' in the same account. */
  static async start(dep: Deployment, db: Query, run: number, options: { readonly sendEveryMs?: number; readonly testEveryMs?: number } = {}) {
    const [now] = await db<{ now: string }>("SELECT now()::text AS now")
    const load = new Workload(dep, db, run, now!.now)
    load.callbacksFailedAtStart = (await load.simTotals()).callbacks.failed
    load.streams.push(load.singlesStream(options.sendEveryMs ?? 300), load.testsStream(options.testEveryMs ?? 600))
    load.sampler = load.sampleSimulator()
    dep.loads.add(load)
    return load
  }

  /** Ends every loop and waits for what is in flight (the test failed before its check). */
  async halt() {
    this.running = false
    this.sampling = false
    this.dep.loads.delete(this)
    // A send that keeps being answered 503 is retried for minutes: not waited for that long.
    await Promise.race([Promise.all([...this.streams, this.sampler]), sleep(30_000)])
  }

  private sampler: Promise<void> = Promise.resolve()

  private async sampleSimulator() {
    while (this.sampling) {
      const totals = await this.simTotals().catch(() => undefined)
      if (totals !== undefined) this.simTimeline.push({ at: Date.now() - this.startedAtMs, messages: totals.messages, sends: totals.sends })
      await sleep(1_000)
    }
  }

  /** Notes an event of the test (a kill, a resume) on the workload's clock. */
  mark(label: string) {
    this.marks.push({ at: Date.now() - this.startedAtMs, label })
  }

  /**
   * When the simulator got send requests for messages it already had (its sends minus its
   * messages grew), second by second, beside the test's marks: who sent twice, and when.
   */
  repeatsTimeline(): string {
    const rows: Array<string> = []
    let last = this.simTimeline[0] === undefined ? 0 : this.simTimeline[0].sends - this.simTimeline[0].messages
    for (const t of this.simTimeline) {
      const repeated = t.sends - t.messages
      if (repeated !== last) rows.push(`${(t.at / 1000).toFixed(1)} s: +${repeated - last}`)
      last = repeated
    }
    return `marks: ${this.marks.map((m) => `${(m.at / 1000).toFixed(1)} s ${m.label}`).join("; ")}; repeated sends by second: ${rows.join(", ") || "none"}`
  }

  private async request(what: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const at = Date.now() - this.startedAtMs
    try {
      const res = await fetch(`${this.dep.api.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${this.dep.account.token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
        body: body !== undefined ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS)
      })
      const text = await res.text()
      let parsed: any = {}
      try {
        parsed = text.startsWith("{") ? JSON.parse(text) : {}
      } catch {
        parsed = { unparsed: text.slice(0, 200) }
      }
      const answer: Answer = { what, status: res.status, code: parsed.code, retryAfter: res.headers.get("retry-after"), at, ms: Date.now() - this.startedAtMs - at, requestId: res.headers.get("x-request-id") }
      this.answers.push(answer)
      return { ...answer, body: parsed }
    } catch (error) {
      // No answer at all (refused, reset, or nothing within the ceiling): recorded as status 0.
      const answer: Answer = { what, status: 0, code: String(error), retryAfter: null, at, ms: Date.now() - this.startedAtMs - at, requestId: null }
      this.answers.push(answer)
      return { ...answer, body: {} as any }
    }
  }

  /**
   * A write the client retries as a careful client would: on 503 (after Retry-After), on no
   * answer, and on 409 idempotency_key_in_use, always with the same Idempotency-Key, so that it
   * runs once however many copies are sent.
   */
  private async idempotent(what: string, path: string, body: unknown, key: string, answers: Array<Answer> = []) {
    const deadline = Date.now() + RETRY_CEILING_MS
    for (;;) {
      const answer = await this.request(what, "POST", path, body, { "idempotency-key": key })
      answers.push(answer)
      const again = answer.status === 503 || answer.status === 0 || (answer.status === 409 && answer.code === "idempotency_key_in_use")
      if (!again || Date.now() > deadline) return answer
      await sleep(Math.min(5, Math.max(1, Number(answer.retryAfter) || 1)) * 1_000)
    }
  }

  private async singlesStream(everyMs: number) {
    const inFlight = new Set<Promise<void>>()
    // At most 8 waiting at once: while a fault holds answers back, the stream slows with them.
    for (let i = 0; this.running && i < 10_000; i++) {
      while (inFlight.size >= 8) await Promise.race(inFlight)
      const sent = this.single(i).finally(() => inFlight.delete(sent))
      inFlight.add(sent)
      await sleep(everyMs)
    }
    await Promise.all(inFlight)
  }

  private async single(i: number) {
    const record: SingleRun = { i, phone: `+918${this.run}${String(i).padStart(4, "0")}1234`, key: `cluster-${this.run}-single-${i}`, answers: [] }
    this.singles.push(record)
    const answer = await this.idempotent("send", "/api/v1/rcs/messages/send", { bot_id: this.dep.account.botId, to: record.phone, text: `single ${i}` }, record.key, record.answers)
    record.final = { status: answer.status, code: answer.code, messageId: answer.body.message_id }
  }

  /** Webhook test events: not idempotent (no key), so never retried; a 503 must have had no effect. */
  private async testsStream(everyMs: number) {
    const inFlight = new Set<Promise<void>>()
    while (this.running) {
      const sent = this.request("webhook test", "POST", `/api/v1/rcs/webhooks/${this.dep.account.webhookId}/test`).then((answer) => {
        this.tests.push({ status: answer.status, deliveryId: answer.body.delivery_id })
      }).finally(() => inFlight.delete(sent))
      inFlight.add(sent)
      await sleep(everyMs)
    }
    await Promise.all(inFlight)
  }

  /**
   * A broadcast to a new list of `size` numbers: mostly ordinary ones (delivered), every 50th
   * refused at once (0001, failed) and every 50th delivered and never read (0005).
   */
  async broadcast(size = 2_000): Promise<BroadcastRun> {
    const b = this.broadcasts.length
    const phones = Array.from({ length: size }, (_, i) => {
      const j = String(Math.floor(i / 50)).padStart(3, "0")
      return i % 50 === 7 ? `+917${this.run}${b}${j}0001` : i % 50 === 21 ? `+917${this.run}${b}${j}0005` : `+917${this.run}${b}${String(i).padStart(5, "0")}77`
    })
    const name = `run ${this.run} broadcast ${b}`
    // A 503 (the API node's pool had no free connection within 5 s, nothing written) is answered
    // as a client would: again after Retry-After. A list created twice would only leave one unused.
    const deadline = Date.now() + RETRY_CEILING_MS
    let list = await this.request("create list", "POST", "/api/v1/rcs/contact-lists", { name })
    while (list.status === 503 && Date.now() < deadline) {
      await sleep(Math.min(5, Math.max(1, Number(list.retryAfter) || 1)) * 1_000)
      list = await this.request("create list", "POST", "/api/v1/rcs/contact-lists", { name })
    }
    expect(list.status, JSON.stringify(list.body)).toBe(200)
    const listId = list.body.list.list_id as string
    const imported = await this.idempotent("import", `/api/v1/rcs/contact-lists/${listId}/contacts`, { contacts: phones.map((phone) => ({ phone })) }, `cluster-${this.run}-import-${b}`)
    expect(imported.body.added, JSON.stringify(imported.body).slice(0, 300)).toBe(size)
    const created = await this.idempotent(
      "create broadcast",
      "/api/v1/rcs/broadcasts",
      { name, bot_id: this.dep.account.botId, template_id: this.dep.account.templateId, contact_list_id: listId },
      `cluster-${this.run}-broadcast-${b}`
    )
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    const run: BroadcastRun = { id: created.body.broadcast.id, name, phones }
    this.broadcasts.push(run)
    return run
  }

  async broadcastNow(b: BroadcastRun) {
    const answer = await this.request("read broadcast", "GET", `/api/v1/rcs/broadcasts/${b.id}`)
    return answer.body.broadcast as Record<string, any> | undefined
  }

  /** Until the broadcast has settled more than `n` targets: it is under way. */
  async untilProgress(b: BroadcastRun, n: number) {
    await eventually(async () => {
      const now = await this.broadcastNow(b)
      expect((now?.sent_count ?? 0) + (now?.failed_count ?? 0), `${b.name} under way: ${JSON.stringify(now)}`).toBeGreaterThan(n)
    }, { timeoutMs: 180_000, intervalMs: 200 })
  }

  /** Ends the streams and waits for what is in flight (a send answered 503 is retried till it is not). */
  async stop() {
    this.running = false
    await Promise.all(this.streams)
  }

  private async simTotals() {
    return (await fetch(`${this.dep.simUrl}/simulate/log`)).json() as Promise<{ messages: number; sends: number; deliveries: number; callbacks: { failed: number; pending: number } }>
  }

  private async simLog(messageId: string) {
    return (await fetch(`${this.dep.simUrl}/simulate/log?message_id=${messageId}`)).json() as Promise<{ sends: number; deliveries: number }>
  }

  /** The simulator's log of each message, 100 requests at a time. */
  private async simLogs(messageIds: ReadonlyArray<string>) {
    const logs = new Map<string, { sends: number; deliveries: number }>()
    for (let i = 0; i < messageIds.length; i += 100) {
      await Promise.all(messageIds.slice(i, i + 100).map(async (id) => logs.set(id, await this.simLog(id))))
    }
    return logs
  }

  /**
   * Sent messages whose delivery report the simulator gave up on (it retries a callback for about
   * two minutes; RBM for 7 days) have it sent again, as RBM would: only when the simulator counts
   * callbacks given up on since this workload started, and only for messages it delivered.
   */
  private async replayLostReports(messageIds: ReadonlyArray<string>) {
    if ((await this.simTotals()).callbacks.failed <= this.callbacksFailedAtStart) return
    const logs = await this.simLogs(messageIds)
    for (const id of messageIds) {
      if (logs.get(id)?.deliveries !== 1) continue
      await fetch(`${this.dep.simUrl}/simulate/replay-callback`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message_id: id }) })
      this.replayed++
    }
  }

  /** Waits until the messages have left `sent`/`queued`/`unconfirmed` (their reports came). */
  private async settled<R extends { status: string; message_id: string }>(read: () => Promise<Array<R>>, what: string) {
    const started = Date.now()
    let lastReplay = 0
    return eventually(async () => {
      const rows = await read()
      const waiting = rows.filter((r) => ["pending", "queued", "sent", "unconfirmed"].includes(r.status))
      if (waiting.length > 0 && Date.now() - started > 20_000 && Date.now() - lastReplay > 10_000) {
        lastReplay = Date.now()
        await this.replayLostReports(waiting.map((r) => r.message_id))
      }
      expect(waiting.map((r) => `${what} ${r.message_id}: ${r.status}`).slice(0, 20)).toEqual([])
      return rows
    }, { timeoutMs: 180_000, intervalMs: 500 })
  }

  /** Every broadcast: completed, each target as the simulator saw it, counters, charges, one broadcast.completed. */
  private async verifyBroadcasts() {
    const summary: Array<Record<string, unknown>> = []
    for (const b of this.broadcasts) {
      const done = await eventually(async () => {
        const now = await this.broadcastNow(b)
        expect(now?.status, `broadcast ${b.name}: ${JSON.stringify(now)}`).toBe("completed")
        return now!
      }, { timeoutMs: 300_000, intervalMs: 500 }).catch(async (error) => {
        // Where it stands: its targets by status, its chunks' claims, and the streams that carry
        // its commands (the broadcast actor's and the bot's sender's).
        const targets = await this.db("SELECT status, count(*)::int AS n FROM broadcast_targets WHERE broadcast_id = $1 GROUP BY 1", [b.id])
        const chunks = await this.db("SELECT chunk_no, claimed_upto, claimed_at::text FROM broadcast_chunks WHERE broadcast_id = $1 ORDER BY 1", [b.id])
        const prefix = this.dep.options.iso.natsPrefix.toUpperCase()
        const streams = await this.dep.options.nats.describe((name) => name === `${prefix}_BROADCAST` || name === `${prefix}_SENDER`).catch((e) => String(e))
        throw new Error(`${(error as Error).message}\ntargets ${JSON.stringify(targets)}\nchunks ${JSON.stringify(chunks)}\n${streams}`)
      })
      const targets = await this.settled(
        () => this.db<TargetRow>("SELECT target_no, phone, message_id::text, status, failure_reason FROM broadcast_targets WHERE broadcast_id = $1 ORDER BY target_no", [b.id]),
        `${b.name} target`
      )
      expect(targets).toHaveLength(b.phones.length)
      const logs = await this.simLogs(targets.map((t) => t.message_id))
      const mismatches: Array<string> = []
      let resentFailed = 0
      for (const t of targets) {
        const seen = logs.get(t.message_id)!
        const want = t.phone.endsWith("0001") ? "failed" : "delivered"
        if (t.status !== want) mismatches.push(`${t.phone} (#${t.target_no}): ${t.status} (${t.failure_reason}), expected ${want}; the simulator: ${JSON.stringify(seen)}`)
        if (seen.deliveries > 1) mismatches.push(`${t.phone}: reached ${seen.deliveries} times`)
        if (want === "delivered" && (seen.sends !== 1 || seen.deliveries !== 1)) mismatches.push(`${t.phone} (#${t.target_no}, ${t.status}): ${seen.sends} sends, ${seen.deliveries} deliveries`)
        // A refused target a stopped node had claimed may be sent again once the window passed
        // (no report comes for a refusal): the contract's rule, not a double.
        if (want === "failed" && seen.deliveries !== 0) mismatches.push(`${t.phone}: failed but reached the recipient`)
        if (want === "failed" && seen.sends > 1) resentFailed++
      }
      expect(mismatches.slice(0, 30), `${b.name}: ${mismatches.length} targets not exact (${this.repeatsTimeline()})`).toEqual([])

      const count = (status: string) => targets.filter((t) => t.status === status).length
      const final = await this.broadcastNow(b)
      expect(final).toMatchObject({
        total_count: b.phones.length,
        sent_count: count("delivered"),
        delivered_count: count("delivered"),
        read_count: 0,
        failed_count: count("failed"),
        cancelled_count: 0
      })
      expect(done).toMatchObject({ sent_count: final!.sent_count, failed_count: final!.failed_count })

      // Charges: one per message the gateway took, net of refunds, however they were recorded.
      const [money] = await this.db<{ charged: string; refunded: string }>(
        `SELECT coalesce(sum(amount) FILTER (WHERE kind = 'charge'), 0)::text AS charged, coalesce(sum(amount) FILTER (WHERE kind = 'refund'), 0)::text AS refunded
         FROM wallet_transactions
         WHERE reference LIKE $1 OR reference IN (SELECT message_id::text FROM broadcast_targets WHERE broadcast_id = $2)`,
        [`broadcast:${b.id}:%`, b.id]
      )
      expect(Number(money!.charged) - Number(money!.refunded), `${b.name}: charges`).toBeCloseTo(final!.sent_count * PRICE, 4)

      // Created once (its request may have been sent several times), and completed once.
      const [rows] = await this.db<{ n: number }>("SELECT count(*)::int AS n FROM broadcasts WHERE name = $1", [b.name])
      expect(rows!.n, `${b.name}: broadcasts created`).toBe(1)
      const completed = await this.db<{ data: any }>(
        "SELECT envelope->'data' AS data FROM webhook_deliveries WHERE webhook_id = $1 AND event_type = 'broadcast.completed' AND envelope->'data'->>'broadcast_id' = $2",
        [this.dep.account.webhookId, b.id]
      )
      expect(completed, `${b.name}: broadcast.completed events`).toHaveLength(1)
      expect(completed[0]!.data).toMatchObject({ status: "completed", total_count: b.phones.length, sent_count: final!.sent_count, failed_count: final!.failed_count })
      summary.push({ broadcast: b.name, sent: final!.sent_count, failed: final!.failed_count, refused_resent: resentFailed })
    }
    return summary
  }

  /**
   * Every single send: a 2xx has exactly one message (by its recipient, unique to the send), sent
   * once to the simulator and delivered, charged once, with one message.sent and one
   * message.delivered event; a 504 send_unconfirmed (the contract's answer when the outcome did
   * not come in time) has one message, reached at most once; any other final answer has none.
   */
  private async verifySingles() {
    const finals = this.singles.map((s) => s.final)
    expect(finals.filter((f) => f === undefined)).toEqual([])
    const notAccepted = this.singles.filter((s) => !is2xx(s.final!.status) && !(s.final!.status === 504 && s.final!.code === "send_unconfirmed"))
    expect(notAccepted.map((s) => `${s.key}: ${history(s)} ${s.final!.code ?? ""}`), "single sends that never got an answer with a message").toEqual([])
    const rows = await this.settled(
      () => this.db<{ message_id: string; recipient: string; status: string; created: number }>(
        `SELECT message_id::text, recipient, status, (extract(epoch FROM created_at) * 1000 - ${this.startedAtMs})::int AS created
         FROM messages WHERE bot_id = $1 AND source = 'api' AND recipient = ANY($2)`,
        [this.dep.account.botId, this.singles.map((s) => s.phone)]
      ),
      "single"
    )
    const byPhone = new Map<string, Array<{ message_id: string; status: string; created: number }>>()
    for (const r of rows) byPhone.set(r.recipient, [...(byPhone.get(r.recipient) ?? []), r])
    const ids = this.singles.map((s) => s.final!.messageId).filter((id): id is string => id !== undefined)
    const logs = await this.simLogs(ids)
    const charges = await this.db<{ reference: string; kind: string }>("SELECT reference, kind FROM wallet_transactions WHERE reference = ANY($1)", [ids])
    const mismatches: Array<string> = []
    let unconfirmedResent = 0
    for (const s of this.singles) {
      const { status, messageId } = s.final!
      const mine = byPhone.get(s.phone) ?? []
      const seen = messageId === undefined ? undefined : logs.get(messageId)
      if (messageId === undefined) {
        if (mine.length > 0) mismatches.push(`${s.key} (${history(s)}): no message given, yet ${mine.length} recorded`)
        continue
      }
      if (mine.length !== 1 || mine[0]!.message_id !== messageId) mismatches.push(`${s.key} (${history(s)}): answered ${messageId}, recorded ${JSON.stringify(mine)}`)
      const kinds = charges.filter((c) => c.reference === messageId).map((c) => c.kind).sort()
      if (is2xx(status)) {
        if (seen?.sends !== 1 || seen.deliveries !== 1) mismatches.push(`${s.key} ${messageId}: ${JSON.stringify(seen)} at the simulator`)
        if (mine[0]?.status !== "delivered") mismatches.push(`${s.key} ${messageId}: ${mine[0]?.status}`)
        if (JSON.stringify(kinds) !== JSON.stringify(["charge"])) mismatches.push(`${s.key} ${messageId}: ledger ${JSON.stringify(kinds)}`)
      } else {
        // The outcome did not reach the caller in time: a new owner of the bot may send the message
        // again with its id (README, Messaging: at most once to the recipient), so only the
        // recipient's count is held to one; the repeats are counted for the record.
        if ((seen?.deliveries ?? 0) > 1) mismatches.push(`${s.key} ${messageId} (unconfirmed): ${JSON.stringify(seen)} at the simulator`)
        if ((seen?.sends ?? 0) > 1) unconfirmedResent++
        if (mine[0] !== undefined && (mine[0].status === "delivered") !== (seen?.deliveries === 1)) {
          mismatches.push(`${s.key} ${messageId} (unconfirmed): ${mine[0].status}, the simulator ${JSON.stringify(seen)}`)
        }
      }
    }
    if (mismatches.length > 0) {
      // A send with no message recorded: where its command is (the bot's sender stream).
      const stream = `${this.dep.options.iso.natsPrefix.toUpperCase()}_SENDER`
      const state = await this.dep.options.nats.describe((name) => name === stream).catch((e) => String(e))
      expect(mismatches.slice(0, 30), `${mismatches.length} single sends not exact (${this.repeatsTimeline()})\n${state}`).toEqual([])
    }

    // Their events: one message.sent and one message.delivered each (for an unconfirmed send,
    // at most one of each).
    const events = await eventually(async () => {
      const found = await this.db<{ message_id: string; event_type: string }>(
        "SELECT envelope->'data'->>'message_id' AS message_id, event_type FROM webhook_deliveries WHERE webhook_id = $1 AND event_type LIKE 'message.%' AND envelope->'data'->>'message_id' = ANY($2)",
        [this.dep.account.webhookId, ids]
      )
      const delivered = this.singles.filter((s) => is2xx(s.final!.status)).map((s) => s.final!.messageId!)
      expect(delivered.filter((id) => found.filter((e) => e.message_id === id).length < 2)).toEqual([])
      return found
    }, { timeoutMs: 120_000, intervalMs: 500 })
    const eventProblems: Array<string> = []
    for (const s of this.singles) {
      const types = events.filter((e) => e.message_id === s.final!.messageId).map((e) => e.event_type).sort()
      const want = ["message.delivered", "message.sent"]
      if (is2xx(s.final!.status) ? JSON.stringify(types) !== JSON.stringify(want) : new Set(types).size !== types.length) {
        eventProblems.push(`${s.key} ${s.final!.messageId}: ${types.join(", ")}`)
      }
    }
    expect(eventProblems.slice(0, 30), `${eventProblems.length} single sends with events not exact`).toEqual([])
    return { sends: this.singles.length, unconfirmed: this.singles.filter((s) => s.final!.status === 504).length, unconfirmed_sent_again: unconfirmedResent }
  }

  /**
   * Every delivery made since the workload started succeeds, its attempts numbered 1..n without a
   * gap or a repeat, only the last one 2xx, and the consumer got it (at least once; as often as
   * there are attempt rows, or more after a kill); every accepted test event has exactly one
   * delivery, and a refused one none.
   */
  private async verifyWebhooks() {
    const { webhookId } = this.dep.account
    const deliveries = await eventually(async () => {
      const rows = await this.db<{ delivery_id: string; event_type: string; attempts: Array<number> | null; codes: Array<number> | null; answers: Array<string> | null }>(
        `SELECT d.delivery_id, d.event_type, array_agg(a.attempt ORDER BY a.attempt) FILTER (WHERE a.attempt IS NOT NULL) AS attempts,
                array_agg(a.status_code ORDER BY a.attempt) FILTER (WHERE a.attempt IS NOT NULL) AS codes,
                array_agg(a.attempt || ' ' || a.status_code || ' ' || a.sent_at || ' ' || left(a.response_snippet, 80) ORDER BY a.attempt) FILTER (WHERE a.attempt IS NOT NULL) AS answers
         FROM webhook_deliveries d LEFT JOIN webhook_attempts a ON a.delivery_id = d.delivery_id
         WHERE d.webhook_id = $1 AND d.created_at >= $2::timestamptz GROUP BY 1, 2`,
        [webhookId, this.startedAtDb]
      )
      const unfinished = rows.filter((r) => !(r.codes ?? []).some(is2xx))
      expect(unfinished.map((r) => `${r.delivery_id} (${r.event_type}): ${JSON.stringify(r.codes)}`).slice(0, 20)).toEqual([])
      return rows
    }, { timeoutMs: 180_000, intervalMs: 1_000 }).catch(async (error) => {
      throw new Error(`${(error as Error).message}\n${await this.diagnoseDeliveries()}`)
    })
    const problems: Array<string> = []
    const unanswered: Array<string> = []
    for (const d of deliveries) {
      const attempts = d.attempts ?? []
      const codes = d.codes ?? []
      if (attempts.some((n, i) => n !== i + 1)) problems.push(`${d.delivery_id}: attempts ${attempts.join(", ")}`)
      if (codes.slice(0, -1).some(is2xx) || !is2xx(codes.at(-1) ?? 0)) problems.push(`${d.delivery_id}: answers ${codes.join(", ")}`)
      // Every attempt the consumer answered reached it (an attempt with no answer, status 0,
      // may have failed before it left the node).
      const answered = codes.filter((c) => c !== 0).length
      const seen = this.dep.consumer.seen.get(d.delivery_id)
      if (seen === undefined || seen.ok < 1 || seen.requests < answered) {
        problems.push(`${d.delivery_id} (${d.event_type}): attempts [${(d.answers ?? []).join(" | ")}], the consumer saw ${JSON.stringify(seen)}`)
      }
      if (codes.includes(0)) unanswered.push(`${d.delivery_id}: ${(d.answers ?? []).filter((a) => a.split(" ")[1] === "0").join(" | ")}`)
    }
    expect(problems.slice(0, 30), `${problems.length} deliveries not exact`).toEqual([])
    const dead = await this.db<{ delivery_id: string; reason: string }>("SELECT delivery_id, reason FROM webhook_dead_letters WHERE webhook_id = $1", [webhookId])
    expect(dead).toEqual([])
    // Every request the consumer got belongs to a delivery Herald recorded.
    const known = new Set((await this.db<{ delivery_id: string }>("SELECT delivery_id FROM webhook_deliveries WHERE webhook_id = $1", [webhookId])).map((r) => r.delivery_id))
    expect([...this.dep.consumer.seen.keys()].filter((id) => !known.has(id))).toEqual([])

    const accepted = this.tests.filter((t) => is2xx(t.status))
    const testDeliveries = deliveries.filter((d) => d.event_type === "webhook.test").map((d) => d.delivery_id).sort()
    expect(testDeliveries, "webhook.test deliveries = accepted test requests").toEqual(accepted.map((t) => t.deliveryId).sort())
    // The consumer's refusals were retried: the retry path ran.
    const retried = deliveries.filter((d) => this.dep.consumer.seen.get(d.delivery_id)?.refusedFirst === true && (d.attempts?.length ?? 0) >= 2)
    expect(retried.length).toBeGreaterThan(0)
    return {
      deliveries: deliveries.length,
      tests: accepted.length,
      first_refused_then_retried: retried.length,
      most_attempts: Math.max(...deliveries.map((d) => d.attempts?.length ?? 0)),
      attempts_without_answer: unanswered.slice(0, 10)
    }
  }

  /**
   * Where the deliveries that never finished are stuck: each one's Start in the outbox (published
   * or not), its actor's state row, any parked command, its partition, and that partition's
   * consumer on the cluster (pending, waiting for an ack, delivered and acknowledged up to).
   */
  private async diagnoseDeliveries(): Promise<string> {
    const stuck = await this.db<{ delivery_id: string }>(
      `SELECT d.delivery_id FROM webhook_deliveries d
       WHERE d.webhook_id = $1 AND d.created_at >= $2::timestamptz
         AND NOT EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.delivery_id = d.delivery_id AND a.status_code BETWEEN 200 AND 299)
       LIMIT 10`,
      [this.dep.account.webhookId, this.startedAtDb]
    )
    const lines: Array<string> = []
    for (const { delivery_id: id } of stuck) {
      const outbox = await this.db("SELECT outbox_id, subject, created_at::text, published_at::text FROM actor_outbox WHERE msg_id = $1", [`start-${id}`])
      const state = await this.db(
        "SELECT last_seq::text, updated_at::text, state->'phase' AS phase, state->'attempt' AS attempt, state->'deferrals' AS deferrals FROM actor_delivery WHERE actor_key = $1",
        [id]
      ).catch((e) => [{ error: String(e) }])
      const timers = await this.db("SELECT timer_id, fire_at::text, left(command::text, 80) AS command FROM actor_timers WHERE kind = 'delivery' AND actor_key = $1", [id])
      const parked = await this.db("SELECT seq::text, left(error, 200) AS error, attempts FROM actor_poison WHERE kind = 'delivery' AND actor_key = $1", [id])
      lines.push(`${id} (delivery partition ${partitionOf(id, PARTITIONS)}): outbox ${JSON.stringify(outbox)}; state ${JSON.stringify(state)}; timers ${JSON.stringify(timers)}; parked ${JSON.stringify(parked)}`)
    }
    const owners = await this.dep.ownership()
    lines.push(`delivery partitions now: ${Array.from({ length: PARTITIONS }, (_, p) => `${p}: ${owners.owners.get(`delivery/${p}`)?.join(", ") ?? "none"}`).join("; ")}; now ${new Date().toISOString()}`)
    const stream = `${this.dep.options.iso.natsPrefix.toUpperCase()}_DELIVERY`
    lines.push(await this.dep.options.nats.describe((name) => name === stream).catch((e) => `(no JetStream state: ${e})`))
    return lines.join("\n")
  }

  /** No request went unanswered; no 5xx but 503 (each with Retry-After) and the send's documented 504. */
  private verifyAnswers() {
    const bad = this.answers.filter((a) =>
      a.status === 0 ||
      (a.status >= 500 && a.status !== 503 && !(a.status === 504 && a.what === "send" && a.code === "send_unconfirmed"))
    )
    expect(bad.map((a) => `${a.what} at ${a.at} ms: ${a.status} ${a.code ?? ""}`).slice(0, 30), "answers that are neither 2xx/4xx, 503 nor the send's 504").toEqual([])
    const without = this.answers.filter((a) => a.status === 503 && (a.retryAfter === null || !/^\d+$/.test(a.retryAfter)))
    expect(without.map((a) => `${a.what} at ${a.at} ms: 503 ${a.code ?? ""} without Retry-After`).slice(0, 30)).toEqual([])
  }

  /** What the workload saw, by request and status. */
  tally() {
    const tally: Record<string, number> = {}
    for (const a of this.answers) tally[`${a.what} ${a.status}`] = (tally[`${a.what} ${a.status}`] ?? 0) + 1
    return tally
  }

  /**
   * Stops the streams if they still run, then checks everything cluster.md calls exact. Each part
   * (broadcasts, single sends, webhooks, answers) is checked even when another failed, so that one
   * run says everything that was not exact; the failures are thrown together at the end.
   */
  async verify() {
    const failures: Array<string> = []
    const part = async <A>(name: string, check: () => Promise<A> | A): Promise<A | undefined> => {
      try {
        return await check()
      } catch (error) {
        const e = error as { message?: string; actual?: unknown }
        failures.push(`${name}: ${e.message ?? String(error)}${e.actual !== undefined ? `\n${JSON.stringify(e.actual, null, 1)}` : ""}`)
        return undefined
      }
    }
    try {
      await this.stop()
      const broadcasts = await part("broadcasts", () => this.verifyBroadcasts())
      const singles = await part("single sends", () => this.verifySingles())
      const webhooks = await part("webhooks", () => this.verifyWebhooks())
      const summary = { run: this.run, answers: this.tally(), broadcasts, singles, webhooks, reports_replayed: this.replayed, timeline: this.repeatsTimeline() }
      console.log(JSON.stringify(summary))
      await part("answers", () => this.verifyAnswers())
      if (failures.length > 0) throw new Error(`not exact after the fault (run ${this.run}):\n${failures.join("\n\n")}`)
      return summary
    } finally {
      this.sampling = false
      await this.sampler
      this.dep.loads.delete(this)
    }
  }
}

/**
 * A test file's cluster: a 3-server NATS cluster and a deployment on it, started before the
 * file's tests and stopped after them. `tag` keeps the file's servers and workers apart.
 */
export const useClusterDeployment = (iso: Isolation, tag: string) => {
  const held: { nats?: NatsCluster; dep?: Deployment } = {}
  beforeAll(async () => {
    held.nats = await startNatsCluster(`${tag}${iso.id.slice(0, 4)}`)
    held.dep = await Deployment.start({ iso, nats: held.nats, name: `${tag}-${iso.id}` })
  }, 300_000)
  afterAll(async () => {
    await held.dep?.close()
    await held.nats?.stop()
  }, 60_000)
  return {
    get nats(): NatsCluster {
      return held.nats!
    },
    get dep(): Deployment {
      return held.dep!
    }
  }
}
