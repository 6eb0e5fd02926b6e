// Actor runtime throughput: a counter kind whose state is durable in Postgres before each command
// is acknowledged, on 1 and then 2 worker processes, next to a plain JetStream publish + consume
// loop on the same machine in the same run (the ceiling). Prints one JSON line.
//
//   npm run bench -- actors            N=50000 KEYS=1000 by default
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ActorClient } from "../src/actors/runtime/ActorClient.ts"
import { cleanup, makeIsolation } from "../test/support/isolation.ts"
import { startNode } from "../test/support/nodes.ts"
import { BenchCounter, Incr } from "../test/support/testKinds.ts"
import { startWorker, type Worker } from "../test/support/workers.ts"
import { round2 } from "./support/figures.ts"
import { plainStream, publishPipelined } from "./support/plainStream.ts"

const N = Number(process.env.N ?? 50_000)
const KEYS = Number(process.env.KEYS ?? 1_000)
const PARTITIONS = 8
const WINDOW = 2_000
const RATE = Number(process.env.RATE ?? 2_000)

/** The ceiling: publish N messages (pipelined) while a pull consumer acks them, until all acked. */
const plainLoop = async (prefix: string) => {
  const { js, stream, durable, subject, close } = await plainStream(prefix, "plain", 1000)
  const consumer = await js.consumers.get(stream, durable)
  const payload = new TextEncoder().encode(JSON.stringify({ _tag: "Incr", sentAt: Date.now() }))
  const started = performance.now()
  let acked = 0
  const done = new Promise<void>((resolve) => {
    void consumer.consume({
      max_messages: 512,
      callback: (m) => {
        JSON.parse(new TextDecoder().decode(m.data))
        m.ack()
        if (++acked === N) resolve()
      }
    })
  })
  await publishPipelined(js, N, (i) => `${subject}.${i % PARTITIONS}.k${i % KEYS}`, payload, WINDOW)
  await done
  const seconds = (performance.now() - started) / 1000
  await close()
  return { per_s: Math.round(N / seconds), seconds: round2(seconds) }
}

/** Cumulative latency buckets summed over the workers (le → count). */
const latencyBuckets = async (workers: ReadonlyArray<Worker>) => {
  const buckets = new Map<number, number>()
  for (const w of workers) {
    const text = await (await fetch(`${w.metricsUrl}/metrics`)).text()
    for (const m of text.matchAll(/^bench_command_latency_seconds_bucket\{le="([^"]+)"\} (\d+)$/gm)) {
      const le = m[1] === "+Inf" ? Infinity : Number(m[1])
      buckets.set(le, (buckets.get(le) ?? 0) + Number(m[2]))
    }
  }
  return buckets
}

/** p50/p99 (bucket upper bounds) of the commands applied between two snapshots. */
const quantiles = (before: Map<number, number>, after: Map<number, number>) => {
  const sorted = [...after.entries()].map(([le, c]) => [le, c - (before.get(le) ?? 0)] as const).sort((a, b) => a[0] - b[0])
  const total = sorted.at(-1)?.[1] ?? 0
  const quantile = (q: number) => (sorted.find(([, c]) => c >= q * total)?.[0] ?? NaN) * 1000
  return { p50_ms_le: quantile(0.5), p99_ms_le: quantile(0.99), samples: total }
}

const main = async () => {
  const iso = makeIsolation()
  const workers: Array<Worker> = []
  const client = await startNode(iso, { role: "api", partitions: PARTITIONS })
  const run = <A, E>(effect: Effect.Effect<A, E, any>) => client.runPromise(effect as Effect.Effect<A, E, never>)
  try {
    const baseline = await plainLoop(`${iso.natsPrefix}b`)

    const applied = (prefix: string) =>
      run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ n: number }>`SELECT coalesce(sum((state->>'count')::int), 0)::int AS n FROM actor_bench WHERE actor_key LIKE ${`${prefix}%`}`))

    /** Floods `count` commands (WINDOW in flight) and waits until all are applied. */
    const herald = async (label: string, count: number) => {
      const started = performance.now()
      await run(Effect.flatMap(ActorClient, (c) =>
        Effect.forEach(
          Array.from({ length: count }, (_, i) => i),
          (i) => c.send(BenchCounter, `${label}-${i % KEYS}`, new Incr({ sentAt: Date.now() })),
          { concurrency: WINDOW, discard: true }
        )))
      const published = performance.now()
      for (;;) {
        const [row] = await applied(`${label}-`)
        if (row!.n >= count) break
        await new Promise((r) => setTimeout(r, 50))
      }
      const seconds = (performance.now() - started) / 1000
      return { per_s: Math.round(count / seconds), seconds: round2(seconds), publish_seconds: round2((published - started) / 1000) }
    }

    /** Offers a steady `rate` commands/s for `seconds` and reports their latency. */
    const steady = async (label: string, rate: number, seconds: number) => {
      const before = await latencyBuckets(workers)
      const count = rate * seconds
      const started = performance.now()
      await run(Effect.flatMap(ActorClient, (c) =>
        Effect.forEach(
          Array.from({ length: count }, (_, i) => i),
          (i) =>
            Effect.suspend(() => {
              const due = started + (i * 1000) / rate
              const wait = due - performance.now()
              // The command (and its timestamp) is made after the wait, when it is really sent.
              return Effect.zipRight(
                wait > 0 ? Effect.sleep(wait) : Effect.void,
                Effect.suspend(() => c.send(BenchCounter, `${label}-${i % KEYS}`, new Incr({ sentAt: Date.now() })))
              )
            }),
          { concurrency: WINDOW, discard: true }
        )))
      for (;;) {
        const [row] = await applied(`${label}-`)
        if (row!.n >= count) break
        await new Promise((r) => setTimeout(r, 50))
      }
      return { offered_per_s: rate, ...quantiles(before, await latencyBuckets(workers)) }
    }

    const awaitOwned = async (expected: number) => {
      for (;;) {
        const reports = await Promise.all(workers.map((w) => w.owned()))
        const owned = reports.reduce((n, r) => n + (r?.bench?.length ?? 0), 0)
        const perNode = reports.map((r) => r?.bench?.length ?? 0)
        if (owned === PARTITIONS && perNode.every((n) => n > 0) && workers.length === expected) return
        await new Promise((r) => setTimeout(r, 100))
      }
    }

    /** Adds a worker, then measures: flood throughput and its latency, and latency at a steady rate. */
    const phase = async (nodes: number) => {
      workers.push(await startWorker(iso, `bench-${nodes}`, { HERALD_PARTITIONS: String(PARTITIONS) }))
      await awaitOwned(nodes)
      await herald(`warm${nodes}`, 2_000)
      const before = await latencyBuckets(workers)
      const flood = await herald(`run${nodes}`, N)
      return { ...flood, floodLatency: quantiles(before, await latencyBuckets(workers)), steadyLatency: await steady(`steady${nodes}`, RATE, 5) }
    }
    const one = await phase(1)
    const two = await phase(2)

    console.log(JSON.stringify({
      bench: "actors",
      commands: N,
      keys: KEYS,
      partitions: PARTITIONS,
      baseline_plain_jetstream_publish_consume_per_s: baseline.per_s,
      herald_1_node_per_s: one.per_s,
      herald_1_node_vs_baseline: round2(one.per_s / baseline.per_s),
      herald_1_node_flood_latency_ms: one.floodLatency,
      herald_1_node_steady_latency_ms: one.steadyLatency,
      herald_2_nodes_per_s: two.per_s,
      herald_2_nodes_vs_baseline: round2(two.per_s / baseline.per_s),
      herald_2_nodes_flood_latency_ms: two.floodLatency,
      herald_2_nodes_steady_latency_ms: two.steadyLatency,
      note: "per_s: N commands flooded (2000 in flight) from publish of the first to commit of the last, state durable before ack; latency: publish to application, as histogram bucket upper bounds; flood latency is queueing behind the backlog, steady is at a fixed offered rate; all processes share the machine's 2 cores"
    }))
  } finally {
    await Promise.all(workers.map((w) => w.kill()))
    await client.dispose()
    await cleanup(iso)
  }
}


await main()
process.exit(0)
