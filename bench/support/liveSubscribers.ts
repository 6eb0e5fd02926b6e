// A worker thread of bench/graphql.bench.ts part (b): holds its share of the subscriber sockets
// (graphql-transport-ws over `ws`, two subscriptions each) and times every delivery against the
// publication time the producer (the main thread) wrote in shared memory before publishing. The
// subscribers live off the main thread so that decoding bursts of deliveries never delays the
// producer's pacing (a delayed producer publishes a backlog at once, which is no longer the rate
// asked for).
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks"
import { parentPort, workerData } from "node:worker_threads"
import WebSocket from "ws"

/** Milliseconds on a clock every thread of the process shares. */
export const nowMs = () => Number(process.hrtime.bigint()) / 1e6

export interface SubscriberSpec {
  readonly index: number
  readonly account: number
  readonly url: string
  readonly key: string
  readonly broadcastId: string
}

export interface WorkerInput {
  readonly subscribers: ReadonlyArray<SubscriberSpec>
  readonly openConcurrency: number
  readonly seconds: number
  /** Publication time (nowMs) of each event by sequence number. */
  readonly publishedAt: SharedArrayBuffer
  /** [0]: 1 while the run is measured; [1]: the run's start (nowMs). */
  readonly control: SharedArrayBuffer
}

export type ToWorker =
  | { readonly type: "open" }
  | { readonly type: "count"; readonly id: number; readonly lastProgress: ReadonlyArray<number> }
  | { readonly type: "finish" }

export interface WorkerResult {
  readonly statusLatencies: Float64Array
  readonly progressLatencies: Float64Array
  readonly worstBySecond: ReadonlyArray<number>
  readonly status: ReadonlyArray<number>
  readonly progressCount: ReadonlyArray<number>
  readonly progressLast: ReadonlyArray<number>
  readonly outOfOrder: number
  readonly closes: Record<string, number>
  readonly problems: ReadonlyArray<string>
  readonly eventLoopDelayMs: { readonly p50: number; readonly p99: number; readonly max: number }
  readonly gcMs: { readonly pauses: number; readonly total: number; readonly max: number }
}

export type FromWorker =
  | { readonly type: "ready"; readonly openSeconds: number }
  | { readonly type: "failed"; readonly error: string }
  | { readonly type: "count"; readonly id: number; readonly status: number; readonly progress: number; readonly final: number }
  | { readonly type: "result"; readonly result: WorkerResult }

export const STATUS_SUBSCRIPTION = `subscription { messageStatusUpdated { message_id status occurred_at } }`
export const PROGRESS_SUBSCRIPTION = `subscription ($id: ID!) { broadcastProgress(broadcastId: $id) { id sent_count status } }`

const run = (input: WorkerInput, port: NonNullable<typeof parentPort>) => {
  const publishedAt = new Float64Array(input.publishedAt)
  const control = new Float64Array(input.control)
  const n = input.subscribers.length
  const status = new Array<number>(n).fill(0)
  const progressInitial = new Array<boolean>(n).fill(false)
  const progressCount = new Array<number>(n).fill(0)
  const progressLast = new Array<number>(n).fill(-1)
  let outOfOrder = 0
  const statusLatencies: Array<number> = []
  const progressLatencies: Array<number> = []
  const worstBySecond = new Array<number>(Math.ceil(input.seconds) + 2).fill(0)
  const closes: Record<string, number> = {}
  const problems: Array<string> = []
  const sockets: Array<WebSocket> = []
  const problem = (text: string) => problems.length < 20 && problems.push(text)

  const record = (into: Array<number>, seq: number, at: number) => {
    if (control[0] !== 1) return
    const published = publishedAt[seq]!
    const ms = at - published
    into.push(ms)
    const second = Math.min(worstBySecond.length - 1, Math.max(0, Math.floor((published - control[1]!) / 1000)))
    if (ms > worstBySecond[second]!) worstBySecond[second] = ms
  }

  /** Opens subscriber `i`: resolves once broadcastProgress answered the broadcast's row (the status subscription, sent first, is in place by then). */
  const open = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const spec = input.subscribers[i]!
      const socket = new WebSocket(spec.url, "graphql-transport-ws", { perMessageDeflate: false })
      sockets.push(socket)
      const timer = setTimeout(() => reject(new Error(`subscriber ${spec.index} not ready within 60 s`)), 60_000)
      socket.on("open", () => socket.send(JSON.stringify({ type: "connection_init", payload: { Authorization: `Bearer ${spec.key}` } })))
      socket.on("error", (e) => problem(`socket ${spec.index}: ${String(e)}`))
      socket.on("close", (code) => {
        closes[code] = (closes[code] ?? 0) + 1
        if (!progressInitial[i]) reject(new Error(`subscriber ${spec.index} closed (${code}) before it was ready`))
      })
      socket.on("message", (data) => {
        const at = nowMs()
        const message = JSON.parse(String(data))
        if (message.type === "next") {
          const payload = message.payload
          if (payload.errors) return problem(`socket ${spec.index} ${message.id}: ${JSON.stringify(payload.errors)}`)
          if (message.id === "s") {
            status[i]!++
            record(statusLatencies, Number(payload.data.messageStatusUpdated.message_id), at)
          } else if (!progressInitial[i]) {
            progressInitial[i] = true
            clearTimeout(timer)
            resolve()
          } else {
            const seq = payload.data.broadcastProgress.sent_count as number
            if (seq <= progressLast[i]!) outOfOrder++
            progressLast[i] = seq
            progressCount[i]!++
            record(progressLatencies, seq, at)
          }
        } else if (message.type === "connection_ack") {
          socket.send(JSON.stringify({ id: "s", type: "subscribe", payload: { query: STATUS_SUBSCRIPTION } }))
          socket.send(JSON.stringify({ id: "p", type: "subscribe", payload: { query: PROGRESS_SUBSCRIPTION, variables: { id: spec.broadcastId } } }))
        } else if (message.type === "error" || message.type === "complete") {
          problem(`socket ${spec.index}: ${String(data).slice(0, 300)}`)
        }
      })
    })

  const lag = monitorEventLoopDelay({ resolution: 10 })
  const gcPauses: Array<number> = []
  const gcs = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) if (control[0] === 1) gcPauses.push(entry.duration)
  })

  port.on("message", async (message: ToWorker) => {
    if (message.type === "open") {
      const started = nowMs()
      let next = 0
      try {
        await Promise.all(Array.from({ length: input.openConcurrency }, async () => {
          while (next < n) await open(next++)
        }))
        gcs.observe({ entryTypes: ["gc"] })
        lag.enable()
        port.postMessage({ type: "ready", openSeconds: (nowMs() - started) / 1000 } satisfies FromWorker)
      } catch (error) {
        port.postMessage({ type: "failed", error: String(error) } satisfies FromWorker)
      }
    } else if (message.type === "count") {
      let final = 0
      for (let i = 0; i < n; i++) if (progressLast[i] === message.lastProgress[input.subscribers[i]!.account]) final++
      port.postMessage({
        type: "count",
        id: message.id,
        status: status.reduce((a, b) => a + b, 0),
        progress: progressCount.reduce((a, b) => a + b, 0),
        final
      } satisfies FromWorker)
    } else {
      lag.disable()
      gcs.disconnect()
      const result: WorkerResult = {
        statusLatencies: Float64Array.from(statusLatencies),
        progressLatencies: Float64Array.from(progressLatencies),
        worstBySecond,
        status,
        progressCount,
        progressLast,
        outOfOrder,
        closes,
        problems,
        eventLoopDelayMs: { p50: lag.percentile(50) / 1e6, p99: lag.percentile(99) / 1e6, max: lag.max / 1e6 },
        gcMs: { pauses: gcPauses.length, total: gcPauses.reduce((a, b) => a + b, 0), max: Math.max(0, ...gcPauses) }
      }
      port.postMessage({ type: "result", result } satisfies FromWorker, [result.statusLatencies.buffer as ArrayBuffer, result.progressLatencies.buffer as ArrayBuffer])
      for (const socket of sockets) socket.terminate()
    }
  })
}

if (parentPort !== null && workerData !== null && typeof workerData === "object" && "subscribers" in workerData) run(workerData as WorkerInput, parentPort)
