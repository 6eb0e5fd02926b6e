import { Chunk, Duration, Effect, Runtime, Schedule, type Scope } from "effect"
import { Agent } from "undici"
import { encodeRbmCallback, SIGNATURE_HEADER } from "../gateway/rbm/callbacks.ts"
import { type Exchange, exchange } from "../gateway/rbm/exchange.ts"

/** Herald's RBM callback path: a callback URL given as a bare origin gets it appended. */
export const RBM_EVENTS_PATH = "/api/v1/rcs/gateway/rbm/events"

/**
 * The URL callbacks are posted to, or undefined when `raw` is not an http(s) URL. A bare origin
 * gets `eventsPath` (RBM's by default) appended.
 */
export const resolveCallbackUrl = (raw: string, eventsPath: string = RBM_EVENTS_PATH): string | undefined => {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return undefined
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined
  if (url.pathname === "/" || url.pathname === "") url.pathname = eventsPath
  return url.toString()
}

/**
 * Herald may see a callback before it has recorded the send, or be unable to take it for a while
 * (restarting, its database away, a worker frozen holding the rows it updates): retried with
 * backoff, 250 ms doubling up to 5 s, for about two minutes (30 tries). Real RBM keeps going for
 * 7 days; a simulator that did would pile up callbacks for a Herald that is gone. Given up on
 * sooner (the first version stopped after 10 s), a report lost while a worker was paused left its
 * target in doubt, and the target was sent again once the report window passed.
 */
export const callbackRetry = Schedule.exponential(Duration.millis(250), 2).pipe(
  Schedule.either(Schedule.spaced(Duration.seconds(5))),
  Schedule.intersect(Schedule.recurs(30))
)

/**
 * The schedule's waits, worked out once: the sender runs them on plain timers (see below).
 * `Schedule.run` also reports the step at which the schedule ends, which is no retry: dropped.
 */
export const retryDelaysMs = (schedule: Schedule.Schedule<unknown, unknown>): ReadonlyArray<number> =>
  Chunk.toReadonlyArray(Effect.runSync(Schedule.run(Schedule.delays(schedule), 0, Array.from({ length: 64 }, (_, i) => i))))
    .map(Duration.toMillis)
    .slice(0, -1)

const ATTEMPT_TIMEOUT_MS = 5_000

/**
 * Callbacks in flight at once, and connections to Herald: a callback never waits in undici's own
 * queue, where its attempt deadline would run before it was even sent.
 */
const MAX_IN_FLIGHT = 128

export interface CallbackStats {
  /** Callbacks Herald took (2xx). */
  sent: number
  /** Attempts that failed (non-2xx, no answer, no URL yet); most are retried. */
  failedAttempts: number
  /** Callbacks given up on after the last retry. */
  failed: number
  /** Callbacks queued or being sent. */
  pending: number
}

interface Pending {
  readonly body: Buffer
  readonly signature: string
  tries: number
}

export interface WebhookSenderOptions {
  readonly callbackUrl: () => string | undefined
  /** Turns the configured URL into the one posted to (undefined: unusable). */
  readonly resolveUrl: (raw: string) => string | undefined
  /** The header carrying each body's signature, lower-case. */
  readonly signatureHeader: string
  readonly userAgent: string
}

export interface WebhookSender {
  /** Queues one body, already signed, for sending. */
  readonly post: (body: Buffer, signature: string) => void
  readonly stats: Readonly<CallbackStats>
}

/**
 * Posts signed webhook bodies to Herald, for any upstream the simulator plays. A benchmark pushes
 * thousands a second through here, in Herald's own process when the simulator runs in-process, so
 * this is a plain FIFO pumping into a keep-alive pool with retries on timers: no fiber and no
 * promise per callback (a fiber per queued callback cost more than Herald's whole handling of it,
 * and GC time with it).
 */
export const makeWebhookSender = (options: WebhookSenderOptions): Effect.Effect<WebhookSender, never, Scope.Scope> =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const delays = retryDelaysMs(callbackRetry)
    const agent = yield* Effect.acquireRelease(
      Effect.sync(() => new Agent({ connections: MAX_IN_FLIGHT, keepAliveTimeout: 10_000 })),
      (a) => Effect.promise(() => a.destroy().catch(() => undefined))
    )
    const stats: CallbackStats = { sent: 0, failedAttempts: 0, failed: 0, pending: 0 }
    let queue: Array<Pending> = []
    let head = 0
    let inFlight = 0
    let closed = false
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        closed = true
        queue = []
        head = 0
      })
    )

    let resolved: { readonly raw: string; readonly target: { readonly origin: string; readonly path: string } | undefined } | undefined
    const target = () => {
      const raw = options.callbackUrl()
      if (raw === undefined || raw === "") return undefined
      if (resolved?.raw !== raw) {
        const url = options.resolveUrl(raw)
        const parsed = url === undefined ? undefined : new URL(url)
        resolved = { raw, target: parsed === undefined ? undefined : { origin: parsed.origin, path: parsed.pathname + parsed.search } }
      }
      return resolved.target
    }

    // A Herald that is down makes thousands give up a second: one warning a second says enough.
    let warnedAt = 0
    let unwarned = 0
    const giveUp = (reason: string) => {
      stats.failed++
      stats.pending--
      unwarned++
      const now = Date.now()
      if (now - warnedAt < 1_000) return
      warnedAt = now
      const count = unwarned
      unwarned = 0
      Runtime.runFork(runtime)(
        Effect.logWarning("gateway simulator gave up on callbacks after retrying").pipe(Effect.annotateLogs({ given_up: count, last_reason: reason }))
      )
    }

    const failed = (pending: Pending, reason: string) => {
      stats.failedAttempts++
      if (closed) return void stats.pending--
      const delay = delays[pending.tries - 1]
      if (delay === undefined) return giveUp(reason)
      setTimeout(enqueue, delay, pending).unref()
    }

    const settle = (pending: Pending, result: Exchange) => {
      inFlight--
      if (result._tag === "Answered" && result.status >= 200 && result.status < 300) {
        stats.sent++
        stats.pending--
      } else {
        failed(pending, result._tag === "Answered" ? `answered HTTP ${result.status}` : result._tag === "Lost" ? result.detail : result.cause)
      }
      pump()
    }

    const start = (pending: Pending) => {
      pending.tries++
      const to = target()
      if (to === undefined) return failed(pending, "no usable callback URL (yet)")
      inFlight++
      exchange(
        agent,
        {
          origin: to.origin,
          method: "POST",
          path: to.path,
          headers: { "content-type": "application/json", [options.signatureHeader]: pending.signature, "user-agent": options.userAgent },
          body: pending.body
        },
        ATTEMPT_TIMEOUT_MS,
        (result) => settle(pending, result)
      )
    }

    const pump = () => {
      while (!closed && inFlight < MAX_IN_FLIGHT && head < queue.length) {
        const next = queue[head]!
        queue[head++] = undefined as never
        start(next)
      }
      // Drop the consumed front now and then instead of shifting on every take.
      if (head > 4_096 && head * 2 > queue.length) {
        queue = queue.slice(head)
        head = 0
      }
    }

    function enqueue(pending: Pending) {
      if (closed) return
      queue.push(pending)
      pump()
    }

    const post = (body: Buffer, signature: string) => {
      if (closed) return
      stats.pending++
      enqueue({ body, signature, tries: 0 })
    }

    return { post, stats }
  })

/** Posts signed RBM callbacks (Pub/Sub push envelopes) to Herald's RBM events endpoint. */
export const makeCallbackSender = (options: {
  readonly callbackUrl: () => string | undefined
  readonly clientToken: string
  readonly subscription: string
}): Effect.Effect<{
  readonly post: (event: string, seq: number, publishTime: string, pubsubBase: number) => void
  readonly stats: Readonly<CallbackStats>
}, never, Scope.Scope> =>
  Effect.map(
    makeWebhookSender({
      callbackUrl: options.callbackUrl,
      resolveUrl: (raw) => resolveCallbackUrl(raw),
      signatureHeader: SIGNATURE_HEADER,
      userAgent: "Herald-RBM-Simulator/1"
    }),
    (sender) => ({
      /** Queues one event (its JSON) for sending, wrapped and signed. */
      post: (event: string, seq: number, publishTime: string, pubsubBase: number) => {
        const { body, signature } = encodeRbmCallback({
          event,
          pubsubMessageId: String(pubsubBase + seq),
          publishTime,
          subscription: options.subscription,
          clientToken: options.clientToken
        })
        sender.post(Buffer.from(body), signature)
      },
      stats: sender.stats
    })
  )
