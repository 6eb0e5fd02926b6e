import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { ActorClient } from "../../src/actors/runtime/index.ts"
import { ChunkOrder, chunkKey, SendChunk } from "../../src/messaging/chunkProtocol.ts"
import { ChunkRuns } from "../../src/messaging/ChunkRuns.ts"
import { type SendJob, SendDispatcher } from "../../src/messaging/SendDispatcher.ts"
import { Answered, ChunkFinished, Retry, Send, SenderKind, Sweep } from "../../src/messaging/SenderKind.ts"
import { MAX_SEND_ATTEMPTS, retryDelay } from "../../src/messaging/sendRetries.ts"
import { SqlLive } from "../../src/storage/Database.ts"
import { Storage } from "../../src/storage/Migrations.ts"
import { Subscriptions } from "../../src/webhooks/Subscriptions.ts"
import { Webhooks } from "../../src/webhooks/Webhooks.ts"
import { applyBehaviour } from "../support/behaviour.ts"
import { IsolationLive, TestConfig } from "../support/isolation.ts"

// The sender actor's rules (src/messaging/SenderKind.ts), one command at a time with the behaviour
// harness (the messages table is real: a retry and the sweep read a message's row). A send is
// recorded queued and dispatched once its command commits; the gateway's answer makes it sent and
// charged once, failed with its error, unconfirmed (not charged, not failed), or, for a gateway
// failure, sent again after a backoff until MAX_SEND_ATTEMPTS.
//
// A single send whose answer never came back (its node died, or was
// cut off from NATS after the request left: the cluster's "worker cut off from NATS" fault, where
// the next owner sent the message to the gateway a second time). A lost attempt may have reached
// the gateway, so it is not sent again while its delivery report may still come; one whose report
// came is recorded sent; one with no report after the window is sent again with its message_id.

const GATEWAY_TIMEOUT_MS = 3_000
const WINDOW_MS = 10_000
const LOST_AFTER_MS = GATEWAY_TIMEOUT_MS + 5_000

const submitted: Array<SendJob> = []
const started: Array<string> = []
const running = new Set<string>()
const Fakes = Layer.mergeAll(
  Layer.succeed(SendDispatcher, { submit: (job: SendJob) => Effect.sync(() => void submitted.push(job)), isHandling: () => false } as unknown as SendDispatcher),
  Layer.succeed(ActorClient, { send: () => Effect.void } as unknown as ActorClient),
  Layer.succeed(Webhooks, {} as unknown as Webhooks),
  Layer.succeed(Subscriptions, { wants: () => Effect.succeed(false) } as unknown as Subscriptions),
  Layer.succeed(ChunkRuns, {
    isRunning: (order: { broadcastId: string; chunkNo: number }) => running.has(chunkKey(order)),
    start: (order: ChunkOrder) => Effect.sync(() => void started.push(chunkKey(order)))
  } as unknown as ChunkRuns["Type"])
)
const Env = Layer.mergeAll(SqlLive, Storage.Default.pipe(Layer.provide(SqlLive)), Fakes).pipe(
  Layer.provideMerge(TestConfig({ gatewayTimeoutMs: GATEWAY_TIMEOUT_MS, broadcastReportWindowMs: WINDOW_MS })),
  Layer.provideMerge(IsolationLive)
)

layer(Env, { timeout: 60_000 })("sender rules", (it) => {
  const aBot = Effect.gen(function*() {
    yield* (yield* Storage).awaitReadyFor("30 seconds")
    const sql = yield* SqlClient.SqlClient
    const [user] = yield* sql<{ userId: string }>`INSERT INTO users (email, password_hash) VALUES (${`s${Math.random()}@sweep.test`}, 'x') RETURNING user_id`
    const [account] = yield* sql<{ accountId: string }>`INSERT INTO accounts (label, plan, owner_user_id) VALUES ('Sweep', 'growth', ${user!.userId}) RETURNING account_id`
    const [bot] = yield* sql<{ botId: string }>`INSERT INTO bots (account_id, name, status) VALUES (${account!.accountId}, 'B', 'active') RETURNING bot_id`
    return { sql, accountId: account!.accountId, botId: bot!.botId }
  })

  /** A sweep, its after-commit work (the dispatches) run as if the commit were done. */
  const sweep = (state: typeof SenderKind.state.Type, botId: string) =>
    Effect.gen(function*() {
      submitted.length = 0
      const applied = yield* applyBehaviour(SenderKind, state, new Sweep(), { key: botId })
      for (const work of applied.recorded.afterCommit) yield* work
      return applied
    })

  /** A send the actor recorded (queued, its row written) and dispatched `ago` ms before now, on a node since lost. */
  const lostSend = (ago: number) =>
    Effect.gen(function*() {
      const { sql, accountId, botId } = yield* aBot
      const messageId = crypto.randomUUID()
      yield* sql`INSERT INTO messages (message_id, account_id, bot_id, recipient, content, source, status, price)
                 VALUES (${messageId}, ${accountId}, ${botId}, '+919876541234', '{"type":"text","text":"hi"}', 'api', 'queued', 0.1)`
      const state = {
        inFlight: { [messageId]: { attempt: 1, since: Date.now() - ago, replyTo: "_INBOX.caller", accountId, to: "+919876541234", price: 0.1 } },
        sweepAt: null,
        chunks: {}
      }
      return { sql, botId, messageId, state }
    })

  it.effect("its delivery report came: recorded sent and charged once, the caller answered, not sent again", () =>
    Effect.gen(function*() {
      const { sql, botId, messageId, state } = yield* lostSend(LOST_AFTER_MS + 1_000)
      yield* sql`UPDATE messages SET status = 'delivered', delivered_at = now() WHERE message_id = ${messageId}`
      const { state: next, recorded } = yield* sweep(state, botId)
      expect(submitted.map((j) => j.messageId)).toEqual([])
      expect(next.inFlight[messageId]).toBeUndefined()
      expect(recorded.updates.map((u) => u.row)).toEqual([expect.objectContaining({ message_id: messageId, status: "sent" })])
      expect(recorded.inserts).toEqual([{ table: "wallet_transactions", row: expect.objectContaining({ kind: "charge", reference: messageId }) }])
      expect(recorded.notices.map((n) => n.payload)).toEqual([{ _tag: "Sent", messageId }])
    }))

  it.effect("no report yet, inside the report window: kept in flight, not sent again", () =>
    Effect.gen(function*() {
      const { botId, messageId, state } = yield* lostSend(LOST_AFTER_MS + 1_000)
      const { state: next, recorded } = yield* sweep(state, botId)
      expect(submitted.map((j) => j.messageId)).toEqual([])
      expect(next.inFlight[messageId]).toEqual(state.inFlight[messageId])
      expect(next.sweepAt).not.toBeNull()
      expect(recorded.updates.map((u) => u.row)).toEqual([])
    }))

  it.effect("no report after the window: sent again, with its message_id and attempt", () =>
    Effect.gen(function*() {
      const { botId, messageId, state } = yield* lostSend(LOST_AFTER_MS + WINDOW_MS + 1_000)
      const { state: next } = yield* sweep(state, botId)
      expect(submitted.map((j) => [j.messageId, j.attempt])).toEqual([[messageId, 1]])
      expect(next.inFlight[messageId]!.since).toBeGreaterThan(state.inFlight[messageId]!.since)
    }))

  it.effect("its Send delivered again after a takeover: not sent again at once (the sweep decides)", () =>
    Effect.gen(function*() {
      const { botId, messageId, state } = yield* lostSend(1_000)
      const entry = state.inFlight[messageId]!
      const send = new Send({
        message: { messageId, accountId: entry.accountId, to: entry.to, content: { type: "text", text: "hi", suggestions: [] } },
        templateId: null,
        source: "api",
        price: 0.1,
        replyTo: entry.replyTo
      })
      const { state: next, recorded } = yield* applyBehaviour(SenderKind, state, send, { key: botId })
      expect(recorded.afterCommit).toEqual([])
      expect(recorded.inserts).toEqual([])
      expect(next.inFlight[messageId]).toEqual(entry)
    }))

  const gatewayError = (retryable: boolean, category: "gateway" | "recipient" | "unknown" = retryable ? "gateway" : "recipient") =>
    ({ success: false as const, message: "refused", detail: "the gateway said no", category, retryable })

  /** A new send applied (its dispatch run as if committed): the state and what was recorded. */
  const newSend = Effect.gen(function*() {
    const { sql, accountId, botId } = yield* aBot
    const messageId = crypto.randomUUID()
    const send = new Send({
      message: { messageId, accountId, to: "+919876541234", content: { type: "text", text: "hi", suggestions: [] } },
      templateId: null,
      source: "api",
      price: 0.25,
      replyTo: "_INBOX.caller"
    })
    submitted.length = 0
    const applied = yield* applyBehaviour(SenderKind, SenderKind.initial(botId), send, { key: botId })
    // The row is what the commit would write (the retry reads its content back).
    yield* sql`INSERT INTO messages (message_id, account_id, bot_id, recipient, content, source, status, price)
               VALUES (${messageId}, ${accountId}, ${botId}, '+919876541234', '{"type":"text","text":"hi","suggestions":[]}', 'api', 'queued', 0.25)`
    for (const work of applied.recorded.afterCommit) yield* work
    return { ...applied, botId, messageId }
  })
  const answered = (botId: string, state: typeof SenderKind.state.Type, messageId: string, attempt: number, outcome: Answered["outcome"]) =>
    applyBehaviour(SenderKind, state, new Answered({ messageId, attempt, outcome, at: 1_700_000_000_000 }), { key: botId })

  it.effect("a Send: recorded queued, dispatched once after its commit, in flight with a sweep timer", () =>
    Effect.gen(function*() {
      const { state, recorded, messageId } = yield* newSend
      expect(recorded.inserts.map((i) => [i.table, i.row.message_id, i.row.status, i.row.attempts])).toEqual([["messages", messageId, "queued", 1]])
      expect(submitted.map((j) => [j.messageId, j.attempt])).toEqual([[messageId, 1]])
      expect(Object.keys(state.inFlight)).toEqual([messageId])
      expect(recorded.timers.map((t) => [t.command, t.id])).toEqual([[new Sweep(), "sweep"]])
    }))

  it.effect("accepted: sent, charged once, the caller told; a second answer to it changes nothing", () =>
    Effect.gen(function*() {
      const { state, botId, messageId } = yield* newSend
      const { state: next, recorded } = yield* answered(botId, state, messageId, 1, { _tag: "Accepted", at: 1 })
      expect(recorded.updates.map((u) => [u.row.status, u.row.sent_at])).toEqual([["sent", new Date(1_700_000_000_000).toISOString()]])
      expect(recorded.inserts.map((i) => [i.table, i.row.kind, i.row.amount, i.row.reference])).toEqual([["wallet_transactions", "charge", 0.25, messageId]])
      expect(recorded.notices.map((n) => [n.subject, n.payload])).toEqual([["_INBOX.caller", { _tag: "Sent", messageId }]])
      expect(next.inFlight).toEqual({})
      const twice = yield* answered(botId, next, messageId, 1, { _tag: "Accepted", at: 1 })
      expect(twice.recorded.inserts).toEqual([])
      expect(twice.recorded.updates).toEqual([])
    }))

  it.effect("refused for the recipient: failed with its error, not charged, not sent again", () =>
    Effect.gen(function*() {
      const { state, botId, messageId } = yield* newSend
      const error = gatewayError(false)
      const { state: next, recorded } = yield* answered(botId, state, messageId, 1, { _tag: "Rejected", error })
      expect(recorded.updates.map((u) => [u.row.status, u.row.error])).toEqual([["failed", error]])
      expect(recorded.inserts).toEqual([])
      expect(recorded.timers).toEqual([])
      expect(recorded.notices.map((n) => n.payload)).toEqual([{ _tag: "Failed", error }])
      expect(next.inFlight).toEqual({})
    }))

  it.effect("unconfirmed: recorded unconfirmed, neither failed nor charged, never sent again", () =>
    Effect.gen(function*() {
      const { state, botId, messageId } = yield* newSend
      const error = gatewayError(false, "unknown")
      const { state: next, recorded } = yield* answered(botId, state, messageId, 1, { _tag: "Unconfirmed", error })
      expect(recorded.updates.map((u) => u.row.status)).toEqual(["unconfirmed"])
      expect(recorded.inserts).toEqual([])
      expect(recorded.timers).toEqual([])
      expect(next.inFlight).toEqual({})
    }))

  it.effect("a gateway failure: sent again after 250 ms, 500 ms, 1 s, 2 s with the same message_id, then failed", () =>
    Effect.gen(function*() {
      const { state: first, botId, messageId } = yield* newSend
      let state = first
      const delays: Array<number> = []
      for (let attempt = 1; attempt < MAX_SEND_ATTEMPTS; attempt++) {
        const failed = yield* answered(botId, state, messageId, attempt, { _tag: "Rejected", error: gatewayError(true) })
        const timer = failed.recorded.timers[0]!
        expect(timer.command).toBeInstanceOf(Retry)
        delays.push((timer.when as { at: Date }).at.getTime() - 1_700_000_000_000)
        expect(failed.recorded.updates).toEqual([])
        submitted.length = 0
        const retried = yield* applyBehaviour(SenderKind, failed.state, timer.command, { key: botId })
        for (const work of retried.recorded.afterCommit) yield* work
        expect(submitted.map((j) => [j.messageId, j.attempt])).toEqual([[messageId, attempt + 1]])
        // The answer of an earlier attempt, late: ignored.
        const late = yield* answered(botId, retried.state, messageId, attempt, { _tag: "Accepted", at: 1 })
        expect(late.recorded.updates).toEqual([])
        state = retried.state
      }
      expect(delays).toEqual(Array.from({ length: MAX_SEND_ATTEMPTS - 1 }, (_, i) => Duration.toMillis(retryDelay(i + 1))))
      const last = yield* answered(botId, state, messageId, MAX_SEND_ATTEMPTS, { _tag: "Rejected", error: gatewayError(true) })
      expect(last.recorded.updates.map((u) => [u.row.status, u.row.attempts])).toEqual([["failed", MAX_SEND_ATTEMPTS]])
      expect(last.state.inFlight).toEqual({})
    }))

  const order: ChunkOrder = { broadcastId: "b-1", accountId: "a-1", chunkNo: 3, first: 3_000, last: 3_999 }
  const empty = { inFlight: {}, sweepAt: null, chunks: {} }

  it.effect("a SendChunk: run on this node once its command commits, kept until finished, with a sweep timer", () =>
    Effect.gen(function*() {
      started.length = 0
      const { state, recorded } = yield* applyBehaviour(SenderKind, empty, new SendChunk({ order }), { key: "bot-1" })
      expect(started).toEqual([])
      for (const work of recorded.afterCommit) yield* work
      expect(started).toEqual([chunkKey(order)])
      expect(state.chunks).toEqual({ [chunkKey(order)]: order })
      expect(recorded.timers.map((t) => [t.command, t.id])).toEqual([[new Sweep(), "sweep"]])
    }))

  it.effect("a SendChunk delivered again: not run twice while this node runs it, not kept twice", () =>
    Effect.gen(function*() {
      started.length = 0
      running.add(chunkKey(order))
      const kept = { ...empty, chunks: { [chunkKey(order)]: order }, sweepAt: Date.now() + 1_000 }
      const { state, recorded } = yield* applyBehaviour(SenderKind, kept, new SendChunk({ order }), { key: "bot-1" })
      running.delete(chunkKey(order))
      expect(recorded.afterCommit).toEqual([])
      expect(recorded.timers).toEqual([])
      expect(state).toEqual(kept)
    }))

  it.effect("a ChunkFinished forgets the chunk; one about a chunk not kept changes nothing", () =>
    Effect.gen(function*() {
      const kept = { ...empty, chunks: { [chunkKey(order)]: order } }
      const finished = yield* applyBehaviour(SenderKind, kept, new ChunkFinished({ broadcastId: order.broadcastId, chunkNo: order.chunkNo }), { key: "bot-1" })
      expect(finished.state.chunks).toEqual({})
      const again = yield* applyBehaviour(SenderKind, finished.state, new ChunkFinished({ broadcastId: order.broadcastId, chunkNo: order.chunkNo }), { key: "bot-1" })
      expect(again.state).toBe(finished.state)
    }))

  it.effect("the sweep runs here the kept chunks this node does not run", () =>
    Effect.gen(function*() {
      started.length = 0
      const kept = { ...empty, chunks: { [chunkKey(order)]: order }, sweepAt: Date.now() }
      const { recorded } = yield* applyBehaviour(SenderKind, kept, new Sweep(), { key: "bot-1" })
      for (const work of recorded.afterCommit) yield* work
      expect(started).toEqual([chunkKey(order)])
    }))
})
