import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomBytes, randomUUID } from "node:crypto"
import { Outbox } from "../actors/runtime/index.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { botInScope, isOwnerSession, requireOwnerSession, requireRole, seesAllBots } from "../domain/access.ts"
import { BotNotInScope, InvalidRequest, NotFound } from "../domain/errors.ts"
import type { Principal } from "../domain/signIn.ts"
import { BotsRepo } from "../bots/BotsRepo.ts"
import { DeliveryKind, Start } from "./DeliveryKind.ts"
import { urlProblem } from "./urlPolicy.ts"
import { secretOverlapMs } from "./secretRotation.ts"
import { ChangeFeed } from "../storage/ChangeFeed.ts"
import { BROADCAST_MESSAGE_EVENTS } from "./Subscriptions.ts"
import { type DeadLetterRow, DeliveriesRepo } from "./DeliveriesRepo.ts"
import { type EndpointStatsRow, type WebhookChannel, type WebhookRow, WebhooksRepo } from "./WebhooksRepo.ts"

/** Event types a subscription may ask for (contract, Events). `webhook.test` goes to one endpoint on request. */
export const EVENT_TYPES = ["message.sent", "message.delivered", "message.read", "message.failed", "message.received", "broadcast.completed"] as const
/** What the developer webhook (channel whatsapp) receives: the public API's messages, inbound ones, and AI agents' handoffs to a person. */
export const WA_EVENT_TYPES = [
  "message.sent",
  "message.delivered",
  "message.read",
  "message.failed",
  "message.received",
  "conversation.handoff",
  "customer.opted_out",
  "customer.opted_in",
  "broadcast.completed"
] as const
export type EventType = (typeof EVENT_TYPES)[number] | (typeof WA_EVENT_TYPES)[number] | "webhook.test"
/** A partner e-mail event as its destinations receive it (`email.delivery`, …). */
export type EmailWebhookType = `email.${string}`

export const DELIVERIES_LIMIT_DEFAULT = 100
export const DELIVERIES_LIMIT_MAX = 500

/**
 * `include_broadcast_messages` needs a `message.*` type a broadcast's message goes through among
 * the endpoint's events: the flag chooses broadcasts' messages, the events which of their events.
 */
const broadcastMessagesProblem = (include: boolean, events: ReadonlyArray<string>) =>
  include && !BROADCAST_MESSAGE_EVENTS.some((type) => events.includes(type))
    ? InvalidRequest.single(
      "include_broadcast_messages",
      `is true, but events names none of ${BROADCAST_MESSAGE_EVENTS.join(", ")}: the flag sends broadcast messages' events of the types in events, ` +
        "so add one of them to events, or set include_broadcast_messages to false"
    )
    : undefined

/**
 * What a caller may see of an endpoint: everything when it sees every bot; otherwise only
 * endpoints of bots in its scope (an all-bots endpoint carries other bots' events too). The
 * developer webhook (channel whatsapp) is the owner's, as at /api/v1/app/developer/webhook,
 * whichever route reaches it: only the owner's session sees it.
 */
const endpointVisible = (principal: Principal, endpoint: { readonly botId: string | null; readonly channel: WebhookChannel | null }) =>
  endpoint.channel === "whatsapp"
    ? isOwnerSession(principal)
    : seesAllBots(principal) || (endpoint.botId !== null && botInScope(principal, endpoint.botId))

/** `activity` on the developer webhook: the owner's, with a session (403 `forbidden` for a member, as at /api/v1/app/developer/webhook). */
const requireDeveloperOwner = (principal: Principal, activity: string) =>
  requireOwnerSession(principal, `${activity} the developer webhook (Settings, Developer)`)

/** The window of an endpoint's stats. */
export const STATS_WINDOW_MS = 3_600_000

export const HEALTHS = ["healthy", "degraded", "failing", "idle"] as const

/**
 * idle: no attempt in the window; failing: fewer than half succeeded, or the latest three (or all,
 * when fewer) failed; degraded: under 95% succeeded, or the latest attempt failed; else healthy.
 */
export const healthOf = (row: EndpointStatsRow): (typeof HEALTHS)[number] => {
  if (row.attempts === 0) return "idle"
  const rate = row.succeeded / row.attempts
  const lastFailed = row.lastStatusCode === null || row.lastStatusCode < 200 || row.lastStatusCode > 299
  if (rate < 0.5 || (row.recentFailures ?? 0) >= Math.min(3, row.attempts)) return "failing"
  if (rate < 0.95 || lastFailed) return "degraded"
  return "healthy"
}

/** An endpoint just made, with its signing secret (answered this once). */
export interface NewEndpoint {
  readonly webhook: WebhookRow
  readonly secret: string
}

/** An endpoint's last hour: its attempts and the health word they make. */
export interface EndpointStats extends EndpointStatsRow {
  readonly health: (typeof HEALTHS)[number]
}

/** The stats of the endpoints a caller may see, since the window's start. */
export interface WebhookStats {
  readonly since: Date
  readonly endpoints: ReadonlyArray<EndpointStats>
}

/** A rotation: the new secret (answered this once) and when the one it replaced stops signing. */
export interface RotatedSecret {
  readonly webhookId: string
  readonly secret: string
  readonly previousSecretExpiresAt: Date
}

/** The developer webhook after PUT: whether this request made it (then with its secret, answered this once). */
export interface DeveloperWebhookSet {
  readonly created: boolean
  readonly webhook: WebhookRow
  readonly secret: string | undefined
}

export const newSecret = () => `whsec_${randomBytes(24).toString("base64")}`
export const newDeliveryId = () => `wd_${randomUUID()}`

/**
 * Webhook subscriptions, the event bus that fans events out to them, and the read paths of the
 * delivery log. An event becomes one delivery (`wd_<uuid>`) per matching subscription, written
 * with its `delivery` actor's Start command through the outbox in one transaction: nothing
 * accepted is lost, and a delivery exists exactly when its actor will run.
 */
export class Webhooks extends Effect.Service<Webhooks>()("herald/Webhooks", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* WebhooksRepo
    const deliveryLog = yield* DeliveriesRepo
    const bots = yield* BotsRepo
    const outbox = yield* Outbox
    const config = yield* AppConfig
    const feed = yield* ChangeFeed
    // A bad value stops the node at start, naming the variable.
    const overlapMs = yield* Effect.orDie(secretOverlapMs)
    // This node's caches of endpoints and subscriptions forget at once: the caller's next request
    // (a send, a test event) must see the change without waiting for the notification.
    const changed = <A, E, R>(accountId: string, write: Effect.Effect<A, E, R>) =>
      Effect.tap(write, () => feed.committed("webhooks", accountId))

    const checkUrl = (url: string) => {
      const problem = urlProblem(url, config.webhookAllowPrivate)
      return problem === undefined ? Effect.void : InvalidRequest.single("url", problem)
    }

    /**
     * The endpoint, if the caller may `activity` it: unknown → 404, the developer webhook and not
     * its owner → 403 forbidden, out of scope → 403 bot not in scope.
     */
    const visibleEndpoint = (principal: Principal, webhookId: string, activity: string) =>
      Effect.gen(function*() {
        const row = yield* repo.find(principal.accountId, webhookId)
        if (row === undefined) return yield* new NotFound({ message: `no webhook ${webhookId}` })
        if (row.channel === "whatsapp") yield* requireDeveloperOwner(principal, activity)
        else if (!endpointVisible(principal, row)) return yield* BotNotInScope.instance()
        return row
      })

    const checkBot = (principal: Principal, botId: string | null) =>
      Effect.gen(function*() {
        if (botId === null) {
          if (!seesAllBots(principal)) return yield* BotNotInScope.instance()
          return
        }
        if ((yield* bots.find(principal.accountId, botId)) === undefined) return yield* InvalidRequest.single("bot_id", "is not a bot of this account")
        if (!botInScope(principal, botId)) return yield* BotNotInScope.instance()
      })

    const create = (principal: Principal, input: { url: string; events: ReadonlyArray<string>; botId: string | null; includeBroadcastMessages?: boolean }) =>
      Effect.gen(function*() {
        yield* requireRole(principal, "operator", "manage webhooks")
        yield* checkUrl(input.url)
        const problem = broadcastMessagesProblem(input.includeBroadcastMessages ?? false, input.events)
        if (problem !== undefined) return yield* problem
        yield* checkBot(principal, input.botId)
        const secret = newSecret()
        const row = yield* changed(
          principal.accountId,
          repo.insert({
            accountId: principal.accountId,
            url: input.url,
            events: [...new Set(input.events)],
            botId: input.botId,
            secret,
            includeBroadcastMessages: input.includeBroadcastMessages ?? false
          })
        )
        return { webhook: row, secret } satisfies NewEndpoint
      })

    const list = (principal: Principal) =>
      Effect.map(repo.list(principal.accountId), (rows): ReadonlyArray<WebhookRow> => rows.filter((row) => endpointVisible(principal, row)))

    /**
     * Each endpoint the caller may see, over the last hour (its latest STATS_SAMPLE attempts at
     * most): attempts, success rate, latency and a health word (docs/console.md, Webhooks).
     */
    const stats = (principal: Principal) =>
      Effect.gen(function*() {
        const since = new Date(Date.now() - STATS_WINDOW_MS)
        const rows = yield* repo.stats(principal.accountId, since)
        return {
          since,
          endpoints: rows.filter((row) => endpointVisible(principal, row)).map((row) => ({ ...row, health: healthOf(row) }))
        } satisfies WebhookStats
      })

    const update = (
      principal: Principal,
      webhookId: string,
      changes: { url?: string; events?: ReadonlyArray<string>; botId?: string | null; active?: boolean; includeBroadcastMessages?: boolean }
    ) =>
      Effect.gen(function*() {
        yield* requireRole(principal, "operator", "manage webhooks")
        const endpoint = yield* visibleEndpoint(principal, webhookId, "change")
        if (endpoint.channel === "whatsapp" && (changes.events !== undefined || changes.botId !== undefined || changes.includeBroadcastMessages !== undefined)) {
          return yield* InvalidRequest.single("", "the developer webhook receives every WhatsApp event; change its URL under PUT /api/v1/app/developer/webhook")
        }
        if (changes.url !== undefined) yield* checkUrl(changes.url)
        // The endpoint as it would be: a flag left on with events that no longer name a message.* type is refused too.
        const problem = broadcastMessagesProblem(changes.includeBroadcastMessages ?? endpoint.includeBroadcastMessages, changes.events ?? endpoint.events)
        if (problem !== undefined) return yield* problem
        if (changes.botId !== undefined) yield* checkBot(principal, changes.botId)
        const row = yield* changed(principal.accountId, repo.update(webhookId, { ...changes, events: changes.events && [...new Set(changes.events)] }))
        if (row === undefined) return yield* new NotFound({ message: `no webhook ${webhookId}` })
        return row
      })

    /**
     * A new signing secret for the endpoint, answered this once (as at creation). The secret it
     * replaces keeps signing beside it until `previous_secret_expires_at` (24 h by default), so
     * the consumer can deploy the new one without refusing a request meanwhile.
     */
    const rotated = (accountId: string, webhookId: string) =>
      Effect.gen(function*() {
        const secret = newSecret()
        const row = yield* changed(accountId, repo.rotate(webhookId, secret, overlapMs))
        if (row === undefined) return yield* new NotFound({ message: `no webhook ${webhookId}` })
        return { webhookId: row.webhookId, secret, previousSecretExpiresAt: row.previousSecretExpiresAt } satisfies RotatedSecret
      })

    /** POST …/{id}/rotate-secret: who may update the endpoint may rotate its secret. */
    const rotateSecret = (principal: Principal, webhookId: string) =>
      Effect.gen(function*() {
        yield* requireRole(principal, "operator", "rotate webhook secrets")
        yield* visibleEndpoint(principal, webhookId, "rotate the secret of")
        return yield* rotated(principal.accountId, webhookId)
      })

    const remove = (principal: Principal, webhookId: string) =>
      Effect.gen(function*() {
        yield* requireRole(principal, "operator", "manage webhooks")
        yield* visibleEndpoint(principal, webhookId, "delete")
        yield* changed(principal.accountId, repo.remove(webhookId))
      })

    /**
     * Records an event and fans it out: one delivery per active subscription of the account that
     * asked for the type and covers the bot (or, with `only`, to that endpoint alone). Runs in the
     * caller's transaction when there is one; the relay is woken after the commit.
     */
    const emit = (event: {
      accountId: string
      type: EventType | EmailWebhookType
      botId: string | null
      data: unknown
      only?: string
      channel?: WebhookChannel
      /** Partner e-mail: the event destinations of this configuration set (accountId is the partner). */
      configSetId?: string
    }) =>
      Effect.gen(function*() {
        const targets = yield* repo.targets(event)
        // Nobody listens: nothing to archive (most messages of most accounts).
        if (targets.length === 0) return []
        const stored = yield* deliveryLog.insertEvent(event)
        const occurredAt = new Date(stored.occurredAt).toISOString()
        const deliveries = targets.map((target) => {
          const deliveryId = newDeliveryId()
          // A partner's events carry no account: the envelope is the design's {event_id, type, occurred_at, delivery_id, data}.
          const envelope = event.configSetId !== undefined
            ? { event_id: stored.eventId, type: event.type, occurred_at: occurredAt, delivery_id: deliveryId, data: event.data }
            : { event_id: stored.eventId, type: event.type, occurred_at: occurredAt, delivery_id: deliveryId, account_id: event.accountId, data: event.data }
          return { deliveryId, webhookId: target.webhookId, envelope }
        })
        yield* insertDeliveries(event.accountId, stored.eventId, event.type, deliveries)
        return deliveries.map((d) => d.deliveryId)
      })

    const insertDeliveries = (accountId: string, eventId: string, type: string, deliveries: ReadonlyArray<{ deliveryId: string; webhookId: string; envelope: unknown }>) =>
      Effect.gen(function*() {
        if (deliveries.length === 0) return
        yield* deliveryLog.insertDeliveries(accountId, eventId, type, deliveries)
        yield* outbox.enqueueMany(
          DeliveryKind,
          deliveries.map((d) => ({
            key: d.deliveryId,
            command: new Start({ webhookId: d.webhookId, accountId, eventType: type, envelope: d.envelope }),
            msgId: `start-${d.deliveryId}`
          }))
        )
      })

    const committed = <A, E, R>(work: Effect.Effect<A, E, R>) => Effect.zipLeft(sql.withTransaction(work), outbox.nudge)

    /** POST …/{id}/test: a `webhook.test` event to that endpoint alone, whatever its events filter. */
    const test = (principal: Principal, webhookId: string) =>
      Effect.gen(function*() {
        yield* requireRole(principal, "operator", "test webhooks")
        const endpoint = yield* visibleEndpoint(principal, webhookId, "send a test event to")
        const [deliveryId] = yield* committed(emit({
          accountId: principal.accountId,
          type: "webhook.test",
          botId: endpoint.botId,
          data: { webhook_id: webhookId, message: "This is a test event from Herald." },
          only: webhookId
        })).pipe(Effect.orDie)
        return deliveryId!
      })

    const deliveries = (principal: Principal, webhookId: string, limit: number | undefined) =>
      Effect.gen(function*() {
        const endpoint = yield* visibleEndpoint(principal, webhookId, "read the delivery attempts of")
        const rows = yield* deliveryLog.attempts(endpoint.webhookId, Math.min(limit ?? DELIVERIES_LIMIT_DEFAULT, DELIVERIES_LIMIT_MAX))
        return rows
      })

    /**
     * Dead letters (contract rule 2): a caller seeing every bot gets every row; a scope-limited
     * caller does not see rows whose endpoint was deleted, is all-bots, or is on a bot outside
     * its scope. The developer webhook's are its owner's alone.
     */
    const visibleDeadLetter = (principal: Principal, row: DeadLetterRow) =>
      row.endpointChannel === "whatsapp"
        ? isOwnerSession(principal)
        : seesAllBots(principal) || (!row.endpointDeleted && row.endpointBotId !== null && botInScope(principal, row.endpointBotId))

    const deadLetters = (principal: Principal) =>
      Effect.gen(function*() {
        yield* requireRole(principal, "operator", "read the dead-letter queue")
        const rows = yield* deliveryLog.deadLetters(principal.accountId)
        return rows.filter((row) => visibleDeadLetter(principal, row))
      })

    /**
     * Replay: the archived envelope (same event, data, occurred_at) as a new delivery with a new
     * delivery_id and the full schedule; the item is deleted in the same transaction, so a second
     * replay finds nothing (404).
     */
    const replay = (principal: Principal, deliveryId: string) =>
      Effect.gen(function*() {
        yield* requireRole(principal, "operator", "replay dead letters")
        const missing = new NotFound({ message: `no dead-letter item ${deliveryId}` })
        const row = yield* deliveryLog.deadLetter(principal.accountId, deliveryId)
        if (row?.endpointChannel === "whatsapp") yield* requireDeveloperOwner(principal, "replay the dead letters of")
        if (row === undefined || !visibleDeadLetter(principal, row)) return yield* missing
        if (row.endpointDeleted) return yield* new NotFound({ message: `the endpoint of ${deliveryId} was deleted` })
        const newId = newDeliveryId()
        const replayed = yield* committed(Effect.gen(function*() {
          if (!(yield* deliveryLog.takeDeadLetter(principal.accountId, deliveryId))) return false
          const envelope = { ...row.envelope, delivery_id: newId }
          yield* insertDeliveries(principal.accountId, String(row.envelope.event_id), row.eventType, [{ deliveryId: newId, webhookId: row.webhookId, envelope }])
          return true
        })).pipe(Effect.orDie)
        if (!replayed) return yield* missing
        return newId
      })

    /**
     * PUT /api/v1/app/developer/webhook: creates the account's developer webhook (its secret shown
     * this once), or points the existing one at a new URL, keeping its id and secret.
     */
    const setDeveloper = (principal: Principal, url: string) =>
      Effect.gen(function*() {
        yield* requireOwnerSession(principal, "configure the developer webhook")
        yield* checkUrl(url)
        const existing = yield* repo.developer(principal.accountId)
        if (existing !== undefined) {
          const row = yield* changed(principal.accountId, repo.update(existing.webhookId, { url }))
          if (row !== undefined) return { created: false, webhook: row, secret: undefined } satisfies DeveloperWebhookSet
        }
        const secret = newSecret()
        const row = yield* changed(principal.accountId, repo.insert({ accountId: principal.accountId, url, events: WA_EVENT_TYPES, botId: null, secret, channel: "whatsapp" }))
        return { created: true, webhook: row, secret } satisfies DeveloperWebhookSet
      })

    const getDeveloper = (principal: Principal) =>
      Effect.gen(function*() {
        yield* requireOwnerSession(principal, "read the developer webhook")
        const row = yield* repo.developer(principal.accountId)
        if (row === undefined) return yield* new NotFound({ message: "no developer webhook is configured; PUT /api/v1/app/developer/webhook sets one" })
        return row
      })

    /** POST /api/v1/app/developer/webhook/rotate-secret: the developer webhook's new secret. */
    const rotateDeveloper = (principal: Principal) =>
      Effect.gen(function*() {
        yield* requireOwnerSession(principal, "rotate the developer webhook's secret")
        const row = yield* repo.developer(principal.accountId)
        if (row === undefined) return yield* new NotFound({ message: "no developer webhook is configured; PUT /api/v1/app/developer/webhook sets one" })
        return yield* rotated(principal.accountId, row.webhookId)
      })

    const removeDeveloper = (principal: Principal) =>
      Effect.gen(function*() {
        yield* requireOwnerSession(principal, "remove the developer webhook")
        const row = yield* repo.developer(principal.accountId)
        if (row === undefined) return yield* new NotFound({ message: "no developer webhook is configured" })
        yield* changed(principal.accountId, repo.remove(row.webhookId))
      })

    return {
      create,
      list,
      stats,
      update,
      rotateSecret,
      remove,
      test,
      deliveries,
      deadLetters,
      replay,
      emit,
      committed,
      setDeveloper,
      getDeveloper,
      rotateDeveloper,
      removeDeveloper
    } as const
  }),
  dependencies: [WebhooksRepo.Default, DeliveriesRepo.Default, BotsRepo.Default, ChangeFeed.Default]
}) {}
