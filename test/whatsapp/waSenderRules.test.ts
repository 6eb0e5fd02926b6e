import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ActorClient } from "../../src/actors/runtime/index.ts"
import { AppConfig, type AppSettings } from "../../src/config/AppConfig.ts"
import { MAX_SEND_ATTEMPTS } from "../../src/messaging/sendRetries.ts"
import { WA_THROUGHPUT_DEFAULT, WaNumbers } from "../../src/whatsapp/numbers/WaNumbers.ts"
import { WaDispatcher, type WaPayload } from "../../src/whatsapp/sender/WaDispatcher.ts"
import { paceOf, WaAnswered, WaChunkFinished, WaExpire, WaPump, WaRetry, WaSend, WaSenderKind, WaSweep } from "../../src/whatsapp/sender/WaSenderKind.ts"
import { Subscriptions } from "../../src/webhooks/Subscriptions.ts"
import { Webhooks } from "../../src/webhooks/Webhooks.ts"
import { ConversationsRepo } from "../../src/conversations/ConversationsRepo.ts"
import { WaMessagesRepo } from "../../src/whatsapp/message/WaMessagesRepo.ts"
import { applyBehaviour } from "../support/behaviour.ts"
import { WaChunkRuns } from "../../src/whatsapp/sender/WaChunkRuns.ts"
import { ChunkOrder, chunkKey, SendChunk } from "../../src/messaging/chunkProtocol.ts"

// The WhatsApp sender actor's rules (src/whatsapp/sender/WaSenderKind.ts), one command at a time
// with a recording context: no NATS, no Postgres. Sends leave in the order accepted, paced by the
// number's throughput; Meta's acceptance records the wamid; a retryable refusal is sent again after
// its backoff; a request whose answer was lost is never sent again (the Cloud API has no
// idempotency key) but becomes unconfirmed, failed after the expiry unless a status comes.

const NUMBER = "115416010524074"
const GATEWAY_TIMEOUT_MS = 3_000
const LOST_AFTER_MS = GATEWAY_TIMEOUT_MS + 5_000

const world = (throughput = 10, rowsOf: (statement: string) => ReadonlyArray<unknown> = () => []) => {
  const statements: Array<string> = []
  /** Campaign chunks started on this node, and those it runs now. */
  const started: Array<string> = []
  const running = new Set<string>()
  const submitted: Array<{ readonly messageId: string }> = []
  const payloads = new Map<string, WaPayload>()
  const layer = Layer.mergeAll(
    Layer.succeed(WaDispatcher, {
      remember: (id: string, payload: WaPayload) => void payloads.set(id, payload),
      payloadOf: (id: string) => payloads.get(id),
      submit: (job: { messageId: string }) => Effect.sync(() => void submitted.push({ messageId: job.messageId })),
      isHandling: () => false
    } as unknown as WaDispatcher),
    Layer.succeed(WaNumbers, { find: () => Effect.succeed({ accountId: "acc_1", throughput }) } as unknown as WaNumbers),
    Layer.succeed(ActorClient, { send: () => Effect.void } as unknown as ActorClient),
    Layer.succeed(WaChunkRuns, {
      isRunning: (order: { broadcastId: string; chunkNo: number }) => running.has(chunkKey(order)),
      start: (order: ChunkOrder) => Effect.sync(() => void started.push(chunkKey(order)))
    } as unknown as WaChunkRuns["Type"]),
    AppConfig.make({ gatewayTimeoutMs: GATEWAY_TIMEOUT_MS, waUnconfirmedExpiryMs: 86_400_000, natsPrefix: "t" } as AppSettings),
    // Statements are only read back for events: each query is recorded and finds what rowsOf gives (nothing by default).
    Layer.succeed(SqlClient.SqlClient, ((strings: TemplateStringsArray) => {
      const statement = strings.join("?")
      return Effect.sync(() => {
        statements.push(statement)
        return rowsOf(statement)
      })
    }) as unknown as SqlClient.SqlClient),
    Layer.succeed(Webhooks, {} as unknown as Webhooks),
    Layer.succeed(Subscriptions, { wants: () => Effect.succeed(false) } as unknown as Subscriptions)
  )
  // The repositories over that SQL client: their statements are recorded, not run.
  // Built once: a command's clock is the real one, so each apply is kept as quick as the behaviour.
  const services = Effect.runSync(Effect.scoped(Layer.build(Layer.provideMerge(Layer.mergeAll(WaMessagesRepo.Default, ConversationsRepo.Default), layer))))
  /** Applies a command, running its after-commit work (the dispatches) as if committed. */
  const apply = (state: typeof WaSenderKind.state.Type, command: typeof WaSenderKind.command.Type) =>
    Effect.gen(function*() {
      submitted.length = 0
      const applied = yield* Effect.provide(applyBehaviour(WaSenderKind, state, command, { key: NUMBER }), services)
      for (const work of applied.recorded.afterCommit) yield* work
      return applied
    })
  /** Runs a command's persisted statements as its commit would, over the recording SQL client. */
  const commit = (applied: { readonly recorded: { readonly persisted: ReadonlyArray<Effect.Effect<void, unknown, SqlClient.SqlClient>> } }) =>
    Effect.provide(Effect.forEach(applied.recorded.persisted, (write) => write, { discard: true }), services)
  return { submitted, statements, started, running, apply, commit }
}

const send = (n: number) =>
  new WaSend({
    messageId: `m${n}`,
    accountId: "acc_1",
    to: `+9198765400${String(n).padStart(2, "0")}`,
    type: "Text",
    content: { type: "text", object: { body: `hi ${n}` } },
    templateId: null,
    category: null,
    callbackData: null,
    price: 0
  })

const refusal = (retryable: boolean) => ({ success: false as const, message: "refused", detail: "Meta said no", category: retryable ? "gateway" as const : "recipient" as const, retryable })

describe("WhatsApp sender rules", () => {
  it.effect("sends leave in order at the number's pace: a burst of a tenth of a second, the rest when a token is due", () =>
    Effect.gen(function*() {
      const w = world(10)
      let state = WaSenderKind.initial(NUMBER)
      const left: Array<string> = []
      const pumps: Array<unknown> = []
      for (let n = 1; n <= 3; n++) {
        const applied = yield* w.apply(state, send(n))
        expect(applied.recorded.inserts.map((i) => [i.table, i.row.message_id, i.row.status])).toEqual([["wa_messages", `m${n}`, "queued"]])
        left.push(...w.submitted.map((s) => s.messageId))
        pumps.push(...applied.recorded.timers.filter((t) => t.command instanceof WaPump).map((t) => t.id))
        state = applied.state
      }
      // Ten a second: one token at a time.
      expect(left).toEqual(["m1"])
      expect(state.waiting).toEqual(["m2", "m3"])
      expect(Object.keys(state.inFlight)).toEqual(["m1"])
      expect(pumps).toContain("pump")
      // Accepted twice (redelivered): recorded once.
      const again = yield* w.apply(state, send(1))
      expect(again.recorded.inserts).toEqual([])
    }))

  it.effect("accepted: the wamid recorded, the message out of flight", () =>
    Effect.gen(function*() {
      const w = world(1_000)
      const sent = yield* w.apply(WaSenderKind.initial(NUMBER), send(1))
      const accepted = yield* w.apply(sent.state, new WaAnswered({ messageId: "m1", attempt: 1, outcome: { _tag: "Accepted", wamid: "wamid.X", at: 1 }, at: 1 }))
      expect(accepted.recorded.updates.map((u) => [u.row.status, u.row.upstream_id])).toEqual([["accepted", "wamid.X"]])
      expect(accepted.state.inFlight).toEqual({})
    }))

  it.effect("a retryable refusal: sent again after its backoff, never called lost while it waits; the last one fails", () =>
    Effect.gen(function*() {
      const w = world(1_000)
      const sent = yield* w.apply(WaSenderKind.initial(NUMBER), send(1))
      const refused = yield* w.apply(sent.state, new WaAnswered({ messageId: "m1", attempt: 1, outcome: { _tag: "Rejected", error: refusal(true) }, at: 1_000 }))
      const retry = refused.recorded.timers[0]!
      expect(retry.command).toEqual(new WaRetry({ messageId: "m1", attempt: 2 }))
      expect((retry.when as { at: Date }).at.getTime()).toBe(1_250)
      expect(refused.state.inFlight.m1).toMatchObject({ attempt: 2, retrying: true })
      // A sweep long after: a waiting retry is not a lost request.
      const swept = yield* w.apply({ ...refused.state, inFlight: { m1: { ...refused.state.inFlight.m1!, since: 0 } } }, new WaSweep())
      expect(swept.recorded.updates).toEqual([])
      const retried = yield* w.apply(refused.state, retry.command)
      expect(w.submitted).toEqual([{ messageId: "m1" }])
      const last = yield* w.apply(
        { ...retried.state, inFlight: { m1: { ...retried.state.inFlight.m1!, attempt: MAX_SEND_ATTEMPTS } } },
        new WaAnswered({ messageId: "m1", attempt: MAX_SEND_ATTEMPTS, outcome: { _tag: "Rejected", error: refusal(true) }, at: 2_000 })
      )
      expect(last.recorded.updates.map((u) => u.row.status)).toEqual(["failed"])
      expect(last.state.inFlight).toEqual({})
    }))

  it.effect("a request whose answer was lost is never sent again: unconfirmed, with its 24-hour expiry", () =>
    Effect.gen(function*() {
      const w = world(1_000)
      const sent = yield* w.apply(WaSenderKind.initial(NUMBER), send(1))
      const lost = { ...sent.state, inFlight: { m1: { ...sent.state.inFlight.m1!, since: Date.now() - LOST_AFTER_MS - 1_000 } } }
      const swept = yield* w.apply(lost, new WaSweep())
      expect(w.submitted).toEqual([])
      expect(swept.recorded.updates.map((u) => [u.row.message_id, u.row.status])).toEqual([["m1", "unconfirmed"]])
      expect(swept.recorded.timers.map((t) => [t.command, t.id])).toEqual([[new WaExpire({ messageId: "m1" }), "expire-m1"]])
      expect(swept.state.inFlight).toEqual({})
      // Not lost yet: left alone.
      const early = yield* w.apply(sent.state, new WaSweep())
      expect(early.recorded.updates).toEqual([])
      expect(Object.keys(early.state.inFlight)).toEqual(["m1"])
    }))
  it.effect("a refusal that is not retryable fails at once: failed at Meta's time, told live as message.failed", () =>
    Effect.gen(function*() {
      const w = world(1_000, (statement) => statement.includes("SELECT recipient, type, callback_data") ? [{ recipient: "+919876540001", type: "Text", callbackData: "cb" }] : [])
      const sent = yield* w.apply(WaSenderKind.initial(NUMBER), send(1))
      const refused = yield* w.apply(sent.state, new WaAnswered({ messageId: "m1", attempt: 1, outcome: { _tag: "Rejected", error: refusal(false) }, at: 5_000 }))
      expect(refused.recorded.updates.map((u) => [u.row.status, u.row.failed_at, u.row.attempts])).toEqual([["failed", new Date(5_000).toISOString(), 1]])
      expect(refused.recorded.timers).toEqual([])
      expect(refused.recorded.notices.map((n) => n.payload)).toMatchObject([{ message_id: "m1", status: "failed", callback_data: "cb" }])
      // The account's webhook does not want message.failed: nothing goes to the outbox.
      expect(refused.recorded.persisted).toEqual([])
      expect(refused.state.inFlight).toEqual({})
    }))

  it.effect("an answer Meta may or may not have taken (Unconfirmed): unconfirmed with its expiry, never sent again", () =>
    Effect.gen(function*() {
      const w = world(1_000)
      const sent = yield* w.apply(WaSenderKind.initial(NUMBER), send(1))
      const error = { ...refusal(true), message: "no answer" }
      const answered = yield* w.apply(sent.state, new WaAnswered({ messageId: "m1", attempt: 1, outcome: { _tag: "Unconfirmed", error }, at: 1 }))
      expect(w.submitted).toEqual([])
      expect(answered.recorded.updates.map((u) => [u.row.message_id, u.row.status, u.row.error])).toEqual([["m1", "unconfirmed", error]])
      expect(answered.recorded.timers.map((t) => [t.command, t.id])).toEqual([[new WaExpire({ messageId: "m1" }), "expire-m1"]])
      expect(answered.state.inFlight).toEqual({})
    }))

  it.effect("an answer of another attempt, or of a message not in flight, changes nothing", () =>
    Effect.gen(function*() {
      const w = world(1_000)
      const sent = yield* w.apply(WaSenderKind.initial(NUMBER), send(1))
      const stale = yield* w.apply(sent.state, new WaAnswered({ messageId: "m1", attempt: 2, outcome: { _tag: "Accepted", wamid: "wamid.X", at: 1 }, at: 1 }))
      const unknown = yield* w.apply(sent.state, new WaAnswered({ messageId: "m9", attempt: 1, outcome: { _tag: "Accepted", wamid: "wamid.Y", at: 1 }, at: 1 }))
      for (const applied of [stale, unknown]) {
        expect(applied.state).toEqual(sent.state)
        expect(applied.recorded.updates).toEqual([])
      }
      const again = yield* w.apply(sent.state, send(1))
      expect(again.state).toEqual(sent.state)
      expect(again.recorded.inserts).toEqual([])
    }))

  it.effect("a send is its conversation's last message: one statement in the commit, later ones kept", () =>
    Effect.gen(function*() {
      const w = world(1_000)
      const sent = yield* w.apply(WaSenderKind.initial(NUMBER), send(1))
      w.statements.length = 0
      yield* w.commit(sent)
      expect(w.statements).toHaveLength(1)
      expect(w.statements[0]).toContain("UPDATE conversations SET last_message")
      expect(w.statements[0]).toContain("<= ?::timestamptz")
    }))

  it.effect("an unconfirmed send's expiry: failed in the commit only if still unconfirmed, the state unchanged", () =>
    Effect.gen(function*() {
      const w = world(1_000)
      const expired = yield* w.apply(WaSenderKind.initial(NUMBER), new WaExpire({ messageId: "m1" }))
      expect(expired.state).toEqual(WaSenderKind.initial(NUMBER))
      expect(expired.recorded.updates).toEqual([])
      w.statements.length = 0
      // A status came meanwhile (nothing returned): no event.
      yield* w.commit(expired)
      expect(w.statements).toHaveLength(1)
      expect(w.statements[0]).toContain("UPDATE wa_messages SET status = 'failed'")
      expect(w.statements[0]).toContain("status = 'unconfirmed'")
    }))

  it.effect("a number's pace: its throughput, Meta's default tier when unknown, bursts of a tenth of a second", () =>
    Effect.sync(() => {
      expect(paceOf(10)).toEqual({ rate: 10, capacity: 1 })
      expect(paceOf(1_000)).toEqual({ rate: 1_000, capacity: 100 })
      expect(paceOf(undefined)).toEqual({ rate: WA_THROUGHPUT_DEFAULT, capacity: 8 })
    }))
})

describe("a number's campaign chunks", () => {
  const order: ChunkOrder = { broadcastId: "c-1", accountId: "acc_1", chunkNo: 2, first: 2_000, last: 2_999 }
  const empty = WaSenderKind.initial("")

  it.effect("a SendChunk runs on this node once its command commits, and is kept until finished, with a sweep timer", () =>
    Effect.gen(function*() {
      const w = world()
      const { state, recorded } = yield* w.apply(empty, new SendChunk({ order }))
      expect(w.started).toEqual([chunkKey(order)])
      expect(state.chunks).toEqual({ [chunkKey(order)]: order })
      expect(recorded.timers.map((t) => t.id)).toContain("sweep")
      expect(state.sweepAt).not.toBeNull()
    }))

  it.effect("a SendChunk delivered again while this node runs it: not run twice, not kept twice", () =>
    Effect.gen(function*() {
      const w = world()
      w.running.add(chunkKey(order))
      const kept = { ...empty, chunks: { [chunkKey(order)]: order }, sweepAt: Date.now() + 1_000 }
      const { state } = yield* w.apply(kept, new SendChunk({ order }))
      expect(w.started).toEqual([])
      expect(state).toEqual(kept)
    }))

  it.effect("WaChunkFinished forgets the chunk; the sweep runs a kept chunk this node does not run (its node stopped)", () =>
    Effect.gen(function*() {
      const w = world()
      const kept = { ...empty, chunks: { [chunkKey(order)]: order } }
      const swept = yield* w.apply(kept, new WaSweep())
      expect(w.started).toEqual([chunkKey(order)])
      expect(swept.state.sweepAt).not.toBeNull()
      const finished = yield* w.apply(swept.state, new WaChunkFinished({ broadcastId: order.broadcastId, chunkNo: order.chunkNo }))
      expect(finished.state.chunks).toEqual({})
      const again = yield* w.apply(finished.state, new WaChunkFinished({ broadcastId: order.broadcastId, chunkNo: order.chunkNo }))
      expect(again.state).toEqual(finished.state)
    }))
})
