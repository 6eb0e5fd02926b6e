import type { Counters } from "./BroadcastsRepo.ts"

/**
 * Live progress of a broadcast: its counters on a core NATS subject, published by the node
 * sending its chunks at most every PROGRESS_EVERY_MS, and once more when it finishes. For the
 * GraphQL broadcastProgress subscription; losing one is harmless (the next supersedes it).
 */
export const progressSubject = (prefix: string, broadcastId: string) => `${prefix}.progress.broadcast.${broadcastId}`

export const progressOf = (broadcastId: string, counters: Counters) => ({
  broadcast_id: broadcastId,
  status: counters.status,
  total_count: counters.totalCount,
  sent_count: counters.sentCount,
  delivered_count: counters.deliveredCount,
  read_count: counters.readCount,
  failed_count: counters.failedCount,
  cancelled_count: counters.cancelledCount
})
