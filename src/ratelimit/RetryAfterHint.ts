import { Context } from "effect"

/**
 * Where a refusal leaves its Retry-After for the HTTP edge to send (an error schema cannot carry
 * headers, yet a 429 needs one). The HTTP adapter provides it per request (its request state);
 * outside a request there is none and the hint is dropped.
 */
export interface RetryAfterSlot {
  retryAfter: number | undefined
}

export class RetryAfterHint extends Context.Tag("herald/ratelimit/RetryAfterHint")<RetryAfterHint, RetryAfterSlot>() {}
