import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { Dispatcher } from "../../src/webhooks/Dispatcher.ts"
import { Attempt, DeliveryKind, Finished, MAX_ATTEMPTS, RETRY_DELAYS, Start, Watchdog } from "../../src/webhooks/DeliveryKind.ts"
import { type Endpoint, Endpoints } from "../../src/webhooks/Endpoints.ts"
import { applyBehaviour } from "../support/behaviour.ts"

// The webhook delivery actor's rules (src/webhooks/DeliveryKind.ts), one command at a time with a
// recording context: no NATS, no Postgres. The contract's schedule: attempt 1 at once, then 1 s,
// 5 s and 30 s after each failure, four attempts, then the dead letter; an endpoint gone or
// deactivated gets nothing more; a full lane puts the attempt off without spending it.

const endpoint: Endpoint = {
  webhookId: "wh_1",
  accountId: "acc_1",
  url: "https://consumer.test/hook",
  secret: "whsec_x",
  previousSecret: null,
  previousSecretUntil: null,
  live: true
}

const world = (options: { readonly endpoint?: Endpoint | undefined; readonly room?: boolean; readonly storedBody?: string | undefined } = {}) => {
  const submitted: Array<{ readonly attempt: number; readonly url: string; readonly body: string }> = []
  const layer = Layer.mergeAll(
    Layer.succeed(Endpoints, { find: () => Effect.succeed("endpoint" in options ? options.endpoint : endpoint) } as unknown as Endpoints),
    Layer.succeed(Dispatcher, {
      hasRoom: () => options.room ?? true,
      holdFor: Duration.minutes(2),
      submit: (job: { attempt: number; url: string; body: string }) => Effect.sync(() => void submitted.push({ attempt: job.attempt, url: job.url, body: job.body }))
    } as unknown as Dispatcher),
    // Read only for stored envelopes (large batches): the delivery row's envelope text, when a rule gives one.
    Layer.succeed(
      SqlClient.SqlClient,
      (() => "storedBody" in options ? Effect.succeed(options.storedBody === undefined ? [] : [{ body: options.storedBody }]) : Effect.die("no statement expected")) as unknown as SqlClient.SqlClient
    )
  )
  return { submitted, layer }
}

const start = new Start({ webhookId: "wh_1", accountId: "acc_1", eventType: "message.sent", envelope: { type: "message.sent", data: { n: 1 } }, stored: false })
const initial = DeliveryKind.initial("dl_1")
const finished = (attempt: number, statusCode: number, finishedAt = 1_000_000) =>
  new Finished({ attempt, url: endpoint.url, statusCode, tookMs: 12, snippet: "", sentAt: finishedAt - 12, finishedAt })

describe("webhook delivery rules", () => {
  it.effect("Start: attempt 1 at once, held until its outcome, with the envelope as the body", () =>
    Effect.gen(function*() {
      const w = world()
      const { state, recorded } = yield* Effect.provide(applyBehaviour(DeliveryKind, initial, start, { key: "dl_1" }), w.layer)
      expect(state).toMatchObject({ phase: "sending", attempt: 1 })
      expect(w.submitted).toEqual([{ attempt: 1, url: endpoint.url, body: JSON.stringify(start.envelope) }])
      expect(recorded.holds).toHaveLength(1)
      expect(recorded.inserts).toEqual([])
      // Applied again (redelivered after its commit): nothing more.
      const again = yield* Effect.provide(applyBehaviour(DeliveryKind, state, start, { key: "dl_1" }), w.layer)
      expect(again.state).toEqual(state)
      expect(w.submitted).toHaveLength(1)
    }))

  it.effect("a 2xx: one attempt row, delivered, no timer", () =>
    Effect.gen(function*() {
      const w = world()
      const sending = (yield* Effect.provide(applyBehaviour(DeliveryKind, initial, start, { key: "dl_1" }), w.layer)).state
      const { state, recorded } = yield* Effect.provide(applyBehaviour(DeliveryKind, sending, finished(1, 204), { key: "dl_1" }), w.layer)
      expect(state.phase).toBe("delivered")
      expect(recorded.inserts.map((i) => [i.table, i.row.attempt, i.row.status_code])).toEqual([["webhook_attempts", 1, 204]])
      expect(recorded.timers).toEqual([])
    }))

  it.effect("failures: retried 1 s, 5 s and 30 s after each, then the dead letter after the fourth", () =>
    Effect.gen(function*() {
      const w = world()
      let state = (yield* Effect.provide(applyBehaviour(DeliveryKind, initial, start, { key: "dl_1" }), w.layer)).state
      const due: Array<number> = []
      for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
        const at = 1_000_000 * attempt
        const failed = yield* Effect.provide(applyBehaviour(DeliveryKind, state, finished(attempt, 500, at), { key: "dl_1" }), w.layer)
        expect(failed.state.phase).toBe("waiting")
        expect(failed.recorded.inserts.map((i) => i.table)).toEqual(["webhook_attempts"])
        const timer = failed.recorded.timers[0]!
        expect(timer.command).toEqual(new Attempt({ attempt: attempt + 1 }))
        due.push((timer.when as { at: Date }).at.getTime() - at)
        state = (yield* Effect.provide(applyBehaviour(DeliveryKind, failed.state, timer.command, { key: "dl_1" }), w.layer)).state
        expect(state).toMatchObject({ phase: "sending", attempt: attempt + 1 })
      }
      expect(due).toEqual(RETRY_DELAYS.map(Duration.toMillis))
      expect(w.submitted.map((s) => s.attempt)).toEqual([1, 2, 3, 4])
      const dead = yield* Effect.provide(applyBehaviour(DeliveryKind, state, finished(MAX_ATTEMPTS, 503), { key: "dl_1" }), w.layer)
      expect(dead.state.phase).toBe("dead")
      expect(dead.recorded.timers).toEqual([])
      const letter = dead.recorded.inserts.find((i) => i.table === "webhook_dead_letters")!
      expect(letter.row.reason).toBe("HTTP 503 after 4 attempts")
      expect(JSON.parse(letter.row.envelope as string)).toEqual(start.envelope)
    }))

  it.effect("an outcome or a timer of another attempt changes nothing", () =>
    Effect.gen(function*() {
      const w = world()
      const sending = (yield* Effect.provide(applyBehaviour(DeliveryKind, initial, start, { key: "dl_1" }), w.layer)).state
      const stale = yield* Effect.provide(applyBehaviour(DeliveryKind, sending, finished(2, 200), { key: "dl_1" }), w.layer)
      expect(stale.state).toEqual(sending)
      expect(stale.recorded.inserts).toEqual([])
      const early = yield* Effect.provide(applyBehaviour(DeliveryKind, sending, new Attempt({ attempt: 2 }), { key: "dl_1" }), w.layer)
      expect(early.state).toEqual(sending)
      expect(w.submitted).toHaveLength(1)
    }))

  it.effect("an endpoint deleted or deactivated: dropped, no request, no row", () =>
    Effect.gen(function*() {
      for (const gone of [undefined, { ...endpoint, live: false }]) {
        const w = world({ endpoint: gone })
        const { state, recorded } = yield* Effect.provide(applyBehaviour(DeliveryKind, initial, start, { key: "dl_1" }), w.layer)
        expect(state.phase).toBe("dropped")
        expect(w.submitted).toEqual([])
        expect(recorded.inserts).toEqual([])
        expect(recorded.holds).toEqual([])
      }
    }))

  it.effect("a full lane: the attempt is put off by a timer and not spent", () =>
    Effect.gen(function*() {
      const w = world({ room: false })
      const { state, recorded } = yield* Effect.provide(applyBehaviour(DeliveryKind, initial, start, { key: "dl_1" }), w.layer)
      expect(state).toMatchObject({ phase: "waiting", attempt: 0, deferrals: 1 })
      expect(recorded.timers.map((t) => t.command)).toEqual([new Attempt({ attempt: 1 })])
      expect(w.submitted).toEqual([])
      const after = Duration.toMillis((recorded.timers[0]!.when as { after: Duration.DurationInput }).after)
      expect(after).toBeGreaterThanOrEqual(750)
      expect(after).toBeLessThanOrEqual(1_250)
    }))

  it.effect("a lane still full: each put-off doubles from 1 s, ±25%, up to 30 s, and the attempt keeps its number", () =>
    Effect.gen(function*() {
      const w = world({ room: false })
      let state = (yield* Effect.provide(applyBehaviour(DeliveryKind, initial, start, { key: "dl_1" }), w.layer)).state
      for (let deferrals = 1; deferrals <= 7; deferrals++) {
        const { state: next, recorded } = yield* Effect.provide(applyBehaviour(DeliveryKind, state, new Attempt({ attempt: 1 }), { key: "dl_1" }), w.layer)
        expect(next).toMatchObject({ phase: "waiting", attempt: 0, deferrals: deferrals + 1 })
        expect(recorded.timers.map((t) => t.command)).toEqual([new Attempt({ attempt: 1 })])
        const base = Math.min(30_000, 1_000 * 2 ** deferrals)
        const after = Duration.toMillis((recorded.timers[0]!.when as { after: Duration.DurationInput }).after)
        expect(after, `after ${deferrals} deferrals`).toBeGreaterThanOrEqual(base * 0.75)
        expect(after, `after ${deferrals} deferrals`).toBeLessThanOrEqual(base * 1.25)
        state = next
      }
      expect(w.submitted).toEqual([])
    }))

  it.effect("Watchdog: the attempt in flight is sent again; another attempt's, or one after the outcome, changes nothing", () =>
    Effect.gen(function*() {
      const w = world()
      const sending = (yield* Effect.provide(applyBehaviour(DeliveryKind, initial, start, { key: "dl_1" }), w.layer)).state
      const again = yield* Effect.provide(applyBehaviour(DeliveryKind, sending, new Watchdog({ attempt: 1 }), { key: "dl_1" }), w.layer)
      expect(again.state).toMatchObject({ phase: "sending", attempt: 1 })
      expect(again.recorded.holds).toHaveLength(1)
      expect(w.submitted.map((s) => s.attempt)).toEqual([1, 1])
      const other = yield* Effect.provide(applyBehaviour(DeliveryKind, sending, new Watchdog({ attempt: 2 }), { key: "dl_1" }), w.layer)
      expect(other.state).toEqual(sending)
      const waiting = (yield* Effect.provide(applyBehaviour(DeliveryKind, sending, finished(1, 500), { key: "dl_1" }), w.layer)).state
      const late = yield* Effect.provide(applyBehaviour(DeliveryKind, waiting, new Watchdog({ attempt: 1 }), { key: "dl_1" }), w.layer)
      expect(late.state).toEqual(waiting)
      expect(w.submitted).toHaveLength(2)
    }))

  it.effect("a stored envelope (a batch's): each attempt sends the delivery row's, the dead letter keeps it; its row gone, dropped", () =>
    Effect.gen(function*() {
      const body = JSON.stringify({ type: "message.batch", data: { count: 2 } })
      const stored = new Start({ webhookId: "wh_1", accountId: "acc_1", eventType: "message.batch", envelope: null, stored: true })
      const w = world({ storedBody: body })
      let state = (yield* Effect.provide(applyBehaviour(DeliveryKind, initial, stored, { key: "dl_1" }), w.layer)).state
      expect(w.submitted).toEqual([{ attempt: 1, url: endpoint.url, body }])
      for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
        const failed = yield* Effect.provide(applyBehaviour(DeliveryKind, state, finished(attempt, 500), { key: "dl_1" }), w.layer)
        state = (yield* Effect.provide(applyBehaviour(DeliveryKind, failed.state, failed.recorded.timers[0]!.command, { key: "dl_1" }), w.layer)).state
      }
      expect(w.submitted.map((s) => s.body)).toEqual([body, body, body, body])
      const dead = yield* Effect.provide(applyBehaviour(DeliveryKind, state, finished(MAX_ATTEMPTS, 500), { key: "dl_1" }), w.layer)
      expect(dead.recorded.inserts.find((i) => i.table === "webhook_dead_letters")!.row.envelope).toBe(body)

      const gone = world({ storedBody: undefined })
      const dropped = yield* Effect.provide(applyBehaviour(DeliveryKind, initial, stored, { key: "dl_1" }), gone.layer)
      expect(dropped.state.phase).toBe("dropped")
      expect(gone.submitted).toEqual([])
    }))
})
