import type { LiveKind } from "../../live/liveSubjects.ts"
/**
 * One subscription's events between the NATS callback and graphql-ws, which awaits each socket
 * write before pulling the next: a client that reads slowly lets this buffer fill, and at `limit`
 * the feed calls `onOverflow` (the socket drops the client) instead of growing. A coalescing feed
 * (progress counters) keeps only the newest event, since each supersedes the last.
 */
export class LiveFeed<T> implements AsyncIterableIterator<T> {
  private readonly buffer: Array<T> = []
  private waiting: { readonly resolve: (result: IteratorResult<T>) => void; readonly reject: (error: Error) => void } | undefined
  private closed = false
  /** Why the feed was ended with an error, until the consumer has been told. */
  private failure: Error | undefined

  constructor(
    private readonly options: {
      readonly limit: number
      readonly coalesce: boolean
      readonly onOverflow: () => void
      readonly onClose: () => void
    }
  ) {}

  push(value: T): void {
    if (this.closed) return
    const waiting = this.waiting
    if (waiting !== undefined) {
      this.waiting = undefined
      waiting.resolve({ value, done: false })
    } else if (this.options.coalesce) {
      this.buffer.length = 0
      this.buffer.push(value)
    } else if (this.buffer.length >= this.options.limit) {
      this.close()
      this.options.onOverflow()
    } else this.buffer.push(value)
  }

  /** Ends the feed after what it holds is delivered (a graceful end: graphql-ws sends `complete`). */
  end(): void {
    if (this.closed) return
    this.closed = true
    this.options.onClose()
    const waiting = this.waiting
    this.waiting = undefined
    waiting?.resolve({ value: undefined, done: true })
  }

  /**
   * Ends the feed at once with `error` (the subscription's right was taken away): what it holds is
   * dropped and graphql-ws sends the error as the operation's `error` message.
   */
  fail(error: Error): void {
    if (this.closed) return
    this.failure = error
    this.close()
  }

  get size(): number {
    return this.buffer.length
  }

  next(): Promise<IteratorResult<T>> {
    const failure = this.failure
    if (failure !== undefined) {
      this.failure = undefined
      return Promise.reject(failure)
    }
    const value = this.buffer.shift()
    if (value !== undefined) return Promise.resolve({ value, done: false })
    if (this.closed) return Promise.resolve({ value: undefined, done: true })
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }))
  }

  /** The consumer stopped (the client's `complete`, a closed socket). */
  return(): Promise<IteratorResult<T>> {
    this.buffer.length = 0
    this.close()
    return Promise.resolve({ value: undefined, done: true })
  }

  [Symbol.asyncIterator](): this {
    return this
  }

  private close() {
    if (this.closed) return
    this.closed = true
    this.buffer.length = 0
    this.options.onClose()
    const waiting = this.waiting
    this.waiting = undefined
    const failure = this.failure
    if (waiting === undefined) return
    if (failure === undefined) waiting.resolve({ value: undefined, done: true })
    else {
      this.failure = undefined
      waiting.reject(failure)
    }
  }
}

/**
 * Opens a feed of the account's live events on this socket: `accept` picks (and shapes) the events
 * of one subscription. Given by the WebSocket transport (GraphqlSocket.ts); absent over HTTP.
 */
export type OpenFeed = <T>(options: { readonly coalesce: boolean; readonly accept: (kind: LiveKind, event: any) => T | undefined }) => Promise<LiveFeed<T>>
