import type { BroadcastProgressEvent } from "./liveSubjects.ts"

/** A broadcast's state as a progress event or a read row shows it. */
export interface ProgressState {
  readonly status: string
  /** Recipients with an outcome: sent, delivered, read, failed and cancelled counts added up. */
  readonly accounted: number
}

export const progressStateOf = (event: BroadcastProgressEvent): ProgressState => ({
  status: event.status,
  accounted: event.sent_count + event.delivered_count + event.read_count + event.failed_count + event.cancelled_count
})

const finished = (status: string) => status === "completed" || status === "cancelled"

/**
 * Whether `next` is a later state of a broadcast than `seen`. Two nodes publish a broadcast's
 * progress (the one sending it, and the one applying its delivery reports) and their snapshots can
 * cross on the way: finished beats running, and otherwise more recipients accounted for is later
 * (counters only grow, though a send failing after it was sent moves one count to another).
 */
export const isLaterProgress = (next: ProgressState, seen: ProgressState) => {
  if (finished(next.status) !== finished(seen.status)) return finished(next.status)
  return next.accounted >= seen.accounted
}
