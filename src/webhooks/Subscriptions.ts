import { Effect } from "effect"
import { ChangeFeed } from "../storage/ChangeFeed.ts"
import { makeReadCache } from "../storage/ReadCache.ts"
import { type SubscriptionRow, WebhooksRepo } from "./WebhooksRepo.ts"

type Subscription = SubscriptionRow

/** The `message.*` events a broadcast's message goes through (docs/webhooks.md, Broadcast messages). */
export const BROADCAST_MESSAGE_EVENTS = ["message.sent", "message.delivered", "message.read", "message.failed"] as const

/** An endpoint that opted in to a broadcast's per-recipient events, and which of them it asked for. */
export interface BroadcastListener {
  readonly webhookId: string
  readonly types: ReadonlyArray<string>
}

/**
 * Whether anyone listens for an event, answered from memory: the live subscriptions of each
 * account, dropped by the change feed when any of its webhooks is created, changed or deleted.
 * Hot paths that emit an event per message (the sender actor) ask first and skip the fan-out —
 * two statements per message — for the many accounts without a matching subscription; a
 * broadcast's statements ask which endpoints opted in to its messages' events, and write nothing
 * more when none did.
 */
export class Subscriptions extends Effect.Service<Subscriptions>()("herald/webhooks/Subscriptions", {
  scoped: Effect.gen(function*() {
    const repo = yield* WebhooksRepo
    const cache = yield* makeReadCache<ReadonlyArray<Subscription>>({ tables: ["webhooks", "accounts"], capacity: 100_000 })

    const of = (accountId: string) =>
      cache.get(
        accountId,
        () => Effect.map(
          repo.subscriptions(accountId),
          (rows) => ({ accountId, value: rows })
        )
      )

    /** Whether an endpoint of the account's channel (RCS endpoints, or the WhatsApp developer webhook) wants the event. */
    const wants = (accountId: string, type: string, botId: string | null, channel: "rcs" | "whatsapp" = "rcs") =>
      Effect.map(of(accountId), (subscriptions) =>
        (subscriptions ?? []).some((s) => s.channel === channel && s.events.includes(type) && (s.botId === null || s.botId === botId)))

    /**
     * The account's RCS endpoints that opted in to broadcast messages' events
     * (`include_broadcast_messages`) and cover the bot, each with the `message.*` types it asked
     * for; none for most accounts.
     */
    const broadcastListeners = (accountId: string, botId: string) =>
      Effect.map(of(accountId), (subscriptions): ReadonlyArray<BroadcastListener> => {
        const out: Array<BroadcastListener> = []
        for (const s of subscriptions ?? []) {
          if (!s.includeBroadcastMessages || s.channel !== "rcs" || (s.botId !== null && s.botId !== botId)) continue
          const types = BROADCAST_MESSAGE_EVENTS.filter((type) => s.events.includes(type))
          if (types.length > 0) out.push({ webhookId: s.webhookId, types })
        }
        return out
      })

    return { wants, broadcastListeners } as const
  }),
  dependencies: [ChangeFeed.Default, WebhooksRepo.Default]
}) {}
