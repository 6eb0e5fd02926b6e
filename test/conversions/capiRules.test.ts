import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { AppConfig, type AppSettings } from "../../src/config/AppConfig.ts"
import { CapiConfigs } from "../../src/conversions/CapiConfigs.ts"
import { CapiForwarder } from "../../src/conversions/CapiForwarder.ts"
import { CapiFlush, CapiForwarded, CapiKind, CapiQueue, CapiRedrive } from "../../src/conversions/CapiKind.ts"
import { applyBehaviour } from "../support/behaviour.ts"

// The CAPI actor's rules (src/conversions/CapiKind.ts) for what Meta answered, one command at a
// time with a recording context: no NATS, no Postgres. A 2xx settles its events sent; no answer,
// a 5xx or a 429 is retried with exponential backoff until HERALD_CAPI_MAX_ATTEMPTS; any other 4xx
// fails its events at once; every request is one integration log row.

const settings = { capiBatchWindowMs: 200, capiRetryBaseMs: 1_000, capiMaxAttempts: 3, gatewayTimeoutMs: 10_000 } as AppSettings

const world = () => {
  // The statements a command persisted, as the values they were given (settle: status, attempts,
  // error, status, uids; redrive: the account).
  const statements: Array<ReadonlyArray<unknown>> = []
  const sql = (_strings: TemplateStringsArray, ...values: Array<unknown>) => Effect.sync(() => void statements.push(values))
  const layer = Layer.mergeAll(
    AppConfig.make(settings),
    Layer.succeed(SqlClient.SqlClient, sql as unknown as SqlClient.SqlClient),
    Layer.succeed(CapiConfigs, {} as unknown as CapiConfigs),
    Layer.succeed(CapiForwarder, {} as unknown as CapiForwarder)
  )
  return { statements, layer }
}

const apply = (w: ReturnType<typeof world>, state: typeof CapiKind.state.Type, command: typeof CapiKind.command.Type) =>
  Effect.gen(function*() {
    const applied = yield* Effect.provide(applyBehaviour(CapiKind, state, command, { key: "acc_1" }), w.layer)
    w.statements.length = 0
    for (const write of applied.recorded.persisted) yield* Effect.provide(write, w.layer)
    return applied
  })

const forward = (uids: ReadonlyArray<string>, statusCode: number | null) => ({ uids, statusCode, tookMs: 40, snippet: statusCode === null ? "timeout" : `{"code":${statusCode}}` })
const afterMs = (timer: { when: unknown }) => Duration.toMillis((timer.when as { after: Duration.DurationInput }).after)

describe("CAPI rules", () => {
  it.effect("events queued: one row each, one flush after the batch window (not one per command)", () =>
    Effect.gen(function*() {
      const w = world()
      const event = (uid: string) => ({ uid, eventName: "Purchase", eventId: `e-${uid}`, payload: { event_time: 1 } })
      const first = yield* apply(w, CapiKind.initial("acc_1"), new CapiQueue({ events: [event("u1"), event("u2")] }))
      expect(first.recorded.inserts.map((i) => [i.table, i.row.event_uid])).toEqual([["capi_events", "u1"], ["capi_events", "u2"]])
      expect(first.recorded.timers.map((t) => [t.command, afterMs(t), t.id])).toEqual([[new CapiFlush(), 200, "flush"]])
      const second = yield* apply(w, first.state, new CapiQueue({ events: [event("u3")] }))
      expect(second.recorded.timers).toEqual([])
      expect(second.state.dirty).toBe(true)
    }))

  it.effect("Meta's answers: 2xx sent, 5xx and no answer retried with backoff, a 400 failed at once; one log row per request", () =>
    Effect.gen(function*() {
      const w = world()
      const { state, recorded } = yield* apply(w, CapiKind.initial("acc_1"), new CapiForwarded({
        attempt: 1,
        forwards: [forward(["a"], 200), forward(["b"], 503), forward(["c"], null), forward(["d"], 400)]
      }))
      expect(recorded.inserts.map((i) => [i.row.status_code, i.row.outcome])).toEqual([[200, "delivered"], [503, "retrying"], [null, "retrying"], [400, "failed"]])
      expect(w.statements.map((v) => [v[0], v[4]])).toEqual([["sent", ["a"]], ["queued", ["b"]], ["queued", ["c"]], ["failed", ["d"]]])
      expect(state.attempt).toBe(1)
      expect(recorded.timers.map(afterMs)).toEqual([1_000])
    }))

  it.effect("the backoff doubles; after the last attempt a retryable answer fails its events", () =>
    Effect.gen(function*() {
      const w = world()
      const second = yield* apply(w, { flushAt: null, attempt: 1, dirty: false }, new CapiForwarded({ attempt: 2, forwards: [forward(["a"], 429)] }))
      expect(second.recorded.timers.map(afterMs)).toEqual([2_000])
      const last = yield* apply(w, second.state, new CapiForwarded({ attempt: 3, forwards: [forward(["a"], 500)] }))
      expect(last.recorded.inserts.map((i) => i.row.outcome)).toEqual(["failed"])
      expect(w.statements.map((v) => v[0])).toEqual(["failed"])
      expect(last.state.attempt).toBe(0)
    }))

  it.effect("a redrive queues the account's failed events again and flushes", () =>
    Effect.gen(function*() {
      const w = world()
      const { state, recorded } = yield* apply(w, CapiKind.initial("acc_1"), new CapiRedrive())
      expect(w.statements).toEqual([["acc_1"]])
      expect(recorded.timers.map((t) => [t.command, t.id])).toEqual([[new CapiFlush(), "flush"]])
      expect(state).toMatchObject({ attempt: 0, dirty: true })
    }))
})
