// Webhook deliveries per second to a local consumer answering 200 at once, every attempt logged in
// Postgres, on 1 and then 2 worker processes; then the same with 10% of the endpoints dead (they
// accept the connection and never answer), measuring the healthy endpoints' delivery latency.
// In the same run, two ceilings: a bare loop POSTing the same payloads with undici, no persistence;
// and the design's floor, each delivery one JetStream message that a separate process consumes,
// POSTs and acknowledges (bench/support/bare-delivery.mjs), still with nothing stored.
// Prints one JSON line.      npm run bench -- webhooks      (EVENTS=100 ENDPOINTS=100 EMITTERS=8 by default, PROFILE=<dir>)
import { Effect, Layer, LogLevel, ManagedRuntime } from "effect"
import { spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import http from "node:http"
import Pg from "pg"
import { Agent, request } from "undici"
import { ActorClient, Outbox } from "../src/actors/runtime/index.ts"
import { NatsLive } from "../src/bus/Nats.ts"
import type { Email } from "../src/domain/identity.ts"
import { AccountsRepo } from "../src/accounts/AccountsRepo.ts"
import { SqlLive } from "../src/storage/Database.ts"
import { Storage } from "../src/storage/Migrations.ts"
import { Webhooks } from "../src/webhooks/Webhooks.ts"
import { AppConfig } from "../src/config/AppConfig.ts"
import { loggingLayer } from "../src/observability/Logging.ts"
import { type HeraldProcess, heraldEntry, startHerald } from "../test/support/HeraldProcess.ts"
import { cleanup, envFor, makeIsolation, NATS_URL, settingsFor } from "../test/support/isolation.ts"
import { signedIn } from "../test/support/principals.ts"
import { round2 } from "./support/figures.ts"
import { plainStream, publishPipelined } from "./support/plainStream.ts"

const EVENTS = Number(process.env.EVENTS ?? 100)
const ENDPOINTS = Number(process.env.ENDPOINTS ?? 100)
const CONCURRENCY = 256
/** Events committed at once, as concurrent sender actors would. */
const EMITTERS = Number(process.env.EMITTERS ?? 8)
/**
 * PROFILE=<dir>: workers write a V8 CPU profile and their output there (they are stopped, not
 * killed, at the end), and write a heap snapshot there on SIGUSR2.
 */
const PROFILE = process.env.PROFILE

/** POSTs the consumer answered on /ok/bare (the design's floor), and who waits for a count. */
let bareReceived = 0
let bareWaiter: { readonly n: number; readonly resolve: () => void } | undefined

/** The consumer: 200 at once on /ok; /dead accepts and never answers. */
const consumer = http.createServer((req, res) => {
  if (req.url?.startsWith("/dead")) return
  req.resume()
  req.on("end", () => {
    res.end("ok")
    if (req.url === "/ok/bare" && ++bareReceived === bareWaiter?.n) bareWaiter.resolve()
  })
})
await new Promise<void>((resolve) => consumer.listen(0, "127.0.0.1", resolve))
const base = `http://127.0.0.1:${(consumer.address() as { port: number }).port}`

const percentile = (sorted: Array<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0

/** The ceiling: N POSTs of the same payload, CONCURRENCY at a time, nothing stored. */
const bareLoop = async (n: number, payload: string) => {
  const agent = new Agent({ connections: CONCURRENCY })
  let next = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next++ < n) {
      const r = await request(`${base}/ok`, { method: "POST", body: payload, dispatcher: agent, headers: { "content-type": "application/json" } })
      await r.body.dump()
    }
  }))
  const seconds = (performance.now() - started) / 1000
  await agent.close()
  return { deliveries: n, seconds: round2(seconds), per_second: Math.round(n / seconds) }
}

/**
 * The design's floor: N deliveries as N JetStream messages (published pipelined, as the outbox
 * relay does), which a worker-like process consumes, POSTs here and acknowledges.
 */
const bareDeliveries = async (n: number, payload: string, prefix: string) => {
  const { js, stream, durable, subject, close } = await plainStream(prefix, "bare", 1024)
  const worker = spawn(process.execPath, [fileURLToPath(new URL("./support/bare-delivery.mjs", import.meta.url)), NATS_URL, stream, durable, `${base}/ok/bare`], { stdio: "inherit" })
  try {
    bareReceived = 0
    const all = new Promise<void>((resolve) => (bareWaiter = { n, resolve }))
    const started = performance.now()
    await publishPipelined(js, n, (i) => `${subject}.${i % 8}`, new TextEncoder().encode(payload), 1_000)
    await all
    const seconds = (performance.now() - started) / 1000
    return { deliveries: n, seconds: round2(seconds), per_second: Math.round(n / seconds) }
  } finally {
    worker.kill("SIGKILL")
    await close()
  }
}

const iso = makeIsolation()
const env = envFor(iso, { LOG_LEVEL: "warning" })
const workerEnv = { ...env, HERALD_ROLE: "worker" }
const profiling = ["--cpu-prof", `--cpu-prof-dir=${PROFILE}`, "--heapsnapshot-signal=SIGUSR2", `--diagnostic-dir=${PROFILE}`]
const workerOptions = { waitReady: true, ...(PROFILE ? { entry: { argv: [...profiling, ...heraldEntry.argv, "serve"] } } : {}) }
const Env = Layer.mergeAll(Webhooks.Default, AccountsRepo.Default).pipe(
  Layer.provideMerge(Outbox.Default),
  Layer.provideMerge(ActorClient.Default),
  Layer.provideMerge(Layer.mergeAll(NatsLive, Storage.Default)),
  Layer.provideMerge(SqlLive),
  Layer.provideMerge(AppConfig.make(settingsFor(iso))),
  // The bench prints one JSON line on stdout: its own logs go to stderr, warnings only.
  Layer.provide(loggingLayer({ format: "json", level: LogLevel.Warning, stderr: true }))
)
const runtime = ManagedRuntime.make(Env)
const workers: Array<HeraldProcess> = []
const db = new Pg.Client({ connectionString: iso.databaseUrl })

try {
  const account = await runtime.runPromise(Effect.gen(function*() {
    yield* (yield* Storage).awaitReady
    return yield* (yield* AccountsRepo).createWithOwner({ email: "bench@example.com" as Email, passwordHash: "x", label: "Bench", plan: "growth" })
  }))
  await db.connect()
  const owner = signedIn(account.accountId)
  const subscribe = (path: string, type: "message.sent" | "message.read") =>
    runtime.runPromise(Effect.flatMap(Webhooks, (w) => w.create(owner, { url: `${base}${path}`, events: [type], botId: null })))
  for (let i = 0; i < ENDPOINTS; i++) await subscribe(`/ok/${i}`, "message.sent")

  /** EVENTS events, each fanned out to every subscription of `type`; waits for every first attempt. */
  const run = async (type: "message.sent" | "message.read", healthyPrefix: string, healthy: number) => {
    const expected = EVENTS * healthy
    const started = Date.now()
    await runtime.runPromise(Effect.gen(function*() {
      const webhooks = yield* Webhooks
      // Events come from many sender actors at once in production, each in its own commit: a
      // single emitter would measure one connection's commit latency (an fsync each), not delivery.
      yield* Effect.forEach(
        Array.from({ length: EVENTS }, (_, i) => i),
        (i) => webhooks.committed(webhooks.emit({ accountId: account.accountId, type, botId: null, data: { message_id: `m${i}`, status: "sent" } })),
        { concurrency: EMITTERS, discard: true }
      )
    }))
    for (;;) {
      const [{ n }] = (await db.query(
        `SELECT count(*)::int AS n FROM webhook_attempts WHERE attempt = 1 AND event_type = $1 AND url LIKE $2 AND sent_at >= $3`,
        [type, `${base}${healthyPrefix}%`, new Date(started)]
      )).rows
      if (n >= expected) break
      await new Promise((r) => setTimeout(r, 100))
    }
    const latencies = (await db.query(
      `SELECT (extract(epoch FROM a.sent_at - d.created_at) * 1000 + a.took_ms)::int AS ms
       FROM webhook_attempts a JOIN webhook_deliveries d USING (delivery_id)
       WHERE a.attempt = 1 AND a.event_type = $1 AND a.url LIKE $2 AND a.sent_at >= $3`,
      [type, `${base}${healthyPrefix}%`, new Date(started)]
    )).rows.map((r) => r.ms as number).sort((a, b) => a - b)
    const [{ last }] = (await db.query(
      `SELECT max(extract(epoch FROM sent_at) * 1000 + took_ms) AS last FROM webhook_attempts WHERE sent_at >= $1`,
      [new Date(started)]
    )).rows
    const seconds = (Number(last) - started) / 1000
    // Where the time went: the last event committed, the last Start published by the outbox relay.
    const [{ emitted, relayed }] = (await db.query(
      `SELECT extract(epoch FROM max(created_at)) * 1000 AS emitted, extract(epoch FROM max(published_at)) * 1000 AS relayed
       FROM actor_outbox WHERE created_at >= $1`,
      [new Date(started)]
    )).rows
    return {
      deliveries: expected,
      seconds: round2(seconds),
      per_second: Math.round(expected / seconds),
      p50_ms: percentile(latencies, 50),
      p99_ms: percentile(latencies, 99),
      events_committed_after_s: round2((Number(emitted) - started) / 1000),
      starts_published_after_s: round2((Number(relayed) - started) / 1000)
    }
  }

  workers.push(await startHerald(workerEnv, workerOptions))
  await new Promise((r) => setTimeout(r, 3_000))
  const oneWorker = await run("message.sent", "/ok/", ENDPOINTS)
  workers.push(await startHerald(workerEnv, workerOptions))
  await new Promise((r) => setTimeout(r, 5_000))
  const twoWorkers = await run("message.sent", "/ok/", ENDPOINTS)

  // 10% dead: endpoints that take the connection and never answer (10 s attempt timeout each).
  for (let i = 0; i < ENDPOINTS; i++) await subscribe(i % 10 === 0 ? `/dead/${i}` : `/ok/read/${i}`, "message.read")
  const healthyWithDead = await run("message.read", "/ok/read/", ENDPOINTS - Math.ceil(ENDPOINTS / 10))

  const payload = JSON.stringify({ event_id: crypto.randomUUID(), type: "message.sent", occurred_at: new Date().toISOString(), delivery_id: `wd_${crypto.randomUUID()}`, account_id: account.accountId, data: { message_id: "m0", status: "sent" } })
  const bare = await bareLoop(EVENTS * ENDPOINTS, payload)
  const floor = await bareDeliveries(EVENTS * ENDPOINTS, payload, iso.natsPrefix)

  console.log(JSON.stringify({
    bench: "webhooks",
    endpoints: ENDPOINTS,
    events: EVENTS,
    emitters: EMITTERS,
    one_worker: oneWorker,
    two_workers: twoWorkers,
    ten_percent_dead_two_workers_healthy_endpoints: healthyWithDead,
    baseline_bare_undici_loop: bare,
    baseline_bare_jetstream_then_post: floor,
    one_worker_vs_bare: round2(oneWorker.per_second / bare.per_second),
    two_workers_vs_bare: round2(twoWorkers.per_second / bare.per_second),
    one_worker_vs_jetstream_then_post: round2(oneWorker.per_second / floor.per_second),
    note: "a delivery: outbox row + Start through JetStream; the delivery actor holds the Start, the dispatcher makes the HTTP attempt, its outcome comes back in memory and is committed with the attempt row in one commit; latency is from the delivery's creation to the end of its first attempt; the consumer, the emitting commits, Postgres, NATS and the workers share the machine's 2 cores"
  }))
} finally {
  await Promise.all(workers.map((w) => (PROFILE ? w.stop() : w.kill())))
  if (PROFILE) workers.forEach((w, i) => writeFileSync(`${PROFILE}/worker-${i}.log`, w.output()))
  await runtime.dispose()
  await db.end().catch(() => {})
  consumer.closeAllConnections()
  consumer.close()
  await cleanup(iso)
}
process.exit(0)
