import { Duration, Effect } from "effect"
import { Agent, request } from "undici"
import { AppConfig } from "../config/AppConfig.ts"
import { guardedLookup, urlProblem } from "../webhooks/urlPolicy.ts"

/** What a HEAD request of a media URL learnt. */
export type ProbeOutcome =
  /** A 2xx answer, with what it said of the file. */
  | { readonly _tag: "Answered"; readonly contentType: string | undefined; readonly contentLength: number | undefined }
  /** The URL points where Herald may not go (private or loopback, as for webhooks). */
  | { readonly _tag: "Refused"; readonly reason: string }
  /** No usable answer: timeout, connection failure, non-2xx. */
  | { readonly _tag: "Unchecked"; readonly reason: string }

/** A template is created while its author waits: a slow media host must not hold the request long. */
export const PROBE_TIMEOUT = Duration.seconds(3)
/** CDNs commonly redirect once or twice; each hop is checked against the URL policy again. */
const MAX_REDIRECTS = 3

const PRIVATE_TARGET = "must not target a private or loopback address"

const headerValue = (value: string | Array<string> | undefined) => (Array.isArray(value) ? value[0] : value)

const contentLengthOf = (value: string | undefined): number | undefined => {
  if (value === undefined || !/^\d+$/.test(value.trim())) return undefined
  return Number(value.trim())
}

/** A failed request as an outcome: refused by the DNS guard, or unchecked with the cause in words. */
const failureReason = (error: unknown): ProbeOutcome => {
  const e = error as { code?: string; message?: string; cause?: { code?: string; message?: string } }
  const code = e?.code ?? e?.cause?.code
  if (code === "EPRIVATE") return { _tag: "Refused", reason: PRIVATE_TARGET }
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return { _tag: "Unchecked", reason: "the host name does not resolve" }
  if (code === "ECONNREFUSED") return { _tag: "Unchecked", reason: "connection refused" }
  return { _tag: "Unchecked", reason: e?.cause?.message ?? e?.message ?? String(error) }
}

/**
 * Checks media URLs of a template by a HEAD request (size and type, RBM's 100 MB and formats),
 * once, at creation: a send does not wait for it. Targets are policed as webhook URLs are: private
 * and loopback addresses are refused unless WEBHOOK_ALLOW_PRIVATE=true, by name before connecting
 * and by resolved address at connect time (against DNS rebinding).
 */
export class MediaProbe extends Effect.Service<MediaProbe>()("herald/templates/MediaProbe", {
  scoped: Effect.gen(function*() {
    const config = yield* AppConfig
    const allowPrivate = config.webhookAllowPrivate
    const agent = new Agent({
      connect: { lookup: guardedLookup(allowPrivate) as never, timeout: Duration.toMillis(PROBE_TIMEOUT) },
      keepAliveTimeout: 1_000
    })
    yield* Effect.addFinalizer(() => Effect.promise(() => agent.destroy().catch(() => {})))

    const follow = async (url: string, signal: AbortSignal): Promise<ProbeOutcome> => {
      let current = url
      for (let hop = 0;; hop++) {
        const problem = urlProblem(current, allowPrivate)
        if (problem !== undefined) return { _tag: "Refused", reason: problem }
        const response = await request(current, { method: "HEAD", dispatcher: agent, signal, headers: { "user-agent": "Herald-MediaCheck/1" } })
        await response.body.dump()
        const location = headerValue(response.headers.location)
        if (response.statusCode >= 300 && response.statusCode < 400 && location !== undefined && hop < MAX_REDIRECTS) {
          current = new URL(location, current).toString()
          continue
        }
        if (response.statusCode < 200 || response.statusCode >= 300) return { _tag: "Unchecked", reason: `HTTP ${response.statusCode}` }
        return {
          _tag: "Answered",
          contentType: headerValue(response.headers["content-type"]),
          contentLength: contentLengthOf(headerValue(response.headers["content-length"]))
        }
      }
    }

    /** What a HEAD of `url` says; never fails (a problem is an outcome). */
    const probe = (url: string): Effect.Effect<ProbeOutcome> =>
      Effect.tryPromise({ try: (signal) => follow(url, signal), catch: failureReason }).pipe(
        Effect.merge,
        Effect.timeoutTo({
          duration: PROBE_TIMEOUT,
          onSuccess: (outcome) => outcome,
          onTimeout: (): ProbeOutcome => ({ _tag: "Unchecked", reason: `no answer within ${Duration.format(PROBE_TIMEOUT)}` })
        }),
        Effect.withSpan("MediaProbe.probe")
      )

    return { probe } as const
  })
}) {}
