import { Duration, Effect, Schema } from "effect"
import { ActorKind } from "../actors/runtime/index.ts"
import type { ActorContext } from "../actors/runtime/ActorKind.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { CAPI_BATCH_MAX, CAPI_MAX_AGE_SEC } from "./capiEvent.ts"
import { IntegrationLogsRepo } from "../integrations/IntegrationLogsRepo.ts"
import { CapiConfigs } from "./CapiConfigs.ts"
import { CapiEventsRepo } from "./CapiEventsRepo.ts"
import { CapiForwarder } from "./CapiForwarder.ts"

const QueuedEvent = Schema.Struct({
  uid: Schema.String,
  eventName: Schema.String,
  eventId: Schema.String,
  /** The event in Meta's format, hashed. */
  payload: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

/** Events accepted by POST /api/v1/app/meta-ads/capi/events (checked and hashed on the API node). */
export class CapiQueue extends Schema.TaggedClass<CapiQueue>()("CapiQueue", { events: Schema.Array(QueuedEvent) }) {}

/** Forward what is queued (a durable timer, or a nudge when the configuration changes). */
export class CapiFlush extends Schema.TaggedClass<CapiFlush>()("CapiFlush", {}) {}

const Forward = Schema.Struct({
  uids: Schema.Array(Schema.String),
  statusCode: Schema.NullOr(Schema.Int),
  tookMs: Schema.Number,
  snippet: Schema.String
})

/** Meta's answers to a flush's requests, handed back in memory to the held flush. */
export class CapiForwarded extends Schema.TaggedClass<CapiForwarded>()("CapiForwarded", {
  attempt: Schema.Int,
  forwards: Schema.Array(Forward)
}) {}

/** Queue the account's failed events again (after the cause is fixed: a token, an outage). */
export class CapiRedrive extends Schema.TaggedClass<CapiRedrive>()("CapiRedrive", {}) {}

export const CapiCommand = Schema.Union(CapiQueue, CapiFlush, CapiForwarded, CapiRedrive)
type CapiCommand = typeof CapiCommand.Type

const CapiState = Schema.Struct({
  flushAt: Schema.NullOr(Schema.Number),
  /** Failed tries so far of the batch at the head of the queue. */
  attempt: Schema.Int,
  /** Events came since the last flush read the queue: some may not have been committed when it read. */
  dirty: Schema.Boolean
})
type CapiState = typeof CapiState.Type

const MAX_BACKOFF_MS = 5 * 60_000
/** Requests of one flush made at once: a backlog drains several batches per round trip. */
const PARALLEL_REQUESTS = 4
const SNIPPET = 500

/** 2xx took the batch; no answer, 5xx and 429 may pass later; any other 4xx never will. */
const outcomeOf = (statusCode: number | null) =>
  statusCode !== null && statusCode >= 200 && statusCode < 300 ? "delivered" : statusCode === null || statusCode >= 500 || statusCode === 429 ? "retry" : "refused"

/**
 * `capi`: one actor per account (key = account_id). Events are rows of `capi_events`, queued in
 * the order they came; a flush sends the oldest in requests of up to 1,000 (Meta's limit), up to
 * four requests at once, and is held open until Meta answered them all, so the answers and the
 * rows they settle commit together (a node
 * that dies mid-request leaves the flush to be applied again: at least once, which Meta's own
 * deduplication on event_name + event_id absorbs). A request with no answer, a 5xx or a 429 is
 * retried (its events alone) with exponential backoff; after HERALD_CAPI_MAX_ATTEMPTS tries, or
 * at once for any other 4xx, the request's events fail with Meta's answer (listed, and queued again by a redrive). Every request
 * is an integration log row.
 */
/** Schedules the flush timer `ms` from now unless one is set (or `replace`). */
const flushAfter = (ctx: ActorContext<CapiCommand>, current: CapiState, ms: number, replace = false): CapiState => {
  if (current.flushAt !== null && !replace) return current
  ctx.schedule(new CapiFlush(), { after: Duration.millis(ms) }, "flush")
  return { ...current, flushAt: Date.now() + ms }
}

/** Settles queued events in the commit (a write of the actor's own table). */
const settle = (ctx: ActorContext<CapiCommand>, uids: ReadonlyArray<string>, status: "queued" | "sent" | "failed", attempts: number, error: string | null) =>
  ctx.persist(CapiEventsRepo.settle(uids, status, attempts, error))

export const CapiKind = ActorKind.make("capi", {
  command: CapiCommand,
  state: CapiState,
  initial: (): CapiState => ({ flushAt: null, attempt: 0, dirty: false }),
  passivateAfter: Duration.seconds(30),
  handlers: {
    CapiQueue: (state, command, ctx) =>
      Effect.map(AppConfig, (config) => {
        for (const event of command.events) CapiEventsRepo.insert(ctx, ctx.key, event)
        return flushAfter(ctx, { ...state, dirty: true }, config.capiBatchWindowMs)
      }),

    CapiFlush: (state, _command, ctx) =>
      Effect.gen(function*() {
        const config = yield* AppConfig
        const configs = yield* CapiConfigs
        const forwarder = yield* CapiForwarder
        const accountId = ctx.key
        const next: CapiState = { ...state, flushAt: null, dirty: false }
        const target = yield* configs.target(accountId)
        // Not configured (or sealed under another key): events wait; saving the configuration flushes.
        if (target === undefined) return next
        const rows = yield* CapiEventsRepo.queued(accountId, CAPI_BATCH_MAX * PARALLEL_REQUESTS)
        const oldest = Math.floor(Date.now() / 1000) - CAPI_MAX_AGE_SEC
        const stale = rows.filter((row) => row.payload.event_time < oldest)
        if (stale.length > 0) {
          settle(ctx, stale.map((row) => row.eventUid), "failed", state.attempt, "event_time became more than 7 days old before Meta took it; Meta refuses older events")
        }
        const fresh = rows.filter((row) => row.payload.event_time >= oldest)
        if (fresh.length === 0) return state.dirty || stale.length > 0 ? flushAfter(ctx, next, config.capiBatchWindowMs) : next
        const attempt = state.attempt + 1
        const batches = Array.from({ length: Math.ceil(fresh.length / CAPI_BATCH_MAX) }, (_, i) => fresh.slice(i * CAPI_BATCH_MAX, (i + 1) * CAPI_BATCH_MAX))
        const finished = ctx.hold(Duration.millis(config.gatewayTimeoutMs + 30_000))
        const forwards: Array<typeof Forward.Type | undefined> = batches.map(() => undefined)
        let answered = 0
        yield* Effect.forEach(batches, (batch, i) => {
          const body = Buffer.from(JSON.stringify({
            data: batch.map((row) => row.payload),
            ...(target.testEventCode !== null ? { test_event_code: target.testEventCode } : {})
          }))
          return forwarder.submit(target.datasetId, target.accessToken, body, ctx.lease, (forward) => {
            forwards[i] = { uids: batch.map((row) => row.eventUid), statusCode: forward.statusCode, tookMs: forward.tookMs, snippet: forward.body.slice(0, SNIPPET) }
            if (++answered === batches.length) finished(new CapiForwarded({ attempt, forwards: forwards as Array<typeof Forward.Type> }, true))
          })
        }, { discard: true })
        return next
      }),

    CapiForwarded: (state, command, ctx) =>
      Effect.gen(function*() {
        const config = yield* AppConfig
        let retrying = false
        let sent = 0
        for (const forward of command.forwards) {
          const outcome = outcomeOf(forward.statusCode)
          const exhausted = outcome === "retry" && command.attempt >= config.capiMaxAttempts
          IntegrationLogsRepo.insert(ctx, ctx.key, {
            integration: "meta_capi",
            statusCode: forward.statusCode,
            outcome: outcome === "delivered" ? "delivered" : outcome === "retry" && !exhausted ? "retrying" : "failed",
            attempt: command.attempt,
            tookMs: Math.round(forward.tookMs),
            events: forward.uids.length,
            responseSnippet: forward.snippet
          })
          if (outcome === "delivered") {
            settle(ctx, forward.uids, "sent", command.attempt, null)
            sent += forward.uids.length
            continue
          }
          const error = `${forward.statusCode === null ? "no answer" : `HTTP ${forward.statusCode}`}: ${forward.snippet}`
          if (outcome === "retry" && !exhausted) {
            settle(ctx, forward.uids, "queued", command.attempt, error)
            retrying = true
            continue
          }
          settle(ctx, forward.uids, "failed", command.attempt, error)
          yield* Effect.logWarning("CAPI events failed: they wait for a redrive", { account_id: ctx.key, events: forward.uids.length, error: error.slice(0, 200) })
        }
        if (retrying) {
          const backoff = Math.min(config.capiRetryBaseMs * 2 ** (command.attempt - 1), MAX_BACKOFF_MS)
          return flushAfter(ctx, { ...state, attempt: command.attempt }, backoff, true)
        }
        // Whatever came while these were out (or did not fit) goes next: at once after a full flush.
        return flushAfter(ctx, { ...state, attempt: 0 }, sent >= CAPI_BATCH_MAX * PARALLEL_REQUESTS ? 0 : config.capiBatchWindowMs, true)
      }),

    CapiRedrive: (state, _command, ctx) =>
      Effect.gen(function*() {
        const config = yield* AppConfig
        ctx.persist(CapiEventsRepo.requeueFailed(ctx.key))
        return flushAfter(ctx, { ...state, attempt: 0, dirty: true }, config.capiBatchWindowMs)
      })
  }
})
