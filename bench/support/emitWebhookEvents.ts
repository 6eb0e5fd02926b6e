// The scale-out bench's event source, a process of its own running Herald's code (its CPU is
// Herald's, and reported apart): EVENTS `message.sent` events of ACCOUNT, each committed in its
// own transaction and fanned out to every endpoint of the account subscribed to the type (one
// delivery each, through the outbox), EMITTERS commits at once, as concurrent sender actors would
// (bench/webhooks.bench.ts does the same in-process). Configured like a node, from the
// environment (DATABASE_URL, NATS_URL, HERALD_NATS_PREFIX…).
// Prints {"ready":true} once connected, emits when a line arrives on stdin, then prints
// {"emitted":n,"seconds":s,"cpu_s":c} (c: its CPU from the go to its exit) and exits.
//   node --import tsx bench/support/emitWebhookEvents.ts ACCOUNT EVENTS EMITTERS
import { Effect, Layer, LogLevel, ManagedRuntime } from "effect"
import { once } from "node:events"
import { createInterface } from "node:readline"
import { ActorClient, Outbox } from "../../src/actors/runtime/index.ts"
import { NatsLive } from "../../src/bus/Nats.ts"
import { AppConfig } from "../../src/config/AppConfig.ts"
import { loggingLayer } from "../../src/observability/Logging.ts"
import { SqlLive } from "../../src/storage/Database.ts"
import { Storage } from "../../src/storage/Migrations.ts"
import { Webhooks } from "../../src/webhooks/Webhooks.ts"

const [accountId, eventsArg, emittersArg] = process.argv.slice(2)
if (accountId === undefined) throw new Error("usage: emitWebhookEvents.ts ACCOUNT EVENTS EMITTERS")
const EVENTS = Number(eventsArg ?? 100)
const EMITTERS = Number(emittersArg ?? 8)

const Env = Webhooks.Default.pipe(
  Layer.provideMerge(Outbox.Default),
  Layer.provideMerge(ActorClient.Default),
  Layer.provideMerge(Layer.mergeAll(NatsLive, Storage.Default)),
  Layer.provideMerge(SqlLive),
  Layer.provideMerge(AppConfig.layer),
  // stdout carries this script's answers: logs go to stderr, warnings only.
  Layer.provide(loggingLayer({ format: "json", level: LogLevel.Warning, stderr: true }))
)
const runtime = ManagedRuntime.make(Env)
await runtime.runPromise(Effect.flatMap(Storage, (s) => s.awaitReady))
process.stdout.write(`${JSON.stringify({ ready: true })}\n`)

const lines = createInterface({ input: process.stdin })
await once(lines, "line")
const cpu0 = process.cpuUsage()
const started = performance.now()
await runtime.runPromise(Effect.gen(function*() {
  const webhooks = yield* Webhooks
  yield* Effect.forEach(
    Array.from({ length: EVENTS }, (_, i) => i),
    (i) => webhooks.committed(webhooks.emit({ accountId, type: "message.sent", botId: null, data: { message_id: `bench-${i}`, status: "sent" } })),
    { concurrency: EMITTERS, discard: true }
  )
}))
const seconds = (performance.now() - started) / 1000
await runtime.dispose()
const cpu = process.cpuUsage(cpu0)
process.stdout.write(`${JSON.stringify({ emitted: EVENTS, seconds, cpu_s: (cpu.user + cpu.system) / 1e6 })}\n`)
lines.close()
process.exit(0)
