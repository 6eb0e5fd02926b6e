import { readFileSync } from "node:fs"
import Pg from "pg"
import { type HeraldProcess, heraldCommand } from "../../test/support/HeraldProcess.ts"
import { callJson } from "../../test/support/http.ts"
import type { Isolation } from "../../test/support/isolation.ts"
import { createBroadcast } from "./createBroadcast.ts"
import { round2 } from "./figures.ts"
import { cpuSeconds, machineCpu, peakRssMb, rssMb } from "./procStats.ts"

// What the broadcast benches share (bench/broadcast.bench.ts, bench/campaign.bench.ts): an RCS
// account with an unlimited bot and a list of N contacts written by SQL, and one broadcast (RCS or
// a WhatsApp campaign) watched from its POST to status completed, with the node's CPU and memory.

/** The RCS template's price a recipient. */
export const RCS_PRICE = 0.1

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** A bench's stderr log, its lines prefixed with the bench's name. */
export type Log = (message: string) => void
export const benchLog = (name: string): Log => (message) => process.stderr.write(`[${name} bench] ${message}\n`)

/** A connected client of the bench's database; a connection the server ends fails its next query instead of the script. */
export const pgClient = async (iso: Isolation, log: Log) => {
  const client = new Pg.Client({ connectionString: iso.databaseUrl })
  client.on("error", (error) => log(`postgres connection: ${error.message}`))
  await client.connect()
  return client
}

/** `herald <args>` with the node's settings, which must succeed; its JSON output. */
export const cliWith = (env: Record<string, string>) => async (...args: Array<string>) => {
  const r = await heraldCommand(args, env)
  if (r.code !== 0) throw new Error(`herald ${args.join(" ")} exited with ${r.code}: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

/** Samples processes' RSS (VmHWM is read at the end too; the sampler is for the report's curve). */
export const rssSampler = (pids: () => ReadonlyArray<number>) => {
  const peak = new Map<number, number>()
  const timer = setInterval(() => {
    for (const pid of pids()) peak.set(pid, Math.max(peak.get(pid) ?? 0, rssMb(pid)))
  }, 250)
  return { stop: () => clearInterval(timer), peak: (pid: number) => Math.max(peak.get(pid) ?? 0, peakRssMb(pid)) }
}

export const cpuCores = () => readFileSync("/proc/stat", "utf8").split("\n").filter((l) => /^cpu\d/.test(l)).length

/** Targets of a broadcast by status, straight from broadcast_targets. */
export const targetStates = async (iso: Isolation, id: string, log: Log) => {
  const db = await pgClient(iso, log)
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

/** A GET that is retried a few times (a failed or non-200 answer) before it counts. */
export const getRetried = async <A>(node: HeraldProcess, what: string, get: () => Promise<{ status: number; body: any }>, pick: (body: any) => A | undefined, log: Log): Promise<A> => {
  for (let attempt = 1; ; attempt++) {
    try {
      const got = await get()
      const value = got.status === 200 ? pick(got.body) : undefined
      if (value !== undefined) return value
      if (attempt >= 5) throw new Error(`GET ${what} answered ${got.status}: ${JSON.stringify(got.body).slice(0, 300)}`)
    } catch (error) {
      if (attempt >= 5) throw error
    }
    log(`GET ${what} failed (attempt ${attempt}); node exit code ${node.child.exitCode}`)
    await sleep(200 * attempt)
  }
}

/** GET of an RCS broadcast. */
export const getBroadcast = (node: HeraldProcess, token: string, id: string, log: Log) =>
  getRetried(node, "broadcast", () => callJson(node.url, "GET", `/api/v1/rcs/broadcasts/${id}`, token), (body) => body.broadcast, log)

/** A broadcast's status and counters as the watch reads them, whichever API answered them. */
export interface Progress {
  readonly status: string
  readonly total: number
  readonly sent: number
  readonly failed: number
  readonly cancelled: number
  /** delivered + read reports so far. */
  readonly reports: number
}

export const rcsProgress = (b: any): Progress => ({
  status: b.status,
  total: b.total_count,
  sent: b.sent_count,
  failed: b.failed_count,
  cancelled: b.cancelled_count,
  reports: b.delivered_count + b.read_count
})

// ---- an account with an unlimited promotional bot, money, a template and a list of N contacts ----

export interface RcsSetup {
  readonly accountId: string
  readonly botId: string
  readonly templateId: string
  readonly listId: string
  readonly token: string
}

/**
 * Account, bot, wallet and template through the CLI and the API as in
 * test/e2e/broadcasts.test.ts; the contacts straight into `contacts` by one INSERT …
 * generate_series (what an import ends with: E.164 numbers +917…7, contact_count kept). The
 * wallet covers `rounds` broadcasts of the list.
 */
export const setUpRcs = async (node: HeraldProcess, env: Record<string, string>, iso: Isolation, n: number, log: Log, rounds = 2): Promise<RcsSetup> => {
  const cli = cliWith(env)
  const accountId = (await cli("admin", "create-account", "--email", "bench@broadcast.io", "--password", "bench password", "--label", "Bench")).account_id
  const botId = (await cli("admin", "create-bot", accountId, "--name", "Bench", "--use-case", "promotional", "--status", "active")).bot_id
  await cli("admin", "bot-throughput", botId, "unlimited")
  await cli("admin", "wallet-credit", accountId, String(Math.ceil(n * RCS_PRICE * rounds) + 100))
  const token = (await callJson(node.url, "POST", "/api/v1/rcs/auth/login", undefined, { email: "bench@broadcast.io", password: "bench password" })).body.token
  const template = await callJson(node.url, "POST", "/api/v1/rcs/templates", token, { bot_id: botId, name: "bench offer", type: "text", text: "Big sale today" })
  if (template.status !== 200) throw new Error(`template: ${template.status} ${JSON.stringify(template.body)}`)
  const list = await callJson(node.url, "POST", "/api/v1/rcs/contact-lists", token, { name: "bench" })
  if (list.status !== 200) throw new Error(`contact list: ${list.status} ${JSON.stringify(list.body)}`)
  const listId = list.body.list.list_id as string
  const started = performance.now()
  const db = await pgClient(iso, log)
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

export interface Watched {
  readonly id: string
  readonly seconds: number
  readonly timeline: Record<string, number | null>
  readonly final: Record<string, number | string>
  readonly serverSeconds: number
  readonly nodeCpuS: number
  readonly machineBusyCores: number
  /** delivered + read reports when the broadcast completed. */
  readonly reportsAtCompletion: number
}

/**
 * Creates a broadcast (`create`, its id) and polls it (`read`) every 100 ms until it completed or
 * was cancelled: seconds from just before the POST, a timeline of its first moments, the node's
 * CPU and the machine's busy cores meanwhile.
 */
export const watchBroadcast = async (options: {
  readonly node: HeraldProcess
  readonly iso: Isolation
  readonly n: number
  readonly create: () => Promise<string>
  readonly read: (id: string) => Promise<Progress>
  readonly timeoutMs: number
  readonly log: Log
}): Promise<Watched> => {
  const { node, n, log } = options
  const db = await pgClient(options.iso, log)
  try {
    const pid = node.child.pid!
    const cpu0 = cpuSeconds(pid)
    const machine0 = machineCpu()
    const started = performance.now()
    const at = () => round2((performance.now() - started) / 1000)
    const id = await options.create()
    const timeline: Record<string, number | null> = { running_s: null, first_sent_s: null, targets_written_s: null, half_sent_s: null }
    let lastLog = 0
    let final: Progress
    for (;;) {
      const b = await options.read(id)
      if (b.status !== "queued" && timeline.running_s === null) timeline.running_s = at()
      if (b.sent + b.failed > 0 && timeline.first_sent_s === null) timeline.first_sent_s = at()
      if (b.sent + b.failed >= n / 2 && timeline.half_sent_s === null) timeline.half_sent_s = at()
      if (timeline.targets_written_s === null && b.status !== "queued") {
        const written = (await db.query<{ n: number | null }>("SELECT max(target_no) + 1 AS n FROM broadcast_targets WHERE broadcast_id = $1", [id])).rows[0]!.n
        if (written !== null && written >= b.total && b.total > 0) timeline.targets_written_s = at()
      }
      if (b.status === "completed" || b.status === "cancelled") {
        final = b
        break
      }
      if (performance.now() - lastLog > 5_000) {
        lastLog = performance.now()
        log(`${at()} s: ${b.status} sent ${b.sent}/${b.total} failed ${b.failed}; node CPU ${round2(cpuSeconds(pid) - cpu0)} s, RSS ${rssMb(pid)} MB`)
      }
      if (performance.now() - started > options.timeoutMs) throw new Error(`broadcast not completed in ${options.timeoutMs / 1000} s: ${JSON.stringify(b)}`)
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
      final: { status: final.status, total: final.total, sent: final.sent, failed: final.failed, cancelled: final.cancelled },
      reportsAtCompletion: final.reports,
      serverSeconds: server!.s,
      nodeCpuS,
      // Of the machine's cores, how many were busy on average (Herald, Postgres, NATS, this script).
      machineBusyCores: (machine1.busy - machine0.busy) / ((machine1.total - machine0.total) / Math.max(1, cpuCores()))
    }
  } finally {
    await db.end().catch(() => undefined)
  }
}

/** An RCS broadcast of the setup's template to its list, watched until completed. */
export const runRcsBroadcast = (node: HeraldProcess, iso: Isolation, setup: RcsSetup, n: number, timeoutMs: number, log: Log) =>
  watchBroadcast({
    node,
    iso,
    n,
    timeoutMs,
    log,
    create: () => createBroadcast(node.url, setup),
    read: async (id) => rcsProgress(await getBroadcast(node, setup.token, id, log))
  })
