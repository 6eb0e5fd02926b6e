import { Context } from "effect"

/**
 * What the parts of one request tell the outer request middleware: the route pattern the router
 * matched (metrics are labelled by pattern, `/api/v1/rcs/bots/:bot_id`, never by raw URL), and
 * headers to add whatever HttpApi encodes (an error schema cannot carry headers, yet a 429 needs
 * Retry-After).
 */
export interface RequestStateShape {
  route: string
  retryAfter: number | undefined
}

export class RequestState extends Context.Tag("herald/http/RequestState")<RequestState, RequestStateShape>() {}
