// Live broadcast progress: one EventSource on /console/api/live while signed in, and a store of
// every broadcast's counters as last known, fed by the stream and by the pages' own reads. A
// snapshot never moves a broadcast backwards: each counter keeps its larger value, and a terminal
// status (completed, cancelled) wins over any other.
import { useEffect, useState } from "preact/hooks"
import type { BroadcastProgress, BroadcastStatus } from "./types.ts"

const TERMINAL: ReadonlySet<BroadcastStatus> = new Set(["completed", "cancelled"])
const RANK: Readonly<Record<BroadcastStatus, number>> = { scheduled: 0, queued: 1, running: 2, completed: 3, cancelled: 3 }

export const isTerminal = (status: BroadcastStatus): boolean => TERMINAL.has(status)

/** `known` moved on by `next`, never backwards. */
export const mergeProgress = (known: BroadcastProgress | undefined, next: BroadcastProgress): BroadcastProgress => {
  if (known === undefined) return next
  const status = isTerminal(known.status) ? known.status : RANK[next.status] >= RANK[known.status] ? next.status : known.status
  return {
    broadcast_id: known.broadcast_id,
    status,
    total_count: Math.max(known.total_count, next.total_count),
    sent_count: Math.max(known.sent_count, next.sent_count),
    delivered_count: Math.max(known.delivered_count, next.delivered_count),
    read_count: Math.max(known.read_count, next.read_count),
    failed_count: Math.max(known.failed_count, next.failed_count),
    cancelled_count: Math.max(known.cancelled_count, next.cancelled_count)
  }
}

const same = (a: BroadcastProgress, b: BroadcastProgress): boolean =>
  a.status === b.status && a.total_count === b.total_count && a.sent_count === b.sent_count && a.delivered_count === b.delivered_count &&
  a.read_count === b.read_count && a.failed_count === b.failed_count && a.cancelled_count === b.cancelled_count

const store = new Map<string, BroadcastProgress>()
const watchers = new Map<string, Set<() => void>>()

/** Takes a snapshot (from the stream or a read) into the store; tells the watchers of that broadcast if it moved. */
export const feedProgress = (snapshot: BroadcastProgress): BroadcastProgress => {
  const known = store.get(snapshot.broadcast_id)
  const merged = mergeProgress(known, snapshot)
  if (known === undefined || !same(known, merged)) {
    store.set(snapshot.broadcast_id, merged)
    for (const watcher of watchers.get(snapshot.broadcast_id) ?? []) watcher()
  }
  return merged
}

/** The counters of a broadcast read from the REST API, as the stream would send them. */
export const progressOf = (b: {
  readonly id: string
  readonly status: BroadcastStatus
  readonly total_count: number
  readonly sent_count: number
  readonly delivered_count: number
  readonly read_count: number
  readonly failed_count: number
  readonly cancelled_count: number
}): BroadcastProgress => ({
  broadcast_id: b.id,
  status: b.status,
  total_count: b.total_count,
  sent_count: b.sent_count,
  delivered_count: b.delivered_count,
  read_count: b.read_count,
  failed_count: b.failed_count,
  cancelled_count: b.cancelled_count
})

/** The live counters of a broadcast, starting from `initial` (a read), moving with the stream. */
export const useProgress = (initial: BroadcastProgress): BroadcastProgress => {
  const id = initial.broadcast_id
  const [, setTick] = useState(0)
  // The read goes into the store first: it may be newer than what the stream said, or older.
  const current = mergeProgress(store.get(id), initial)
  useEffect(() => {
    feedProgress(initial)
  }, [initial])
  useEffect(() => {
    const watcher = (): void => setTick((n) => n + 1)
    let set = watchers.get(id)
    if (set === undefined) {
      set = new Set()
      watchers.set(id, set)
    }
    set.add(watcher)
    return () => {
      set.delete(watcher)
      if (set.size === 0) watchers.delete(id)
    }
  }, [id])
  return current
}

// The connection.

export type LiveState = "connecting" | "open" | "reconnecting" | "off"

let source: EventSource | null = null
let state: LiveState = "off"
let retryTimer: number | undefined
let retryDelay = 2_000
/** Counts the openings after the first: pages read again what the stream may have missed while it was down. */
let reopenings = 0
let everOpened = false
const stateWatchers = new Set<() => void>()
let lostHandler: () => void = () => {}

const setState = (next: LiveState): void => {
  state = next
  for (const watcher of stateWatchers) watcher()
}

const isProgress = (value: unknown): value is BroadcastProgress => {
  if (typeof value !== "object" || value === null) return false
  const v = value as Record<string, unknown>
  return typeof v["broadcast_id"] === "string" && typeof v["status"] === "string" && RANK[v["status"] as BroadcastStatus] !== undefined &&
    ["total_count", "sent_count", "delivered_count", "read_count", "failed_count", "cancelled_count"].every((k) => typeof v[k] === "number")
}

const open = (): void => {
  const es = new EventSource("/console/api/live", { withCredentials: true })
  source = es
  es.addEventListener("open", () => {
    retryDelay = 2_000
    if (everOpened) reopenings += 1
    everOpened = true
    setState("open")
  })
  es.addEventListener("broadcast_progress", (event: MessageEvent<string>) => {
    try {
      const data: unknown = JSON.parse(event.data)
      if (isProgress(data)) feedProgress(data)
    } catch {
      // A line that is not JSON: nothing to apply.
    }
  })
  es.addEventListener("error", () => {
    if (source !== es) return
    if (es.readyState === EventSource.CLOSED) {
      // The server refused the stream (a 401 when the session is gone, a restart…): ask the app
      // whether the session still holds, and try again later.
      source = null
      setState("reconnecting")
      lostHandler()
      retryTimer = window.setTimeout(() => {
        retryTimer = undefined
        if (state !== "off") open()
      }, retryDelay)
      retryDelay = Math.min(retryDelay * 2, 30_000)
    } else {
      setState("reconnecting")
    }
  })
}

/** Opens the stream (signed in); `onLost` runs when the server closes it for good, to check the session. */
export const startLive = (onLost: () => void): void => {
  lostHandler = onLost
  if (source !== null || retryTimer !== undefined) return
  setState("connecting")
  open()
}

/** Closes the stream (signed out) and forgets every broadcast. */
export const stopLive = (): void => {
  if (retryTimer !== undefined) window.clearTimeout(retryTimer)
  retryTimer = undefined
  source?.close()
  source = null
  everOpened = false
  reopenings = 0
  store.clear()
  setState("off")
}

/** The stream's state, and how many times it came back after a drop. */
export const useLive = (): { readonly state: LiveState; readonly reopenings: number } => {
  const [, setTick] = useState(0)
  useEffect(() => {
    const watcher = (): void => setTick((n) => n + 1)
    stateWatchers.add(watcher)
    return () => {
      stateWatchers.delete(watcher)
    }
  }, [])
  return { state, reopenings }
}
