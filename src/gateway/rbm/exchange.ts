import { Effect, type Scope } from "effect"
import { type Dispatcher, Pool } from "undici"

/**
 * One HTTP exchange with the gateway, told apart by whether the request had been written to a
 * socket when it ended. That is the line between "nothing left Herald, send again" and "it may
 * have reached RBM, never send again", which undici's promise API hides behind one error. Built
 * on `dispatch` with a plain handler: the cheapest path undici offers (no streams, no promise),
 * as every single send and every simulator callback goes through here.
 */
export type Exchange =
  | { readonly _tag: "Answered"; readonly status: number; readonly body: string }
  /** Ended before the request was written: refused, unresolvable, or waited too long for a socket. */
  | { readonly _tag: "NotSent"; readonly cause: string }
  /** Ended after the request was written, with no complete answer. */
  | { readonly _tag: "Lost"; readonly cause: "timeout" | "connection"; readonly detail: string }

export interface ExchangeRequest {
  /** Needed when the dispatcher is an Agent (many origins); a Pool has its own. */
  readonly origin?: string
  readonly method: "GET" | "POST" | "DELETE"
  readonly path: string
  readonly headers: Record<string, string>
  readonly body?: Buffer
  /**
   * Asked as the request gets its socket, just before it is written: false leaves it unwritten
   * (NotSent). A node paused while the request waited for a socket must not send it when it wakes
   * if it no longer holds the partition that decided it (ActorContext.lease).
   */
  readonly proceed?: () => boolean
}

class Expired extends Error {
  override readonly name = "Expired"
}

/**
 * undici's handler (its original callback interface, which still reports `onRequestSent`). One
 * object per exchange with its state in fields, rather than a handful of closures.
 */
class ExchangeHandler {
  private settled = false
  private written = false
  private abortRequest: ((error?: Error) => void) | undefined = undefined
  private status = 0
  private readonly chunks: Array<Buffer> = []
  private readonly timer: ReturnType<typeof setTimeout>

  constructor(private readonly timeoutMs: number, private readonly done: (result: Exchange) => void, private readonly proceed?: () => boolean) {
    // Our own deadline over queueing, connecting and waiting alike: undici's timeouts each cover one phase.
    this.timer = setTimeout(expire, timeoutMs, this)
  }

  finish(result: Exchange) {
    if (this.settled) return
    this.settled = true
    clearTimeout(this.timer)
    this.done(result)
  }

  expire() {
    this.finish(
      this.written
        ? { _tag: "Lost", cause: "timeout", detail: `no answer within ${this.timeoutMs} ms` }
        : { _tag: "NotSent", cause: `no connection within ${this.timeoutMs} ms` }
    )
    this.abortRequest?.(new Expired("deadline"))
  }

  cancel() {
    if (this.settled) return
    this.settled = true
    clearTimeout(this.timer)
    this.abortRequest?.(new Expired("cancelled"))
  }

  onConnect(abort: (error?: Error) => void) {
    // Settled while it was still queued for a socket: it must not be written after all.
    if (this.settled) abort(new Expired("settled before dispatch"))
    else if (this.proceed !== undefined && !this.proceed()) {
      this.finish({ _tag: "NotSent", cause: "withheld: this node no longer holds the partition that decided it" })
      abort(new Expired("withheld"))
    } else this.abortRequest = abort
  }

  onRequestSent() {
    this.written = true
  }

  onHeaders(statusCode: number) {
    if (statusCode >= 200) this.status = statusCode
    return true
  }

  onData(chunk: Buffer) {
    this.chunks.push(chunk)
    return true
  }

  onComplete() {
    const chunks = this.chunks
    const body = chunks.length === 0 ? "" : chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8")
    this.finish({ _tag: "Answered", status: this.status, body })
  }

  onError(error: Error) {
    const cause = describe(error)
    this.finish(this.written ? { _tag: "Lost", cause: "connection", detail: cause } : { _tag: "NotSent", cause })
  }
}

const expire = (handler: ExchangeHandler) => handler.expire()

/** Starts the exchange; `done` is called exactly once. Returns a cancel function (no-op once done). */
export const exchange = (dispatcher: Dispatcher, request: ExchangeRequest, timeoutMs: number, done: (result: Exchange) => void): () => void => {
  const handler = new ExchangeHandler(timeoutMs, done, request.proceed)
  try {
    dispatcher.dispatch(
      {
        ...(request.origin !== undefined ? { origin: request.origin } : {}),
        method: request.method,
        path: request.path,
        headers: request.headers,
        body: request.body ?? null,
        // Backstops only: the handler's deadline decides.
        headersTimeout: timeoutMs + 1_000,
        bodyTimeout: timeoutMs + 1_000
      },
      handler as unknown as Dispatcher.DispatchHandler
    )
  } catch (error) {
    handler.finish({ _tag: "NotSent", cause: describe(error) })
  }
  return () => handler.cancel()
}

const describe = (error: unknown): string => {
  const e = error as { code?: string; message?: string; cause?: { code?: string; message?: string } }
  const code = e?.code ?? e?.cause?.code
  const message = e?.cause?.message ?? e?.message ?? String(error)
  return code !== undefined && !message.includes(code) ? `${code}: ${message}` : message
}

/**
 * A keep-alive pool to one gateway origin, closed with the scope. Connecting counts against the
 * exchange's own deadline; idle sockets are retired by Herald before the upstream does it.
 */
export const gatewayPool = (origin: string, connections: number, timeoutMs: number): Effect.Effect<Pool, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => new Pool(origin, { connections, connect: { timeout: timeoutMs }, keepAliveTimeout: 30_000, keepAliveMaxTimeout: 60_000 })),
    (p) => Effect.promise(() => p.destroy().catch(() => undefined))
  )
