import { Effect, Metric } from "effect"
import type { Subscription } from "nats"
import { decodeJson } from "../actors/runtime/transport.ts"
import { Nats } from "../bus/Nats.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { accountLiveSubjects, type LiveKind, LIVE_KINDS } from "./liveSubjects.ts"

/** Something on this node listening to one account's live events (a GraphQL subscription). */
export interface LiveListener {
  readonly deliver: (kind: LiveKind, event: unknown) => void
}

export const liveListeners = Metric.gauge("herald_live_listeners", { description: "Live-event listeners (GraphQL subscriptions) on this node" })
export const liveAccountSubscriptions = Metric.gauge("herald_live_account_subscriptions", { description: "Accounts whose live events this node listens to on NATS" })

interface AccountFeed {
  readonly subscription: Subscription
  readonly listeners: Set<LiveListener>
}

const KINDS: ReadonlySet<string> = new Set(LIVE_KINDS)

/**
 * An API node's side of live events: one core NATS subscription per account that has a listener
 * here, shared by every listener of that account, dropped with the last one. An event is decoded
 * once and handed to each listener, which filters and buffers it (GraphQL's feeds).
 */
export class LiveHub extends Effect.Service<LiveHub>()("herald/live/LiveHub", {
  scoped: Effect.gen(function*() {
    const nats = yield* Nats
    const config = yield* AppConfig
    const accounts = new Map<string, AccountFeed>()
    let listenerCount = 0

    const fanOut = (listeners: Set<LiveListener>) => (error: Error | null, message: { readonly subject: string; readonly data: Uint8Array }) => {
      if (error !== null) return
      const kind = message.subject.slice(message.subject.lastIndexOf(".") + 1)
      if (!KINDS.has(kind)) return
      let event: unknown
      try {
        event = decodeJson(message.data)
      } catch {
        return
      }
      for (const listener of listeners) listener.deliver(kind as LiveKind, event)
    }

    const remove = (accountId: string, listener: LiveListener) =>
      Effect.sync(() => {
        const feed = accounts.get(accountId)
        if (feed === undefined || !feed.listeners.delete(listener)) return
        listenerCount--
        liveListeners.unsafeUpdate(listenerCount, [])
        if (feed.listeners.size > 0) return
        accounts.delete(accountId)
        liveAccountSubscriptions.unsafeUpdate(accounts.size, [])
        feed.subscription.unsubscribe()
      })

    /**
     * Listens to an account's events until the scope closes. Resolves once the server has the
     * subscription (a flush), so an event published after it is not missed.
     */
    const listen = (accountId: string, listener: LiveListener) =>
      Effect.acquireRelease(
        Effect.gen(function*() {
          const { nc } = yield* nats.connected
          let feed = accounts.get(accountId)
          if (feed === undefined) {
            const listeners = new Set<LiveListener>()
            feed = { listeners, subscription: nc.subscribe(accountLiveSubjects(config.natsPrefix, accountId), { callback: fanOut(listeners) }) }
            accounts.set(accountId, feed)
            liveAccountSubscriptions.unsafeUpdate(accounts.size, [])
          }
          feed.listeners.add(listener)
          listenerCount++
          liveListeners.unsafeUpdate(listenerCount, [])
          yield* Effect.promise(() => nc.flush().catch(() => undefined))
        }),
        () => remove(accountId, listener)
      )

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const feed of accounts.values()) feed.subscription.unsubscribe()
        accounts.clear()
      }))

    return { listen } as const
  })
}) {}
