import { Clock, Duration, Effect, FiberMap } from "effect"
import { LiveEvents } from "../live/LiveEvents.ts"
import { BroadcastsRepo, type Counters } from "./BroadcastsRepo.ts"
import { PROGRESS_EVERY_MS } from "./chunking.ts"

/**
 * A broadcast's counters as its live progress event carries them (GraphQL's broadcastProgress,
 * the account's `broadcast_progress` live subject) and broadcast.completed's data.
 */
export const progressOf = (broadcastId: string, counters: Counters) => ({
  broadcast_id: broadcastId,
  status: counters.status,
  total_count: counters.totalCount,
  sent_count: counters.sentCount,
  delivered_count: counters.deliveredCount,
  read_count: counters.readCount,
  failed_count: counters.failedCount,
  cancelled_count: counters.cancelledCount,
  // A WhatsApp campaign says so, and counts the customers it skipped (opted out); an RCS
  // broadcast's event keeps the contract's shape.
  ...(counters.channel === "whatsapp" ? { channel: "whatsapp" as const, skipped_count: counters.skippedCount } : {})
})

/**
 * Live progress of broadcasts, published by whichever node changed the counters: the node sending
 * a chunk, or the node applying delivery reports. At most one event per broadcast every
 * PROGRESS_EVERY_MS from a node, and always one after the last change (a change inside the window
 * is published at its end, with the counters read then), so a subscriber's last event shows the
 * final counts. Best effort: a lost event is superseded by the next.
 */
export class BroadcastProgress extends Effect.Service<BroadcastProgress>()("herald/broadcasts/BroadcastProgress", {
  scoped: Effect.gen(function*() {
    const repo = yield* BroadcastsRepo
    const live = yield* LiveEvents
    const pending = yield* FiberMap.make<string>()
    const publishedAt = new Map<string, number>()

    const publish = (accountId: string, broadcastId: string) =>
      Effect.gen(function*() {
        publishedAt.set(broadcastId, yield* Clock.currentTimeMillis)
        const counters = yield* repo.counters(broadcastId)
        if (counters !== undefined) yield* live.publish(accountId, "broadcast_progress", progressOf(broadcastId, counters))
      }).pipe(Effect.catchAllCause(() => Effect.void))

    /** The counters of a broadcast changed: its progress is published now or at the end of the window. */
    const changed = (accountId: string, broadcastId: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const last = publishedAt.get(broadcastId)
        const waitMs = last === undefined ? 0 : Math.max(0, last + PROGRESS_EVERY_MS - now)
        // One entry per broadcast this node changed lately; forgotten wholesale now and then.
        if (publishedAt.size > 10_000) publishedAt.clear()
        yield* FiberMap.run(pending, broadcastId, Effect.zipRight(Effect.sleep(Duration.millis(waitMs)), publish(accountId, broadcastId)), { onlyIfMissing: true })
      })

    return { changed } as const
  }),
  dependencies: [BroadcastsRepo.Default, LiveEvents.Default]
}) {}
