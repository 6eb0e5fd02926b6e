import { SqlClient } from "@effect/sql"
import { Config, Duration, Effect, Option, Queue } from "effect"
import { randomUUID } from "node:crypto"
import { Outbox } from "../actors/runtime/index.ts"
import { Storage } from "../storage/Migrations.ts"
import { DeliveriesRepo } from "./DeliveriesRepo.ts"
import { DeliveryKind, Start } from "./DeliveryKind.ts"
import { MessageBatchesRepo, type PendingItem, type StagedItem } from "./MessageBatchesRepo.ts"
import { type BroadcastListener, Subscriptions } from "./Subscriptions.ts"
import { WebhooksRepo } from "./WebhooksRepo.ts"

/** The event type of a batch of a broadcast's per-recipient events (docs/webhooks.md, Broadcast messages). */
export const BATCH_EVENT_TYPE = "message.batch"

/**
 * A batch's events' JSON stays under this many bytes, whatever HERALD_WEBHOOK_BATCH_MAX_EVENTS
 * allows: a request a consumer's gateway takes (most take 1 MB and more), and under the outbox's
 * 256 KB per message, though a batch's Start carries its delivery's id, not its events.
 */
export const BATCH_MAX_BYTES = 256 * 1024

export const BATCH_MAX_EVENTS_DEFAULT = 500
export const BATCH_WINDOW_MS_DEFAULT = 1_000

/**
 * HERALD_WEBHOOK_BATCH_MAX_EVENTS (1–1,000, default 500) and HERALD_WEBHOOK_BATCH_WINDOW_MS
 * (0–60,000, default 1,000): a batch goes out once it holds that many events (or BATCH_MAX_BYTES
 * of them), or once its oldest event has waited the window, whichever comes first.
 */
export const batchSettings = Config.all({
  maxEvents: Config.integer("HERALD_WEBHOOK_BATCH_MAX_EVENTS").pipe(
    Config.validate({ message: "must be a whole number of events from 1 to 1000", validation: (n) => n >= 1 && n <= 1_000 }),
    Config.withDefault(BATCH_MAX_EVENTS_DEFAULT)
  ),
  windowMs: Config.integer("HERALD_WEBHOOK_BATCH_WINDOW_MS").pipe(
    Config.validate({ message: "must be a whole number of milliseconds from 0 to 60000", validation: (n) => n >= 0 && n <= 60_000 }),
    Config.withDefault(BATCH_WINDOW_MS_DEFAULT)
  )
})

/** Staged events read per round at most (their ids and ages; the events of the batches cut are then taken). */
const ROUND_ITEMS = 10_000
/** While events wait, how often the batcher looks whether a batch has filled. */
const POLL_MS = 100
/** With nothing staged, how often a node looks anyway (events staged by a node that stopped). */
const IDLE_SWEEP = Duration.seconds(5)
const FAILED_PAUSE = Duration.seconds(1)

type Item = StagedItem

/** What a round did: undefined when another node's batcher held the lock. */
export interface Round {
  /** Staged events looked at, and those sent in batches (or dropped with their endpoint). */
  readonly read: number
  readonly taken: number
  readonly batches: number
  /** When the oldest event left waiting is due (ms from now), if any is left. */
  readonly nextDueMs: number | undefined
}

/**
 * The per-recipient `message.*` events of broadcasts, for endpoints that opted in
 * (`include_broadcast_messages`), delivered in batches: a million recipients are not a million
 * requests (docs/webhooks.md, Broadcast messages).
 *
 * The statement that moves a broadcast's target (a slice's outcomes, a delivery report, the end of
 * a report window) stages its events, one row of `webhook_batch_items` per event and endpoint, in
 * that statement or its transaction: an event exists exactly when its change was committed, once
 * (a statement repeated after a crash, or a repeated callback, changes no target and stages
 * nothing). Accounts with no endpoint opted in stage nothing: the statements are the ones they
 * always were, decided from the cached subscriptions.
 *
 * The batcher cuts batches per (endpoint, broadcast): up to `maxEvents` events (and
 * BATCH_MAX_BYTES), or fewer once the oldest has waited `windowMs`. A batch is one ordinary
 * webhook event, `message.batch`, written with its delivery and its `delivery` actor's Start in
 * the transaction that deletes its staged rows: from there it is signed, retried (1 s, 5 s, 30 s),
 * dead-lettered and replayed like any event. Every node runs the batcher; a transaction-scoped
 * advisory lock lets one round run at a time, so no event is in two batches.
 */
export class MessageBatches extends Effect.Service<MessageBatches>()("herald/webhooks/MessageBatches", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const outbox = yield* Outbox
    const repo = yield* MessageBatchesRepo
    const deliveries = yield* DeliveriesRepo
    const webhooks = yield* WebhooksRepo
    const subscriptions = yield* Subscriptions
    // Migrations are awaited when the node has them run (every node does; a test's layer may not).
    const storage = yield* Effect.serviceOption(Storage)
    // A bad value stops the node at start, naming the variable.
    const settings = yield* Effect.orDie(batchSettings)
    const wake = yield* Queue.sliding<void>(1)

    /** Events were staged on this node (call after the commit): the batcher looks soon. */
    const staged = Effect.asVoid(Queue.offer(wake, undefined))

    /** The endpoints that opted in to a bot's broadcast messages (from memory; none for most accounts). */
    const listeners = (accountId: string, botId: string) => subscriptions.broadcastListeners(accountId, botId)

    /**
     * Stages events, each for every listener that asked for its type, in the caller's transaction
     * (a delivery report's). An event's `data` is what a single send's event of its type carries.
     * Whether anything was staged.
     */
    const stage = (input: {
      readonly listeners: ReadonlyArray<BroadcastListener>
      readonly accountId: string
      readonly broadcastId: string
      readonly botId: string
      readonly occurredAt: Date
      readonly events: ReadonlyArray<{ readonly type: string; readonly data: unknown }>
    }) => {
      const hooks: Array<string> = []
      const types: Array<string> = []
      const data: Array<string> = []
      for (const event of input.events) {
        const json = JSON.stringify(event.data)
        for (const listener of input.listeners) {
          if (!listener.types.includes(event.type)) continue
          hooks.push(listener.webhookId)
          types.push(event.type)
          data.push(json)
        }
      }
      if (hooks.length === 0) return Effect.succeed(false)
      return Effect.as(
        repo.stage({ accountId: input.accountId, broadcastId: input.broadcastId, botId: input.botId, occurredAt: input.occurredAt, hooks, types, data }),
        true
      )
    }

    /** One batch's envelope, delivery and Start. */
    const batchOf = (items: ReadonlyArray<Item>, events: ReadonlyArray<unknown>) => {
      const first = items[0]!
      const eventId = randomUUID()
      const deliveryId = `wd_${randomUUID()}`
      const occurredAt = new Date().toISOString()
      const summary = { broadcast_id: first.broadcastId, bot_id: first.botId, count: events.length }
      return {
        eventId,
        deliveryId,
        first,
        occurredAt,
        summary,
        envelope: {
          event_id: eventId,
          type: BATCH_EVENT_TYPE,
          occurred_at: occurredAt,
          delivery_id: deliveryId,
          account_id: first.accountId,
          data: { ...summary, events }
        }
      }
    }

    /**
     * Cuts a group's events (one endpoint, one broadcast, in staging order) into batches of up to
     * `maxEvents` events and BATCH_MAX_BYTES of JSON.
     */
    const cut = (items: ReadonlyArray<Item>) => {
      const out: Array<ReturnType<typeof batchOf>> = []
      let open: Array<Item> = []
      let events: Array<unknown> = []
      let bytes = 0
      const close = () => {
        if (open.length > 0) out.push(batchOf(open, events))
        open = []
        events = []
        bytes = 0
      }
      for (const item of items) {
        const event = { event_id: item.eventId, type: item.type, occurred_at: new Date(item.occurredAt).toISOString(), data: item.data }
        const size = Buffer.byteLength(JSON.stringify(event)) + 1
        if (open.length >= settings.maxEvents || (open.length > 0 && bytes + size > BATCH_MAX_BYTES)) close()
        open.push(item)
        events.push(event)
        bytes += size
      }
      close()
      return out
    }

    /**
     * One round, in one transaction under the batcher's lock: reads the oldest staged events'
     * ids and ages, picks whole batches (a group's full batches, and everything of a group whose
     * oldest event has waited the window), deletes those rows and writes, for each batch, the
     * `message.batch` event, its delivery and its Start. A crash before the commit leaves the rows
     * staged; after it, the deliveries exist and the rows are gone: each event is in one batch.
     */
    const flushOnce: Effect.Effect<Round | undefined, unknown> = Effect.gen(function*() {
      if (!(yield* repo.lockRound())) return undefined
      const pending = yield* repo.pending(ROUND_ITEMS)
      const groups = new Map<string, Array<PendingItem>>()
      for (const row of pending) {
        const key = `${row.webhookId}/${row.broadcastId}`
        const group = groups.get(key)
        if (group === undefined) groups.set(key, [row])
        else group.push(row)
      }
      const take: Array<string> = []
      let nextDueMs: number | undefined
      for (const group of groups.values()) {
        if (group[0]!.ageMs >= settings.windowMs) {
          for (const row of group) take.push(row.itemId)
          continue
        }
        const full = Math.floor(group.length / settings.maxEvents) * settings.maxEvents
        for (let i = 0; i < full; i++) take.push(group[i]!.itemId)
        if (full < group.length) {
          const due = Math.max(0, settings.windowMs - group[full]!.ageMs)
          nextDueMs = nextDueMs === undefined ? due : Math.min(nextDueMs, due)
        }
      }
      if (take.length === 0) return { read: pending.length, taken: 0, batches: 0, nextDueMs }
      const items = yield* repo.take(take)
      const endpoints = [...new Set(items.map((i) => i.webhookId))]
      // An endpoint deleted or deactivated since gets nothing more (as its deliveries would not).
      const live = yield* webhooks.liveAmong(endpoints)
      const byGroup = new Map<string, Array<Item>>()
      for (const item of items) {
        if (!live.has(item.webhookId)) continue
        const key = `${item.webhookId}/${item.broadcastId}`
        const group = byGroup.get(key)
        if (group === undefined) byGroup.set(key, [item])
        else group.push(item)
      }
      const batches = [...byGroup.values()].flatMap(cut)
      if (batches.length > 0) {
        yield* deliveries.insertBatches(batches.map((b) => ({
          eventId: b.eventId,
          deliveryId: b.deliveryId,
          webhookId: b.first.webhookId,
          accountId: b.first.accountId,
          botId: b.first.botId,
          type: BATCH_EVENT_TYPE,
          summary: b.summary,
          occurredAt: b.occurredAt,
          envelope: b.envelope
        })))
        yield* outbox.enqueueMany(
          DeliveryKind,
          batches.map((b) => ({
            key: b.deliveryId,
            command: new Start({ webhookId: b.first.webhookId, accountId: b.first.accountId, eventType: BATCH_EVENT_TYPE, envelope: null, stored: true }),
            msgId: `start-${b.deliveryId}`
          }))
        )
      }
      return { read: pending.length, taken: items.length, batches: batches.length, nextDueMs }
    }).pipe(sql.withTransaction)

    yield* Effect.gen(function*() {
      if (Option.isSome(storage)) yield* storage.value.awaitReady
      for (;;) {
        const round = yield* flushOnce.pipe(
          Effect.tap((r) => r !== undefined && r.batches > 0 ? outbox.nudge : Effect.void),
          Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("webhook batcher failed; retrying", cause), "failed" as const))
        )
        if (round === "failed") yield* Effect.sleep(FAILED_PAUSE)
        // Another node's batcher is at work: look again soon, it may stop.
        else if (round === undefined) yield* Effect.sleep(Duration.millis(POLL_MS))
        // More staged than one round reads: on at once.
        else if (round.read >= ROUND_ITEMS && round.taken > 0) continue
        else if (round.read === 0) yield* Queue.take(wake).pipe(Effect.timeoutOption(IDLE_SWEEP))
        else yield* Effect.sleep(Duration.millis(Math.max(10, Math.min(POLL_MS, round.nextDueMs ?? POLL_MS))))
      }
    }).pipe(Effect.forkScoped)

    return { listeners, stage, staged, flushOnce, settings } as const
  }),
  dependencies: [Subscriptions.Default, MessageBatchesRepo.Default, DeliveriesRepo.Default, WebhooksRepo.Default]
}) {}
