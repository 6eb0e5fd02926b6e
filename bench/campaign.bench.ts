// A WhatsApp campaign to N (1,000,000) customers next to the RCS broadcast of the same size, in
// the same run (issue 36: the campaign within 1.2× the broadcast's time and memory). Both on one
// fresh isolation (database and NATS prefix), each from its POST to status completed on a fresh
// `herald serve` with the same settings: the gateway simulator in-process, reached by direct calls
// (GATEWAY_SIM_TRANSPORT=direct, which both the RBM and the Cloud API adapters take), callbacks
// off (GATEWAY_SIM_CALLBACKS=false: sends only), V8's old space capped as `npm start` caps it.
// - broadcast: POST /api/v1/rcs/broadcasts of a text template to a list of N contacts from a bot
//   whose throughput is unlimited, as bench/broadcast.bench.ts's N run;
// - campaign: POST /api/v1/public/campaigns of an APPROVED MARKETING template whose body value is
//   {{trait.first_name}} (fallback "there"), to a customer search (city = Pune) matching N
//   customers, nine in ten of whom have a first_name, from a number of throughput 1,000,000/s.
// ROUNDS=2 (the default) runs broadcast, campaign, campaign, broadcast; ROUNDS=1 broadcast,
// campaign. Before each run the previous run's targets and chunks are truncated, so each starts on
// empty tables. Wall time, recipients/s, peak RSS (VmHWM) of each run's node; the ratios
// campaign / broadcast of the means. Prints one JSON line.
//   npm run bench -- campaign   (N=1000000, ROUNDS=2, SIM_TRANSPORT=direct|http, TIMEOUT=1800
//   seconds a run, HEAP_MB=400 each node's V8 old space (0: V8's default), PROFILE=<dir>: the
//   first campaign run's node writes a CPU profile there)
//
// Setup is not measured and runs on a node of its own, stopped before the first run: accounts,
// bot, number and templates through the CLI and the API (as test/e2e/broadcasts.test.ts and
// campaigns.test.ts); contacts and customers written by one INSERT … generate_series each, with the
// same phone numbers (+917…7: never a simulator failure rule).
import type { HeraldProcess } from "../test/support/HeraldProcess.ts"
import { heraldEntry, startHerald } from "../test/support/HeraldProcess.ts"
import { callJson, ownerSession } from "../test/support/http.ts"
import { cleanup, envFor, type Isolation, makeIsolation } from "../test/support/isolation.ts"
import { body as templateBody } from "../test/support/waTemplates.ts"
import {
  benchLog,
  cliWith,
  cpuCores,
  getRetried,
  pgClient,
  type Progress,
  type RcsSetup,
  rssSampler,
  runRcsBroadcast,
  setUpRcs,
  sleep,
  targetStates,
  type Watched,
  watchBroadcast
} from "./support/broadcastRuns.ts"
import { round2 } from "./support/figures.ts"
import { rssMb } from "./support/procStats.ts"

const N = Number(process.env.N ?? 1_000_000)
const ROUNDS = Number(process.env.ROUNDS ?? 2)
const TIMEOUT_MS = Number(process.env.TIMEOUT ?? 1800) * 1000
const SIM_TRANSPORT = process.env.SIM_TRANSPORT ?? "direct"
const HEAP_MB = process.env.HEAP_MB === "0" ? undefined : process.env.HEAP_MB ?? "400"
const PROFILE = process.env.PROFILE
/** HERALD_WA_PRICE_MARKETING's default: the wallet must cover the audience at it (only delivered messages are charged). */
const MARKETING_PRICE = 0.8
const THROUGHPUT = 1_000_000
const TEMPLATE = { name: "bench_offer", languageCode: "en", bodyValues: ["{{trait.first_name}}"] }
const FALLBACKS = { first_name: "there" }

const log = benchLog("campaign")

interface CampaignSetup {
  readonly key: string
  readonly phoneNumberId: string
}

/** The WhatsApp account: a number of unlimited tier, money, an approved MARKETING template and N customers of Pune. */
const setUpCampaign = async (node: HeraldProcess, env: Record<string, string>, iso: Isolation, n: number): Promise<CampaignSetup> => {
  const cli = cliWith(env)
  const email = "bench@campaign.io"
  const password = "bench password"
  const accountId = (await cli("admin", "create-account", "--email", email, "--password", password, "--label", "Campaign", "--plan", "growth")).account_id
  // The bench polls the campaign as a client would: a plan bucket it cannot run out of.
  await cli("admin", "set-plan", accountId, "enterprise", "--rate", "600000")
  const phoneNumberId = (await cli("admin", "create-wa-number", accountId, "--phone", "+919800000301", "--throughput", String(THROUGHPUT))).phone_number_id
  await cli("admin", "wallet-credit", accountId, String(Math.ceil(n * MARKETING_PRICE) + 100))
  const { key } = await ownerSession(node.url, email, password)
  const pub = (method: string, path: string, body?: unknown) => callJson(node.url, method, `/api/v1/public${path}`, `Basic ${key}`, body)
  const created = await pub("POST", "/templates", {
    name: TEMPLATE.name,
    language: TEMPLATE.languageCode,
    category: "MARKETING",
    components: [templateBody("Hi {{1}}, big sale today.", ["Asha"])]
  })
  if (created.status !== 201) throw new Error(`template: ${created.status} ${JSON.stringify(created.body)}`)
  for (let waited = 0; ; waited += 100) {
    const status = (await pub("GET", `/templates/${created.body.template.id}`)).body.template?.status
    if (status === "APPROVED") break
    if (waited > 30_000) throw new Error(`template still ${status} after 30 s`)
    await sleep(100)
  }
  const started = performance.now()
  const db = await pgClient(iso, log)
  try {
    // Customer i: the RCS bench's contact i; nine in ten have a first_name, the tenth gets the fallback.
    await db.query(
      `INSERT INTO customers (account_id, phone, traits)
       SELECT $1, '+91' || (7000000007 + i * 10)::text,
              CASE WHEN i % 10 = 9 THEN '{"city": "Pune"}'::jsonb ELSE jsonb_build_object('city', 'Pune', 'first_name', 'Name' || i) END
       FROM generate_series(0, $2 - 1) AS i ORDER BY i`,
      [accountId, n]
    )
    await db.query("VACUUM ANALYZE customers")
  } finally {
    await db.end()
  }
  log(`${n} customers written in ${round2((performance.now() - started) / 1000)} s`)
  return { key, phoneNumberId }
}

const campaignProgress = (c: any): Progress => ({
  status: c.status,
  total: c.counters.total,
  sent: c.counters.sent,
  failed: c.counters.failed,
  cancelled: c.counters.cancelled,
  reports: c.counters.delivered + c.counters.read
})

const runCampaign = (node: HeraldProcess, iso: Isolation, setup: CampaignSetup, n: number) => {
  const auth = `Basic ${setup.key}`
  return watchBroadcast({
    node,
    iso,
    n,
    timeoutMs: TIMEOUT_MS,
    log,
    create: async () => {
      const created = await callJson(node.url, "POST", "/api/v1/public/campaigns", auth, {
        name: "Bench",
        template: TEMPLATE,
        fallbackValues: FALLBACKS,
        audience: { filters: [{ trait: "city", op: "eq", value: "Pune" }] }
      })
      if (created.status !== 201) throw new Error(`campaign: ${created.status} ${JSON.stringify(created.body)}`)
      return created.body.campaign.id as string
    },
    read: async (id) =>
      campaignProgress(
        await getRetried(node, "campaign", () => callJson(node.url, "GET", `/api/v1/public/campaigns/${id}`, auth), (body) => body.campaign, log)
      )
  })
}

/** Of a campaign's targets, how many carry a first_name of their own (the others were sent the fallback). */
const personalised = async (iso: Isolation, id: string) => {
  const db = await pgClient(iso, log)
  try {
    return (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM broadcast_targets WHERE broadcast_id = $1 AND vars ? 'first_name'", [id])).rows[0]!.n
  } finally {
    await db.end()
  }
}

/** Until the node owns every partition of every actor kind: a run starts on a node that holds its actors. */
const untilPartitionsOwned = async (node: HeraldProcess, partitions: number) => {
  const started = performance.now()
  for (;;) {
    const health = await callJson(node.url, "GET", "/health/ready").catch(() => undefined)
    const owned: Record<string, ReadonlyArray<number>> = health?.body.partitions_owned ?? {}
    const kinds = Object.values(owned)
    if (kinds.length > 0 && kinds.every((p) => p.length === partitions)) return round2((performance.now() - started) / 1000)
    if (performance.now() - started > 60_000) throw new Error(`partitions not all owned after 60 s: ${JSON.stringify(owned)}`)
    await sleep(100)
  }
}

/** Each run starts on empty target and chunk tables, as the first broadcast of a database does. */
const emptyTargets = async (iso: Isolation) => {
  const db = await pgClient(iso, log)
  try {
    await db.query("TRUNCATE broadcast_targets, broadcast_chunks")
    await db.query("CHECKPOINT")
  } finally {
    await db.end()
  }
}

type Side = "broadcast" | "campaign"

interface Run {
  readonly side: Side
  readonly seconds: number
  readonly per_s: number
  readonly server_seconds: number
  readonly peak_rss_mb: number
  readonly rss_before_mb: number
  readonly node_cpu_s: number
  readonly machine_busy_cores: number
  readonly partitions_owned_after_s: number
  readonly timeline: Watched["timeline"]
  readonly final: Watched["final"]
  readonly targets_by_status: Record<string, number>
  /** Campaign runs: targets sent their own first_name (the rest, one in ten, the fallback). */
  readonly with_first_name?: number
}

const main = async () => {
  const iso = makeIsolation()
  const env = envFor(iso, {
    LOG_LEVEL: "warning",
    GATEWAY_SIM_CALLBACKS: "false",
    GATEWAY_SIM_TRANSPORT: SIM_TRANSPORT,
    GATEWAY_SIM_TEMPLATE_REVIEW_MS: "200",
    ...(HEAP_MB === undefined ? {} : { NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}` })
  })
  const partitions = Number(env.HERALD_PARTITIONS)
  try {
    const setupNode = await startHerald(env)
    let rcs: RcsSetup
    let wa: CampaignSetup
    try {
      rcs = await setUpRcs(setupNode, env, iso, N, log, ROUNDS)
      wa = await setUpCampaign(setupNode, env, iso, N)
    } catch (error) {
      log(`setup node output (tail):\n${setupNode.output().slice(-4000)}`)
      throw error
    } finally {
      await setupNode.stop()
    }
    const order: Array<Side> = []
    for (let r = 0; r < ROUNDS; r++) order.push(...(r % 2 === 0 ? ["broadcast", "campaign"] as const : ["campaign", "broadcast"] as const))
    const runs: Array<Run> = []
    let profiled = false
    for (const side of order) {
      await emptyTargets(iso)
      const profile: boolean = PROFILE !== undefined && side === "campaign" && !profiled
      profiled ||= profile
      const node = await startHerald(env, profile ? { entry: { argv: ["--cpu-prof", `--cpu-prof-dir=${PROFILE}`, ...heraldEntry.argv, "serve"] } } : {})
      const pid = node.child.pid!
      const sampler = rssSampler(() => [pid])
      try {
        const ownedAfter = await untilPartitionsOwned(node, partitions)
        const rssBefore = rssMb(pid)
        log(`${side}: ${N} recipients on node ${pid}`)
        const run = side === "broadcast" ? await runRcsBroadcast(node, iso, rcs, N, TIMEOUT_MS, log) : await runCampaign(node, iso, wa, N)
        sampler.stop()
        runs.push({
          side,
          seconds: round2(run.seconds),
          per_s: Math.round(N / run.seconds),
          server_seconds: round2(run.serverSeconds),
          peak_rss_mb: sampler.peak(pid),
          rss_before_mb: rssBefore,
          node_cpu_s: round2(run.nodeCpuS),
          machine_busy_cores: round2(run.machineBusyCores),
          partitions_owned_after_s: ownedAfter,
          timeline: run.timeline,
          final: run.final,
          targets_by_status: await targetStates(iso, run.id, log),
          ...(side === "campaign" ? { with_first_name: await personalised(iso, run.id) } : {})
        })
        log(`${side}: ${JSON.stringify(runs[runs.length - 1])}`)
      } catch (error) {
        log(`node output (tail):\n${node.output().slice(-4000)}`)
        throw error
      } finally {
        sampler.stop()
        await node.stop()
      }
    }
    return runs
  } finally {
    await cleanup(iso)
  }
}

const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length

const runs = await main()
const sideOf = (side: Side) => {
  const of = runs.filter((r) => r.side === side)
  const seconds = mean(of.map((r) => r.seconds))
  return {
    seconds: round2(seconds),
    per_s: Math.round(N / seconds),
    peak_rss_mb: Math.round(mean(of.map((r) => r.peak_rss_mb))),
    node_cpu_s: round2(mean(of.map((r) => r.node_cpu_s))),
    runs: of.map(({ side: _, ...run }) => run)
  }
}
const broadcast = sideOf("broadcast")
const campaign = sideOf("campaign")
console.log(JSON.stringify({
  bench: "campaign",
  recipients: N,
  ratio: {
    time: round2(campaign.seconds / broadcast.seconds),
    rss: round2(campaign.peak_rss_mb / broadcast.peak_rss_mb),
    node_cpu: round2(campaign.node_cpu_s / broadcast.node_cpu_s)
  },
  target: { time: 1.2, rss: 1.2 },
  campaign,
  broadcast,
  order: runs.map((r) => r.side),
  settings: {
    sim_transport: SIM_TRANSPORT,
    callbacks: "off (GATEWAY_SIM_CALLBACKS=false)",
    node_old_space_cap_mb: HEAP_MB === undefined ? null : Number(HEAP_MB),
    wa_throughput: THROUGHPUT,
    rcs_throughput: "unlimited",
    cores: cpuCores()
  },
  note: "each run on a fresh herald serve (role all, in-process simulator) of the same isolation and settings, started once it owns every partition, its targets' tables emptied first; " +
    "seconds = POST to status completed seen by polling GET every 100 ms (server_seconds = completed_at - created_at); side figures are the means of its runs, peak_rss_mb each run node's VmHWM; " +
    "campaign: one {{trait.first_name}} body value (fallback for one customer in ten), audience a customer search (city = Pune); setup not measured"
}))
process.exit(0)
