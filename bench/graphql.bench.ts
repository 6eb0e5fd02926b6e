// GraphQL (issue 18), two parts in one run:
//  (a) reads at saturation on one node: a nested GraphQL query (a page of 50 contacts, each with up
//      to 3 conversations and each conversation's last message) and a flat one (the same 50
//      contacts' own fields), next to REST's equivalent read in the same run (POST
//      /api/v1/public/customers/search, a page of 50: REST has no conversation read, so it answers
//      strictly less than the nested query). Requests/s and p99 of each, same connections and
//      duration (REST measured before and after the GraphQL runs, averaged); target GraphQL ≥
//      0.5 × REST.
//  (b) live fan-out across a cluster (two API nodes and a worker): SUBSCRIBERS graphql-ws sockets
//      (SOCKETS_PER_ACCOUNT per account, half on each API node), each holding messageStatusUpdated
//      and broadcastProgress(broadcastId); this process publishes EVENTS_PER_SEC live events on core
//      NATS for SECONDS (half message_status, half broadcast_progress, accounts in turn) and measures
//      the time from each event's publication to each socket's receipt of it (one clock), whether
//      every status event reached every socket of its account, whether every progress
//      subscription reached its account's last counters (coalescing may skip intermediate ones),
//      and the API nodes' RSS per subscriber. The sockets live in CONSUMER_THREADS worker threads
//      (bench/support/liveSubscribers.ts) so that decoding deliveries never holds up the producer's
//      pacing. Targets: p99 < 250 ms, nothing lost.
// Prints one JSON line.
//   npm run bench -- graphql   (PARTS=a,b; (a): CUSTOMERS=2000, CONNECTIONS=50, DURATION=10, PROFILE=<dir>;
//     (b): SUBSCRIBERS=5000, EVENTS_PER_SEC=1000, SECONDS=20, SOCKETS_PER_ACCOUNT=10, CONSUMER_THREADS=2)
import autocannon from "autocannon"
import { connect } from "nats"
import { createHash, randomBytes } from "node:crypto"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { Worker } from "node:worker_threads"
import Pg from "pg"
import { type HeraldProcess, heraldCommand, heraldEntry, startHerald } from "../test/support/HeraldProcess.ts"
import { ownerSession } from "../test/support/http.ts"
import { cleanup, envFor, makeIsolation, NATS_URL } from "../test/support/isolation.ts"
import { freePort } from "../test/support/TcpProxy.ts"
import { round2 } from "./support/figures.ts"
import { type FromWorker, nowMs, type SubscriberSpec, type ToWorker, type WorkerInput } from "./support/liveSubscribers.ts"
import { cpuSeconds, machineCpu, rssKiB } from "./support/procStats.ts"

const PARTS = new Set((process.env.PARTS ?? "a,b").split(",").map((p) => p.trim()))
const CUSTOMERS = Number(process.env.CUSTOMERS ?? 2_000)
const CONNECTIONS = Number(process.env.CONNECTIONS ?? 50)
const DURATION = Number(process.env.DURATION ?? 10)
const SUBSCRIBERS = Number(process.env.SUBSCRIBERS ?? 5_000)
const EVENTS_PER_SEC = Number(process.env.EVENTS_PER_SEC ?? 1_000)
const SECONDS = Number(process.env.SECONDS ?? 20)
const SOCKETS_PER_ACCOUNT = Number(process.env.SOCKETS_PER_ACCOUNT ?? 10)
/** Threads holding the subscriber sockets (the main thread only publishes). */
const CONSUMER_THREADS = Number(process.env.CONSUMER_THREADS ?? 2)
/** Sockets opened at once while subscribers are set up. */
const OPEN_CONCURRENCY = 50
const RATE_PER_MINUTE = 100_000_000
/** PROFILE=<dir>: part (a)'s node writes a V8 CPU profile there (it is stopped, not killed, at the end). */
const PROFILE = process.env.PROFILE

type Json = Record<string, any>

const cli = async (args: Array<string>, env: Record<string, string>) => {
  const r = await heraldCommand(args, env)
  if (r.code !== 0) throw new Error(`herald ${args.join(" ")} exited with ${r.code}: ${r.stderr}`)
  return JSON.parse(r.stdout)
}
const percentile = (sorted: ArrayLike<number>, p: number) =>
  sorted.length === 0 ? null : round2(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const metric = async (node: HeraldProcess, name: string) => {
  const text = await (await fetch(`${node.metricsUrl}/metrics`)).text()
  return text.split("\n").filter((l) => l.startsWith(name)).reduce((sum, l) => sum + Number(l.split(" ").at(-1)), 0)
}

interface Load {
  readonly rps: number
  readonly p50_ms: number
  readonly p99_ms: number
  readonly answered_2xx: number
  readonly non2xx: number
  readonly errors: number
  /** 2xx answers whose body was not the expected success (a GraphQL `errors`, a REST refusal). */
  readonly mismatches: number
}

const load = (options: autocannon.Options, duration = DURATION) =>
  new Promise<Load>((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, duration, ...options }, (error, result) =>
      error
        ? reject(error)
        : resolve({
          rps: Math.round(result.requests.average),
          p50_ms: result.latency.p50,
          p99_ms: result.latency.p99,
          answered_2xx: result["2xx"],
          non2xx: result.non2xx,
          errors: result.errors,
          mismatches: (result as unknown as { mismatches: number }).mismatches
        }))
  })

// ---------------------------------------------------------------------------------------------
// (a) Reads at saturation.

/** Cost 951 (docs/graphql.md): 1 + 50 × (id + name + phone + (1 + 3 × (id + (1 + 3)))); one more contact field would be 1001. */
const NESTED = `{ contacts(page: {limit: 50}) { edges { node { id name phone conversations(page: {limit: 3}) { edges { node { id last_message { direction text created_at } } } } } } } }`
/** The issue brief's first choice of fields, which costs more than 1000: sent once for its cost. */
const NESTED_FULL = `{ contacts(page: {limit: 50}) { edges { node { id name phone conversations(page: {limit: 3}) { edges { node { id status last_message { id direction text created_at } } } } } } } }`
/** Cost 301: 1 + 50 × 6. The same contacts' fields REST's search answers. */
const FLAT = `{ contacts(page: {limit: 50}) { edges { node { id name phone tags traits created_at } } } }`

const partA = async (iso: ReturnType<typeof makeIsolation>, database: () => Promise<Pg.Client>) => {
  const simPort = await freePort()
  const env = envFor(iso, { LOG_LEVEL: "warning", GATEWAY_SIM_PORT: String(simPort) })
  const node = await startHerald(env, PROFILE ? { entry: { argv: ["--cpu-prof", `--cpu-prof-dir=${PROFILE}`, ...heraldEntry.argv, "serve"] } } : {})
  try {
    const db = await database()
    const email = "bench@graphql.io"
    const account = (await cli(["admin", "create-account", "--email", email, "--password", "bench password", "--label", "Bench", "--plan", "enterprise"], env)).account_id as string
    await db.query("UPDATE accounts SET plan_rate_per_minute = $2 WHERE account_id = $1", [account, RATE_PER_MINUTE])
    const numbers: Array<string> = []
    for (let k = 0; k < 3; k++) numbers.push((await cli(["admin", "create-wa-number", account, "--phone", `+9198000001${k}0`], env)).phone_number_id)
    const { key } = await ownerSession(node.url, email, "bench password")

    // CUSTOMERS customers, each with 1-3 conversations (one per number) holding a last message.
    await db.query(
      `INSERT INTO customers (account_id, phone, name, traits, tags, created_at)
       SELECT $1, '+9197' || lpad(i::text, 8, '0'), 'Customer ' || i,
         jsonb_build_object('city', (ARRAY['Pune', 'Goa', 'Delhi', 'Kochi'])[1 + i % 4], 'orders', i % 100, 'plan', CASE WHEN i % 3 = 0 THEN 'pro' ELSE 'free' END),
         CASE WHEN i % 5 = 0 THEN ARRAY['vip', 'newsletter'] WHEN i % 2 = 0 THEN ARRAY['newsletter'] ELSE ARRAY[]::text[] END,
         now() - make_interval(secs => i)
       FROM generate_series(1, $2::int) AS i`,
      [account, CUSTOMERS]
    )
    await db.query(
      `INSERT INTO conversations (account_id, phone_number_id, customer_id, customer_phone, status, last_inbound_at, last_message, created_at, updated_at)
       SELECT c.account_id, ($2::text[])[k], c.customer_id, c.phone, CASE WHEN k = 1 THEN 'open' ELSE 'resolved' END,
         now() - make_interval(mins => k),
         jsonb_build_object(
           'direction', CASE WHEN k = 2 THEN 'outbound' ELSE 'inbound' END,
           'id', CASE WHEN k = 2 THEN gen_random_uuid()::text ELSE 'wamid.bench' || k || substr(md5(c.phone), 1, 16) END,
           'type', 'Text', 'text', 'Message ' || k || ' about order ' || right(c.phone, 4),
           'at', to_char((now() - make_interval(mins => k)) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
         now() - make_interval(mins => k), now()
       FROM customers c CROSS JOIN LATERAL generate_series(1, 1 + abs(hashtext(c.phone)) % 3) AS k
       WHERE c.account_id = $1`,
      [account, numbers]
    )
    await db.query("ANALYZE customers; ANALYZE conversations")
    const conversations = Number((await db.query("SELECT count(*) AS n FROM conversations WHERE account_id = $1", [account])).rows[0].n)

    const gqlHeaders = { authorization: `Bearer ${key}`, "content-type": "application/json" }
    const restHeaders = { authorization: `Basic ${key}`, "content-type": "application/json" }
    const gql = async (query: string) => {
      const r = await fetch(`${node.url}/api/v1/graphql`, { method: "POST", headers: gqlHeaders, body: JSON.stringify({ query }) })
      return { status: r.status, body: (await r.json()) as Json }
    }
    // What each answers: a full page, no errors.
    const nested = await gql(NESTED)
    if (nested.status !== 200 || nested.body.errors) throw new Error(`nested query: ${nested.status} ${JSON.stringify(nested.body).slice(0, 500)}`)
    const nestedEdges = nested.body.data.contacts.edges as Array<Json>
    const nestedConversations = nestedEdges.reduce((n, e) => n + e.node.conversations.edges.length, 0)
    const withLast = nestedEdges.reduce((n, e) => n + e.node.conversations.edges.filter((c: Json) => c.node.last_message !== null).length, 0)
    const full = await gql(NESTED_FULL)
    const fullCost = full.body.errors?.[0]?.extensions?.cost ?? null
    const flat = await gql(FLAT)
    if (flat.status !== 200 || flat.body.errors) throw new Error(`flat query: ${flat.status} ${JSON.stringify(flat.body).slice(0, 500)}`)
    const restBody = JSON.stringify({ limit: 50 })
    const rest = await fetch(`${node.url}/api/v1/public/customers/search`, { method: "POST", headers: restHeaders, body: restBody })
    const restJson = (await rest.json()) as Json
    if (rest.status !== 200 || restJson.count !== 50) throw new Error(`REST search: ${rest.status} ${JSON.stringify(restJson).slice(0, 500)}`)
    const sizes = {
      nested_bytes: JSON.stringify(nested.body).length,
      flat_bytes: JSON.stringify(flat.body).length,
      rest_bytes: JSON.stringify(restJson).length
    }

    /** The first answer (per query) that was not a success, kept for the report. */
    const refusals: Record<string, string> = {}
    const check = (name: string, ok: (body: string) => boolean) => (body: string) => {
      if (ok(body)) return true
      refusals[name] ??= body.slice(0, 500)
      return false
    }
    const noErrors = (name: string) => check(name, (body) => !body.includes(`"errors"`))
    const restOk = check("rest", (body) => body.includes(`"success":true`))
    const targets = {
      rest: { url: `${node.url}/api/v1/public/customers/search`, method: "POST" as const, headers: restHeaders, body: restBody, verifyBody: restOk },
      nested: { url: `${node.url}/api/v1/graphql`, method: "POST" as const, headers: gqlHeaders, body: JSON.stringify({ query: NESTED }), verifyBody: noErrors("nested") },
      flat: { url: `${node.url}/api/v1/graphql`, method: "POST" as const, headers: gqlHeaders, body: JSON.stringify({ query: FLAT }), verifyBody: noErrors("flat") }
    }
    // Warm-up (JIT, pools, caches), then the measured runs, one after another.
    for (const t of Object.values(targets)) await load(t as autocannon.Options, 3)
    const restLoad = await load(targets.rest as autocannon.Options)
    const nestedLoad = await load(targets.nested as autocannon.Options)
    const flatLoad = await load(targets.flat as autocannon.Options)
    const restAgain = await load(targets.rest as autocannon.Options)
    const restRps = Math.round((restLoad.rps + restAgain.rps) / 2)
    return {
      customers: CUSTOMERS,
      conversations,
      connections: CONNECTIONS,
      seconds: DURATION,
      nested_query: { query: NESTED, cost: 951, contacts: nestedEdges.length, conversations: nestedConversations, last_messages: withLast, ...nestedLoad },
      brief_nested_query_cost: fullCost,
      flat_query: { query: FLAT, cost: 301, ...flatLoad },
      rest_search: { body: { limit: 50 }, first_run: restLoad, second_run: restAgain, rps_mean: restRps },
      response_bytes: sizes,
      first_refusals: refusals,
      nested_vs_rest: round2(nestedLoad.rps / restRps),
      flat_vs_rest: round2(flatLoad.rps / restRps),
      target_met: {
        nested_vs_rest: nestedLoad.rps / restRps >= 0.5 && nestedLoad.mismatches === 0 && nestedLoad.non2xx === 0,
        flat_vs_rest: flatLoad.rps / restRps >= 0.5 && flatLoad.mismatches === 0 && flatLoad.non2xx === 0
      }
    }
  } finally {
    await (PROFILE ? node.stop() : node.kill())
  }
}

// ---------------------------------------------------------------------------------------------
// (b) Live fan-out.

interface BenchAccount {
  readonly accountId: string
  readonly key: string
  readonly broadcastId: string
}

/** Accounts written straight into the tables (a CLI process each would take minutes): owner, account with its secret key's hash, a bot, a list and a running broadcast. */
const seedAccounts = async (db: Pg.Client, count: number): Promise<Array<BenchAccount>> => {
  const rows = Array.from({ length: count }, (_, i) => {
    const key = "sk_live_" + randomBytes(32).toString("base64url")
    return { i, email: `live${i}@bench.io`, key, hash: createHash("sha256").update(key).digest("hex"), last_four: key.slice(-4) }
  })
  const made = await db.query<{ i: number; account_id: string; broadcast_id: string }>(
    `WITH input AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(i int, email text, hash text, last_four text)),
     u AS (INSERT INTO users (email, password_hash) SELECT email, 'not-a-password-hash' FROM input RETURNING user_id, email),
     a AS (
       INSERT INTO accounts (label, plan, plan_rate_per_minute, owner_user_id, secret_key_hash, secret_key_last_four, secret_key_created_at)
       SELECT 'Live ' || input.i, 'enterprise', $2::int, u.user_id, input.hash, input.last_four, now() FROM input JOIN u USING (email)
       RETURNING account_id, owner_user_id, secret_key_hash),
     m AS (INSERT INTO memberships (account_id, user_id, role) SELECT account_id, owner_user_id, 'owner' FROM a),
     b AS (INSERT INTO bots (account_id, name, status, use_case) SELECT account_id, 'Live bot', 'active', 'promotional' FROM a RETURNING bot_id, account_id),
     l AS (INSERT INTO contact_lists (account_id, name) SELECT account_id, 'live list' FROM a RETURNING list_id, account_id),
     bc AS (
       INSERT INTO broadcasts (account_id, bot_id, template_id, list_id, name, content, price, status, total_count, started_at)
       SELECT a.account_id, b.bot_id, gen_random_uuid(), l.list_id, 'Live broadcast', '{"type":"text","text":"Sale"}'::jsonb, 0.1, 'running', 1000000, now()
       FROM a JOIN b USING (account_id) JOIN l USING (account_id)
       RETURNING broadcast_id, account_id)
     SELECT input.i, a.account_id::text, bc.broadcast_id::text FROM input JOIN a ON a.secret_key_hash = input.hash JOIN bc USING (account_id) ORDER BY input.i`,
    [JSON.stringify(rows.map(({ i, email, hash, last_four }) => ({ i, email, hash, last_four }))), RATE_PER_MINUTE]
  )
  return made.rows.map((r) => ({ accountId: r.account_id, key: rows[r.i]!.key, broadcastId: r.broadcast_id }))
}

/** A thread running bench/support/liveSubscribers.ts, TypeScript loaded by tsx's API (a worker does not inherit `--import tsx`). */
const SUBSCRIBER_THREAD = `import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(new URL("./support/liveSubscribers.ts", import.meta.url).href)}) })`

const partB = async (iso: ReturnType<typeof makeIsolation>, database: () => Promise<Pg.Client>) => {
  const env = envFor(iso, { LOG_LEVEL: "warning" })
  // The first node migrates the database (when part (a) has not), the other two join it.
  const apiA = await startHerald({ ...env, HERALD_ROLE: "api" })
  const [apiB, worker] = await Promise.all([startHerald({ ...env, HERALD_ROLE: "api" }), startHerald({ ...env, HERALD_ROLE: "worker" })])
  const apis = [apiA, apiB]
  const threads: Array<Worker> = []
  const nc = await connect({ servers: NATS_URL })
  try {
    const db = await database()
    const accountCount = Math.ceil(SUBSCRIBERS / SOCKETS_PER_ACCOUNT)
    const accounts = await seedAccounts(db, accountCount)
    await sleep(1_000)
    const rssBefore = apis.map((n) => rssKiB(n.child.pid!))

    // Subscriber i: account ⌊i / SOCKETS_PER_ACCOUNT⌋, API node i mod 2, thread i mod CONSUMER_THREADS.
    const total = Math.round(EVENTS_PER_SEC * SECONDS)
    const publishedAt = new Float64Array(new SharedArrayBuffer(8 * total))
    const control = new Float64Array(new SharedArrayBuffer(16))
    const specs: Array<SubscriberSpec> = Array.from({ length: SUBSCRIBERS }, (_, index) => {
      const account = Math.floor(index / SOCKETS_PER_ACCOUNT)
      return { index, account, url: `${apis[index % 2]!.url.replace(/^http/, "ws")}/api/v1/graphql`, key: accounts[account]!.key, broadcastId: accounts[account]!.broadcastId }
    })
    const shares = Array.from({ length: CONSUMER_THREADS }, (_, t) => specs.filter((s) => s.index % CONSUMER_THREADS === t))
    const inbox = shares.map(() => [] as Array<FromWorker>)
    const waiting = shares.map(() => [] as Array<(m: FromWorker) => void>)
    for (const [t, share] of shares.entries()) {
      const input: WorkerInput = { subscribers: share, openConcurrency: Math.ceil(OPEN_CONCURRENCY / CONSUMER_THREADS), seconds: SECONDS, publishedAt: publishedAt.buffer as SharedArrayBuffer, control: control.buffer as SharedArrayBuffer }
      const thread = new Worker(SUBSCRIBER_THREAD, { eval: true, workerData: input })
      const deliver = (m: FromWorker) => (waiting[t]!.length > 0 ? waiting[t]!.shift()!(m) : inbox[t]!.push(m))
      thread.on("message", deliver)
      thread.on("error", (e) => deliver({ type: "failed", error: `subscriber thread ${t}: ${String(e)}` }))
      threads.push(thread)
    }
    /** Sends `message` to every thread and resolves with each one's answer. */
    const ask = (message: ToWorker) =>
      Promise.all(threads.map((thread, t) => {
        const answer = new Promise<FromWorker>((resolve) => (inbox[t]!.length > 0 ? resolve(inbox[t]!.shift()!) : waiting[t]!.push(resolve)))
        thread.postMessage(message)
        return answer
      }))

    // Open the sockets; each is ready once its broadcastProgress has answered the broadcast's row
    // (both subscriptions were accepted by then: they go in order).
    const openStart = performance.now()
    for (const answer of await ask({ type: "open" })) if (answer.type !== "ready") throw new Error(`subscribers: ${JSON.stringify(answer)}`)
    const openSeconds = (performance.now() - openStart) / 1000
    const expectedListeners = 2 * SUBSCRIBERS
    const deadline = Date.now() + 60_000
    let listeners = 0
    while ((listeners = (await Promise.all(apis.map((n) => metric(n, "herald_live_listeners")))).reduce((a, b) => a + b, 0)) < expectedListeners) {
      if (Date.now() > deadline) throw new Error(`only ${listeners} of ${expectedListeners} listeners after 60 s`)
      await sleep(200)
    }
    await sleep(2_000)
    const rssOpen = apis.map((n) => rssKiB(n.child.pid!))

    // Publish: EVENTS_PER_SEC, half statuses and half progress, accounts in turn.
    const encoder = new TextEncoder()
    const statusPublished = new Array<number>(accountCount).fill(0)
    const progressPublished = new Array<number>(accountCount).fill(0)
    const lastProgress = new Array<number>(accountCount).fill(-1)
    const publish = (seq: number) => {
      const accountIndex = Math.floor(seq / 2) % accountCount
      const account = accounts[accountIndex]!
      const at = nowMs()
      publishedAt[seq] = at
      if (seq % 2 === 0) {
        statusPublished[accountIndex]!++
        nc.publish(`${iso.natsPrefix}.live.${account.accountId}.message_status`, encoder.encode(JSON.stringify({
          message_id: String(seq),
          status: "sent",
          callback_data: null,
          occurred_at: new Date().toISOString()
        })))
      } else {
        lastProgress[accountIndex] = seq
        progressPublished[accountIndex]!++
        nc.publish(`${iso.natsPrefix}.live.${account.accountId}.broadcast_progress`, encoder.encode(JSON.stringify({
          broadcast_id: account.broadcastId,
          status: "running",
          total_count: 1_000_000,
          sent_count: seq,
          delivered_count: 0,
          read_count: 0,
          failed_count: 0,
          cancelled_count: 0
        })))
      }
    }
    const lag = monitorEventLoopDelay({ resolution: 10 })
    const cpu0 = process.cpuUsage()
    const nodeCpu0 = [apiA, apiB, worker].map((n) => cpuSeconds(n.child.pid!))
    const dropped0 = (await Promise.all(apis.map((n) => metric(n, "herald_graphql_slow_consumers_dropped_total")))).reduce((a, b) => a + b, 0)
    const machine0 = machineCpu()
    lag.enable()
    const start = performance.now()
    control[1] = nowMs()
    control[0] = 1
    let seq = 0
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * EVENTS_PER_SEC))
        while (seq < due) publish(seq++)
        if (seq >= total) {
          clearInterval(timer)
          resolve()
        }
      }, 5)
    })
    await nc.flush()
    const publishSeconds = (performance.now() - start) / 1000
    lag.disable()

    // Drain: until every status reached every socket of its account and every progress
    // subscription its account's last counters, or nothing more arrives for 5 s.
    const expectedStatus = specs.reduce((n, s) => n + statusPublished[s.account]!, 0)
    const progressPublishedTotal = specs.reduce((n, s) => n + progressPublished[s.account]!, 0)
    let counted = { status: 0, progress: 0, final: 0 }
    let quietSince = Date.now()
    for (let id = 0;; id++) {
      const answers = (await ask({ type: "count", id, lastProgress })).map((a) => {
        if (a.type !== "count") throw new Error(`subscribers: ${JSON.stringify(a)}`)
        return a
      })
      const now = { status: answers.reduce((n, a) => n + a.status, 0), progress: answers.reduce((n, a) => n + a.progress, 0), final: answers.reduce((n, a) => n + a.final, 0) }
      if (now.status >= expectedStatus && now.final === SUBSCRIBERS) break
      if (now.status !== counted.status || now.progress !== counted.progress) quietSince = Date.now()
      else if (Date.now() - quietSince > 5_000) break
      counted = now
      await sleep(100)
    }
    control[0] = 0
    const wall = (performance.now() - start) / 1000
    const cpu = process.cpuUsage(cpu0)
    const machine = machineCpu()
    const nodeCpu = [apiA, apiB, worker].map((n, i) => round2(cpuSeconds(n.child.pid!) - nodeCpu0[i]!))
    const rssAfter = apis.map((n) => rssKiB(n.child.pid!))
    const dropped = (await Promise.all(apis.map((n) => metric(n, "herald_graphql_slow_consumers_dropped_total")))).reduce((a, b) => a + b, 0) - dropped0
    const results = (await ask({ type: "finish" })).map((a) => {
      if (a.type !== "result") throw new Error(`subscribers: ${JSON.stringify(a)}`)
      return a.result
    })

    const statusSorted = Float64Array.from(results.flatMap((r) => [...r.statusLatencies])).sort()
    const progressSorted = Float64Array.from(results.flatMap((r) => [...r.progressLatencies])).sort()
    const all = Float64Array.from([...statusSorted, ...progressSorted]).sort()
    const summary = (sorted: Float64Array) => ({ deliveries: sorted.length, p50_ms: percentile(sorted, 50), p99_ms: percentile(sorted, 99), max_ms: percentile(sorted, 100) })
    const received = results.reduce((n, r) => n + r.status.reduce((a, b) => a + b, 0), 0)
    const progressReceived = results.reduce((n, r) => n + r.progressCount.reduce((a, b) => a + b, 0), 0)
    const progressFinal = results.reduce((n, r, t) => n + r.progressLast.filter((last, i) => last === lastProgress[shares[t]![i]!.account]).length, 0)
    const worstBySecond = Array.from({ length: Math.ceil(SECONDS) }, (_, s) => Math.round(Math.max(...results.map((r) => r.worstBySecond[s] ?? 0))))
    const closes: Record<string, number> = {}
    for (const r of results) for (const [code, n] of Object.entries(r.closes)) closes[code] = (closes[code] ?? 0) + n
    const p99 = percentile(all, 99)
    const lost = expectedStatus - received
    const perSubscriber = (i: number) => round2((rssOpen[i]! - rssBefore[i]!) / (SUBSCRIBERS / 2))
    return {
      subscribers: SUBSCRIBERS,
      subscriptions: 2 * SUBSCRIBERS,
      accounts: accountCount,
      sockets_per_account: SOCKETS_PER_ACCOUNT,
      api_nodes: 2,
      consumer_threads: CONSUMER_THREADS,
      open_seconds: round2(openSeconds),
      events: { published: total, per_s_target: EVENTS_PER_SEC, per_s_achieved: Math.round(total / publishSeconds), publish_seconds: round2(publishSeconds), drain_seconds: round2(wall - publishSeconds) },
      fan_out_latency: { ...summary(all), message_status: summary(statusSorted), broadcast_progress: summary(progressSorted) },
      worst_latency_ms_by_second: worstBySecond,
      message_status: { deliveries_expected: expectedStatus, deliveries_received: received, lost },
      broadcast_progress: {
        subscriptions: SUBSCRIBERS,
        reached_final: progressFinal,
        deliveries_published: progressPublishedTotal,
        deliveries_received: progressReceived,
        coalesced: progressPublishedTotal - progressReceived,
        out_of_order: results.reduce((n, r) => n + r.outOfOrder, 0)
      },
      slow_consumers_dropped: dropped,
      socket_closes: closes,
      problems: results.flatMap((r) => r.problems).slice(0, 20),
      memory: {
        api_rss_mb_before: rssBefore.map((k) => round2(k / 1024)),
        api_rss_mb_subscribed: rssOpen.map((k) => round2(k / 1024)),
        api_rss_mb_after_run: rssAfter.map((k) => round2(k / 1024)),
        kib_per_subscriber: [perSubscriber(0), perSubscriber(1)],
        kib_per_subscriber_mean: round2((rssOpen[0]! + rssOpen[1]! - rssBefore[0]! - rssBefore[1]!) / SUBSCRIBERS)
      },
      cpu_seconds: {
        window_seconds: round2(wall),
        bench_process: round2((cpu.user + cpu.system) / 1e6),
        api_a: nodeCpu[0],
        api_b: nodeCpu[1],
        worker: nodeCpu[2],
        machine_busy: round2(machine.busy - machine0.busy),
        machine_capacity: round2(machine.total - machine0.total)
      },
      producer_event_loop_delay_ms: { p50: round2(lag.percentile(50) / 1e6), p99: round2(lag.percentile(99) / 1e6), max: round2(lag.max / 1e6) },
      subscriber_threads_event_loop_delay_ms: results.map((r) => ({ p50: round2(r.eventLoopDelayMs.p50), p99: round2(r.eventLoopDelayMs.p99), max: round2(r.eventLoopDelayMs.max) })),
      subscriber_threads_gc_ms: results.map((r) => ({ pauses: r.gcMs.pauses, total: round2(r.gcMs.total), max: round2(r.gcMs.max) })),
      target_met: {
        p99_under_250_ms: p99 !== null && p99 < 250,
        no_lost_status_events: lost === 0,
        every_progress_subscription_final: progressFinal === SUBSCRIBERS
      }
    }
  } finally {
    await Promise.all(threads.map((t) => t.terminate()))
    await nc.close()
    await Promise.all([apiA, apiB, worker].map((n) => n.kill()))
  }
}

const iso = makeIsolation()
// The database is made (and migrated) by the first node started: connected to after that.
const db = new Pg.Client({ connectionString: iso.databaseUrl })
let connected = false
const database = async () => {
  if (!connected) await db.connect()
  connected = true
  return db
}
try {
  const reads = PARTS.has("a") ? await partA(iso, database) : undefined
  const live = PARTS.has("b") ? await partB(iso, database) : undefined
  console.log(JSON.stringify({
    bench: "graphql",
    target: { graphql_vs_rest_rps: 0.5, fan_out_p99_ms: 250, lost_events: 0 },
    reads,
    live,
    target_met: {
      ...(reads ? { nested_vs_rest: reads.target_met.nested_vs_rest, flat_vs_rest: reads.target_met.flat_vs_rest } : {}),
      ...(live ? live.target_met : {})
    },
    note: "all on the same 2 cores: Postgres, NATS, the Herald nodes and this client (autocannon in (a); in (b) the producer and every subscriber socket, which decodes each delivery). (a) one herald process (role all); REST's search returns the 50 customers only (REST has no conversation read), the nested query the same 50 with up to 3 conversations each and their last messages; the issue's nested selection with `status` and `last_message.id` costs more than 1000, so the nested query drops those two fields (cost 951). (b) two api nodes and a worker; the producer is this process's main thread, the sockets are in its worker threads; latency = receipt − publication on one clock (process.hrtime); broadcastProgress's first event (the stored row) is not measured; coalesced = progress events the feed replaced by a newer one before the socket took them; RSS per subscriber = (RSS once subscribed − RSS before) ÷ the node's sockets, garbage not yet collected included"
  }))
} finally {
  if (connected) await db.end().catch(() => undefined)
  await cleanup(iso)
}
process.exit(0)
