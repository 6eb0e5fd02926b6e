/**
 * The media type of a GraphQL answer over HTTP, from the request's Accept header (GraphQL over
 * HTTP, "Accept" and "Response"): `application/graphql-response+json`, whose status tells whether
 * anything ran, when the client prefers it (Apollo Client and graphql-http's client list it first),
 * `application/json` otherwise. docs/graphql.md, "Media types and status codes".
 */
export const GRAPHQL_RESPONSE_JSON = "application/graphql-response+json"
export const APPLICATION_JSON = "application/json"
export type ResponseMedia = typeof GRAPHQL_RESPONSE_JSON | typeof APPLICATION_JSON

interface MediaRange {
  readonly type: string
  readonly q: number
  readonly position: number
}

const rangesOf = (accept: string): ReadonlyArray<MediaRange> =>
  accept.split(",").flatMap((part, position) => {
    const [type = "", ...parameters] = part.split(";").map((p) => p.trim().toLowerCase())
    if (type === "") return []
    const q = parameters.find((p) => p.startsWith("q="))
    const quality = q === undefined ? 1 : Number(q.slice(2))
    return [{ type, q: Number.isFinite(quality) ? quality : 0, position }]
  })

/** The range that governs `media` (RFC 9110 §12.5.1: the most specific that matches), with its specificity. */
const governing = (ranges: ReadonlyArray<MediaRange>, media: ResponseMedia) => {
  const [family] = media.split("/")
  for (const [type, specificity] of [[media, 2], [`${family}/*`, 1], ["*/*", 0]] as const) {
    const range = ranges.find((r) => r.type === type)
    if (range !== undefined) return { q: range.q, specificity, position: range.position }
  }
  return undefined
}

/**
 * The client's preferred type of the two: the higher quality, then the one named outright over a
 * wildcard's (so `*` / `*` alone is application/json), then the one listed first. No Accept, or one
 * that accepts neither (quality 0, or other types only), is answered application/json, as the spec
 * allows instead of a 406: a client that sent `Accept: text/html` still reads the errors.
 */
export const responseMediaOf = (accept: string | undefined): ResponseMedia => {
  if (accept === undefined || accept.trim() === "") return APPLICATION_JSON
  const ranges = rangesOf(accept)
  const json = governing(ranges, APPLICATION_JSON)
  const graphql = governing(ranges, GRAPHQL_RESPONSE_JSON)
  if (graphql === undefined || graphql.q <= 0) return APPLICATION_JSON
  if (json === undefined || json.q <= 0) return GRAPHQL_RESPONSE_JSON
  if (graphql.q !== json.q) return graphql.q > json.q ? GRAPHQL_RESPONSE_JSON : APPLICATION_JSON
  if (graphql.specificity !== json.specificity) return graphql.specificity > json.specificity ? GRAPHQL_RESPONSE_JSON : APPLICATION_JSON
  return graphql.position < json.position ? GRAPHQL_RESPONSE_JSON : APPLICATION_JSON
}
