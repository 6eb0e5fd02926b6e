// Customers at scale and conversions forwarded to Meta, on one node in one run:
//  1. 1,000,000 customers with traits and tags written in streamed batches (generated as they go,
//     5,000 rows a statement: the shape of the contact-list importer), rows/s;
//  2. POST /api/v1/public/customers/search with two trait filters and a tag over them: p50/p99 of
//     sequential searches (three queries in turn), next to the node's no-op route in the same run;
//  3. CAPI events/s forwarded end to end (POSTed to Herald in batches of 1,000 → capi actor →
//     simulator, counted when Meta's side has them) next to the same batches POSTed to the
//     simulator directly.
// Also: selective searches (fewer matches than a page in the newest 20,000: the planner's query).
// Prints one JSON line.   npm run bench -- customers   (CUSTOMERS=1000000, SEARCHES=300, CAPI_EVENTS=50000, PROFILE=<dir>)
import Pg from "pg"
import { cleanup, envFor, makeIsolation } from "../test/support/isolation.ts"
import { heraldCommand, heraldEntry, startHerald } from "../test/support/HeraldProcess.ts"
import { callJson } from "../test/support/http.ts"
import { freePort } from "../test/support/TcpProxy.ts"
import { round2 } from "./support/figures.ts"

const CUSTOMERS = Number(process.env.CUSTOMERS ?? 1_000_000)
const SEARCHES = Number(process.env.SEARCHES ?? 300)
const CAPI_EVENTS = Number(process.env.CAPI_EVENTS ?? 50_000)
const BATCH = 5_000
/** PROFILE=<dir>: the node writes a V8 CPU profile there (it is stopped, not killed, at the end). */
const PROFILE = process.env.PROFILE
const CITIES = ["Pune", "Mumbai", "Delhi", "Chennai", "Kolkata", "Jaipur", "Surat", "Lucknow", "Nagpur", "Indore", "Bhopal", "Patna", "Agra", "Nashik", "Vadodara", "Rajkot", "Ranchi", "Kochi", "Mysuru", "Goa"]

const cli = async (args: Array<string>, env: Record<string, string>) => JSON.parse((await heraldCommand(args, env)).stdout)
const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return round2(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!)
}

/** mulberry32: a deterministic pseudo-random stream (every run searches the same million) whose successive draws are independent. */
let seed = 42
const random = () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
}

const customerRow = (i: number) => {
  const tags: Array<string> = []
  if (random() < 0.4) tags.push("newsletter")
  if (random() < 0.05) tags.push("vip")
  if (random() < 0.1) tags.push("churn-risk")
  const signup = new Date(Date.UTC(2024, 0, 1) + Math.floor(random() * 730) * 86_400_000).toISOString().slice(0, 10)
  return {
    phone: `+9197${String(i).padStart(8, "0")}`,
    name: `Customer ${i}`,
    traits: { city: CITIES[Math.floor(random() * CITIES.length)], orders: Math.floor(random() * 100), signup, plan: random() < 0.7 ? "free" : "pro", score: round2(random() * 5) },
    tags
  }
}

const iso = makeIsolation()
const simPort = await freePort()
const simUrl = `http://127.0.0.1:${simPort}`
const env = envFor(iso, { LOG_LEVEL: "warning", GATEWAY_SIM_PORT: String(simPort), HERALD_CAPI_BATCH_WINDOW_MS: "50" })
const node = await startHerald(env, PROFILE ? { entry: { argv: ["--cpu-prof", `--cpu-prof-dir=${PROFILE}`, ...heraldEntry.argv, "serve"] } } : {})
const db = new Pg.Client({ connectionString: iso.databaseUrl })
await db.connect()
try {
  const account = (await cli(["admin", "create-account", "--email", "bench@customers.io", "--password", "bench password", "--label", "Bench", "--plan", "enterprise"], env)).account_id
  await cli(["admin", "set-plan", account, "enterprise", "--rate", "100000000"], env)
  const token = (await callJson(node.url, "POST", "/api/v1/rcs/auth/login", undefined, { email: "bench@customers.io", password: "bench password" })).body.token
  const key = (await callJson(node.url, "POST", "/api/v1/app/developer/secret-key", token)).body.secret_key as string

  // 1. The million, streamed in batches.
  const importStart = performance.now()
  for (let from = 0; from < CUSTOMERS; from += BATCH) {
    const rows = Array.from({ length: Math.min(BATCH, CUSTOMERS - from) }, (_, i) => customerRow(from + i))
    await db.query(
      `INSERT INTO customers (account_id, phone, name, traits, tags)
       SELECT $1, r.phone, r.name, r.traits, ARRAY(SELECT jsonb_array_elements_text(r.tags))
       FROM jsonb_to_recordset($2::jsonb) AS r(phone text, name text, traits jsonb, tags jsonb)`,
      [account, JSON.stringify(rows)]
    )
  }
  const importSeconds = (performance.now() - importStart) / 1000
  await db.query("ANALYZE customers")

  // 2. Searches: two filters and a tag, three variants in turn.
  const queries = [
    { filters: [{ trait: "city", op: "eq", value: "Pune" }, { trait: "orders", op: "gte", value: 50 }], tags: ["newsletter"], limit: 50 },
    { filters: [{ trait: "signup", op: "gte", value: "2025-06-01" }, { trait: "plan", op: "eq", value: "pro" }], tags: ["vip"], limit: 50 },
    { filters: [{ trait: "score", op: "lt", value: 1.5 }, { trait: "city", op: "in", value: ["Goa", "Kochi"] }], tags: ["churn-risk"], limit: 50 }
  ]
  const headers = { authorization: `Basic ${key}`, "content-type": "application/json" }
  const timed = async (url: string, init: RequestInit) => {
    const start = performance.now()
    const r = await fetch(url, init)
    const body = (await r.json()) as { count?: number }
    if (r.status !== 200) throw new Error(`${url}: ${r.status} ${JSON.stringify(body)}`)
    return { ms: performance.now() - start, count: body.count ?? 0 }
  }
  const search = (q: object) => timed(`${node.url}/api/v1/public/customers/search`, { method: "POST", headers, body: JSON.stringify(q) })
  for (const q of queries) await search(q)
  const latencies: Array<number> = []
  const counts = new Set<number>()
  for (let i = 0; i < SEARCHES; i++) {
    const r = await search(queries[i % queries.length]!)
    latencies.push(r.ms)
    counts.add(r.count)
  }
  // Selective searches: fewer matches than a page among the newest 20,000, so the planner's query
  // runs (an indexed pair of equalities, and a comparison the indexes cannot serve).
  const selective = [
    { filters: [{ trait: "city", op: "eq", value: "Goa" }, { trait: "orders", op: "eq", value: 99 }], tags: ["vip"], limit: 50 },
    { filters: [{ trait: "score", op: "gte", value: 4.98 }, { trait: "plan", op: "eq", value: "pro" }], tags: ["vip"], limit: 50 }
  ]
  for (const q of selective) await search(q)
  const rare: Array<number> = []
  const rareCounts = new Set<number>()
  for (let i = 0; i < Math.ceil(SEARCHES / 3); i++) {
    const r = await search(selective[i % selective.length]!)
    rare.push(r.ms)
    rareCounts.add(r.count)
  }
  const noop: Array<number> = []
  for (let i = 0; i < SEARCHES; i++) noop.push((await timed(`${node.url}/health/live`, {})).ms)

  // 3. CAPI: through Herald, then straight to the simulator, the same batches.
  await callJson(node.url, "PUT", "/api/v1/app/meta-ads/capi/config", token, { dataset_id: "1000000001", access_token: "EAAB-bench-token" })
  const nowSec = Math.floor(Date.now() / 1000)
  const event = (i: number) => ({ event_name: "Lead", event_id: `bench-${i}`, event_time: nowSec - 60, fullPhoneNumber: `+9197${String(i % CUSTOMERS).padStart(8, "0")}` })
  const batches = Math.ceil(CAPI_EVENTS / 1_000)
  const heraldStart = performance.now()
  await Promise.all(Array.from({ length: 4 }, async (_, lane) => {
    for (let b = lane; b < batches; b += 4) {
      const events = Array.from({ length: 1_000 }, (_, i) => event(b * 1_000 + i))
      const r = await fetch(`${node.url}/api/v1/app/meta-ads/capi/events/batch`, { method: "POST", headers: { ...headers, authorization: `Bearer ${key}` }, body: JSON.stringify({ events }) })
      if (r.status !== 202) throw new Error(`capi batch: ${r.status} ${await r.text()}`)
    }
  }))
  const acceptSeconds = (performance.now() - heraldStart) / 1000
  for (;;) {
    const sent = Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM capi_events WHERE status = 'sent'")).rows[0]!.n)
    if (sent >= batches * 1_000) break
    await new Promise((r) => setTimeout(r, 50))
  }
  const heraldSeconds = (performance.now() - heraldStart) / 1000
  // The simulator hit directly with the same events, hashed as Herald sends them.
  const hashed = (await db.query<{ payload: object }>("SELECT payload FROM capi_events ORDER BY seq LIMIT 1000")).rows.map((r) => r.payload)
  const directStart = performance.now()
  await Promise.all(Array.from({ length: 4 }, async (_, lane) => {
    for (let b = lane; b < batches; b += 4) {
      const r = await fetch(`${simUrl}/v23.0/1000000002/events`, { method: "POST", headers: { authorization: "Bearer x", "content-type": "application/json" }, body: JSON.stringify({ data: hashed }) })
      if (r.status !== 200) throw new Error(`simulator: ${r.status} ${await r.text()}`)
    }
  }))
  const directSeconds = (performance.now() - directStart) / 1000
  const forwarded = Math.round((batches * 1_000) / heraldSeconds)
  const direct = Math.round((batches * 1_000) / directSeconds)

  console.log(JSON.stringify({
    bench: "customers",
    target: { search_p99_ms: 200, capi_forwarded_vs_direct: 0.5 },
    customers: CUSTOMERS,
    import: { seconds: round2(importSeconds), rows_per_s: Math.round(CUSTOMERS / importSeconds) },
    search: { requests: SEARCHES, p50_ms: percentile(latencies, 50), p99_ms: percentile(latencies, 99), max_ms: percentile(latencies, 100), page_sizes: [...counts].sort((a, b) => a - b) },
    selective_search: { requests: rare.length, p50_ms: percentile(rare, 50), p99_ms: percentile(rare, 99), max_ms: percentile(rare, 100), page_sizes: [...rareCounts].sort((a, b) => a - b) },
    herald_noop_route: { p50_ms: percentile(noop, 50), p99_ms: percentile(noop, 99) },
    capi: { events: batches * 1_000, accepted_per_s: Math.round((batches * 1_000) / acceptSeconds), forwarded_per_s: forwarded, simulator_direct_per_s: direct, forwarded_vs_direct: round2(forwarded / direct) },
    note: "one herald process (API, capi actor, simulator in-process) with Postgres, NATS and this client on the same 2 cores; searches run one at a time; CAPI batches of 1,000 from 4 concurrent clients, counted once Herald marks them sent (Meta answered 200)"
  }))
} finally {
  await db.end()
  await (PROFILE ? node.stop() : node.kill())
  await cleanup(iso)
}
process.exit(0)
