import { Context } from "effect"
import type { RetryAfterSlot } from "../ratelimit/RetryAfterHint.ts"

/**
 * What the parts of one request tell the outer request middleware: the route pattern the router
 * matched (metrics are labelled by pattern, `/api/v1/rcs/bots/:bot_id`, never by raw URL), and
 * headers to add whatever HttpApi encodes (an error schema cannot carry headers, yet a 429 needs
 * Retry-After; the rate limits set it through ratelimit/RetryAfterHint.ts, which the adapter
 * provides as this same object).
 */
export interface RequestStateShape extends RetryAfterSlot {
  route: string
}

export class RequestState extends Context.Tag("herald/http/RequestState")<RequestState, RequestStateShape>() {}
