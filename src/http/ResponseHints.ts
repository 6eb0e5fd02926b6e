import { Context } from "effect"

/**
 * Headers a handler or middleware wants on the response whatever HttpApi encodes (an error schema
 * cannot carry headers): filled during the request, applied by the outer request middleware.
 */
export class ResponseHints extends Context.Tag("herald/http/ResponseHints")<ResponseHints, { retryAfter: number | undefined }>() {}
