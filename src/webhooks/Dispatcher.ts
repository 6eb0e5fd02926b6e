import { Context, Duration, Effect, Exit, Metric, MetricBoundaries, Option, type Tracer } from "effect"
import { Webhook } from "standardwebhooks"
import { Agent, request } from "undici"
import { type LeaseGuard, leaseIsCurrent } from "../actors/runtime/leaseGuard.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { guardedLookup, urlProblem } from "./urlPolicy.ts"

/** One HTTP attempt of a delivery. */
export interface AttemptJob {
  readonly deliveryId: string
  readonly webhookId: string
  readonly url: string
  readonly secret: string
  /** The secret a rotation replaced: it signs too while the attempt is sent before `until` (epoch ms). */
  readonly previous?: { readonly secret: string; readonly until: number } | undefined
  readonly body: string
  readonly attempt: number
  /** The delivery partition's lease: checked just before the request leaves (ActorContext.lease). */
  readonly lease?: LeaseGuard
  /** The span the attempt continues (its delivery's command), when tracing is on. */
  readonly trace?: Tracer.AnySpan | undefined
}

/**
 * The `webhook-signature` header of an attempt sent at `sentAt` (Standard Webhooks): `v1,<base64
 * HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` under the endpoint's secret, then,
 * while a rotation's overlap lasts, a space and the same under the secret it replaced. A consumer
 * verifying with either secret finds its signature among them (the `standardwebhooks` packages
 * try each value); once the overlap has passed only the new secret signs.
 */
export const signatureHeader = (job: Pick<AttemptJob, "deliveryId" | "secret" | "previous" | "body">, sentAt: number): string => {
  const at = new Date(sentAt)
  const current = new Webhook(job.secret).sign(job.deliveryId, at, job.body)
  return job.previous !== undefined && sentAt < job.previous.until
    ? `${current} ${new Webhook(job.previous.secret).sign(job.deliveryId, at, job.body)}`
    : current
}

/** What came of it: status 0 when there was no HTTP answer, with the cause as the snippet. */
export interface AttemptOutcome {
  readonly statusCode: number
  readonly tookMs: number
  readonly snippet: string
  readonly sentAt: number
  readonly finishedAt: number
}

const SNIPPET_BYTES = 512

// The node's totals, never per endpoint: a label value would be a tenant's webhook id, and /metrics
// is the operator's, not the accounts'. An account reads its own endpoints' failures through
// GET /api/v1/rcs/webhooks/stats.
const attempts = Metric.counter("herald_webhook_attempts_total", { description: "Webhook attempts finished on this node", incremental: true })
const failures = Metric.counter("herald_webhook_failures_total", { description: "Webhook attempts that failed (not 2xx) on this node", incremental: true })
const latency = Metric.histogram(
  "herald_webhook_attempt_seconds",
  MetricBoundaries.fromIterable([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]),
  "Duration of webhook attempts on this node"
)

interface Lane {
  active: number
  readonly waiting: Array<() => void>
}

/**
 * Attempts waiting in all lanes of the node at most (in one endpoint's lane:
 * HERALD_WEBHOOK_LANE_BACKLOG): beyond them an attempt is put off (by a durable timer) rather than
 * queued, so a dead endpoint's backlog never sits in memory, nor in held commands where it would
 * use up the stream's in-flight allowance.
 */
const NODE_BACKLOG = 8_192

/**
 * Sends webhook attempts from this node. Fairness: each endpoint has its own lane with a few
 * requests in flight at most (HERALD_WEBHOOK_ENDPOINT_CONCURRENCY), and the node a global cap
 * (HERALD_WEBHOOK_CONCURRENCY); a slow or dead endpoint fills only its own lane, so attempts to
 * healthy endpoints never queue behind it. The HTTP agent resolves names through a guard that
 * refuses private addresses at connect time.
 */
export class Dispatcher extends Effect.Service<Dispatcher>()("herald/webhooks/Dispatcher", {
  scoped: Effect.gen(function*() {
    const config = yield* AppConfig
    const tracer = yield* Effect.tracer
    /**
     * An attempt's span (OpenTelemetry's HTTP client span) when its delivery is traced, made by
     * hand: attempts run as plain promises, outside any fiber.
     */
    const attemptSpan = (job: AttemptJob) => {
      if (job.trace === undefined) return undefined
      const span = tracer.span("POST", Option.some(job.trace), Context.empty(), [], BigInt(Date.now()) * 1_000_000n, "client", {})
      const url = new URL(job.url)
      span.attribute("http.request.method", "POST")
      span.attribute("server.address", url.hostname)
      span.attribute("url.full", `${url.origin}${url.pathname}`)
      span.attribute("herald.webhook.delivery_id", job.deliveryId)
      span.attribute("herald.webhook.attempt", job.attempt)
      return span
    }
    const endSpan = (span: Tracer.Span | undefined, outcome: AttemptOutcome) => {
      if (span === undefined) return
      if (outcome.statusCode > 0) span.attribute("http.response.status_code", outcome.statusCode)
      const ok = outcome.statusCode >= 200 && outcome.statusCode < 300
      if (!ok) span.attribute("error.type", outcome.statusCode > 0 ? String(outcome.statusCode) : outcome.snippet.split(":")[0])
      span.end(BigInt(outcome.finishedAt) * 1_000_000n, ok ? Exit.void : Exit.fail(outcome.snippet))
    }
    const agent = new Agent({
      connect: { lookup: guardedLookup(config.webhookAllowPrivate) as never, timeout: config.webhookTimeoutMs },
      keepAliveTimeout: 4_000,
      // Fairness is the lanes' job: endpoints on one host (one origin) must not share a few sockets,
      // or a dead path there would hold them all.
      connections: config.webhookConcurrency
    })
    yield* Effect.addFinalizer(() => Effect.promise(() => agent.destroy().catch(() => {})))
    const lanes = new Map<string, Lane>()
    let active = 0
    let waiting = 0
    const globalWaiting: Array<() => void> = []

    const send = async (job: AttemptJob): Promise<AttemptOutcome> => {
      const sentAt = Date.now()
      const problem = urlProblem(job.url, config.webhookAllowPrivate)
      if (problem !== undefined) return { statusCode: 0, tookMs: 0, snippet: `refused: URL ${problem}`, sentAt, finishedAt: sentAt }
      try {
        const signature = signatureHeader(job, sentAt)
        const response = await request(job.url, {
          method: "POST",
          dispatcher: agent,
          body: job.body,
          headers: {
            "content-type": "application/json",
            "user-agent": "Herald-Webhooks/1",
            "webhook-id": job.deliveryId,
            "webhook-timestamp": String(Math.floor(sentAt / 1000)),
            "webhook-signature": signature
          },
          signal: AbortSignal.timeout(config.webhookTimeoutMs),
          maxRedirections: 0
        } as never)
        const snippet = await readSnippet(response.body)
        const finishedAt = Date.now()
        return { statusCode: response.statusCode, tookMs: finishedAt - sentAt, snippet, sentAt, finishedAt }
      } catch (error) {
        const finishedAt = Date.now()
        return { statusCode: 0, tookMs: finishedAt - sentAt, snippet: describeFailure(error, config.webhookTimeoutMs), sentAt, finishedAt }
      }
    }

    // Admission: a free place in the endpoint's lane, then one under the node's cap.
    const admit = (lane: Lane) =>
      new Promise<void>((resolve) => {
        waiting++
        const globally = () => {
          if (active < config.webhookConcurrency) {
            active++
            waiting--
            resolve()
          } else globalWaiting.push(globally)
        }
        const inLane = () => {
          if (lane.active < config.webhookEndpointConcurrency) {
            lane.active++
            globally()
          } else lane.waiting.push(inLane)
        }
        inLane()
      })

    /** Whether an attempt to the endpoint would be queued now, rather than put off. */
    const hasRoom = (webhookId: string) => waiting < NODE_BACKLOG && (lanes.get(webhookId)?.waiting.length ?? 0) < config.webhookLaneBacklog

    /**
     * How long a delivery may wait for its attempt's outcome before it sends the attempt again:
     * a full lane of a dead endpoint drains in backlog / concurrency attempt timeouts, and the
     * Dispatcher always reports, so this only catches a report lost to a bug.
     */
    const holdFor = Duration.millis(config.webhookTimeoutMs * (Math.ceil(config.webhookLaneBacklog / config.webhookEndpointConcurrency) + 2) + 60_000)

    const release = (webhookId: string, lane: Lane) => {
      active--
      lane.active--
      globalWaiting.shift()?.()
      lane.waiting.shift()?.()
      if (lane.active === 0 && lane.waiting.length === 0) lanes.delete(webhookId)
    }

    /**
     * Queues an attempt in its endpoint's lane and returns at once; `done` gets the outcome. The
     * attempt is lost if the node dies first: its delivery's held command is redelivered. Plain
     * promises, not a fiber per attempt: this is the hot path of every delivery. An attempt whose
     * partition this node gave up while it waited is not sent and gets no outcome: the partition's
     * next owner applies the held command again and sends it.
     */
    const submit = (job: AttemptJob, done: (outcome: AttemptOutcome) => void) =>
      Effect.sync(() => {
        let lane = lanes.get(job.webhookId)
        if (lane === undefined) lanes.set(job.webhookId, lane = { active: 0, waiting: [] })
        const admitted = lane
        let span: Tracer.Span | undefined
        void admit(admitted)
          .then(() => leaseIsCurrent(job.lease))
          .then((current) => {
            if (!current) return undefined
            span = attemptSpan(job)
            return send(job)
          })
          .then((outcome) => {
            release(job.webhookId, admitted)
            if (outcome === undefined) return
            endSpan(span, outcome)
            attempts.unsafeUpdate(1, [])
            if (outcome.statusCode < 200 || outcome.statusCode >= 300) failures.unsafeUpdate(1, [])
            latency.unsafeUpdate(outcome.tookMs / 1000, [])
            done(outcome)
          })
      })

    return { submit, hasRoom, holdFor } as const
  }),
  // Only AppConfig, the node's settings (provided at the root, or by a test).
  dependencies: []
}) {}

const readSnippet = async (body: AsyncIterable<Buffer> & { destroy: () => void }): Promise<string> => {
  const chunks: Array<Buffer> = []
  let size = 0
  try {
    for await (const chunk of body) {
      chunks.push(chunk)
      size += chunk.length
      if (size >= SNIPPET_BYTES) break
    }
  } catch {
    // A body cut short still leaves what was read.
  } finally {
    body.destroy()
  }
  return Buffer.concat(chunks).subarray(0, SNIPPET_BYTES).toString("utf8")
}

const describeFailure = (error: unknown, timeoutMs: number): string => {
  const e = error as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } }
  if (e?.name === "TimeoutError" || e?.name === "AbortError") return `timeout: no answer within ${timeoutMs} ms`
  const code = e?.code ?? e?.cause?.code
  const message = e?.cause?.message ?? e?.message ?? String(error)
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return `unresolvable host: ${message}`
  if (code === "ECONNREFUSED") return `connection refused: ${message}`
  if (code === "EPRIVATE") return `refused: ${message}`
  return `${code ?? "error"}: ${message}`.slice(0, SNIPPET_BYTES)
}
