import type { HttpApi, HttpServerResponse } from "@effect/platform"
import { Option, SchemaAST } from "effect"
import type { Route } from "./RouteTable.ts"
import { envelope } from "../errors.ts"

/**
 * Query parameters are strict (docs/http.md, Query parameters): an operation answers a query
 * parameter it does not declare with 400 `invalid_request` naming it and the ones it takes,
 * rather than ignoring it, as its body's undeclared fields are. A misspelt filter or a pager that
 * sends `cursor` where the list takes `next_cursor` would otherwise get the unfiltered first page
 * again, with 200, forever.
 *
 * What an operation takes is read from its HttpApi declaration (the endpoint's urlParams schema,
 * the one the OpenAPI document lists as its `in: query` parameters), by method and route pattern,
 * so the operations served off HttpApi's path (the hot reads, the streamed imports) are checked
 * the same way. Routes no declaration names (GraphQL, the console, callbacks, the docs) are not.
 */

/** The query parameters each declared operation takes, by `METHOD /route/:pattern`. */
export type AcceptedQueries = ReadonlyMap<string, ReadonlyArray<string>>

/** The encoded (wire) names of a urlParams schema's fields. */
const namesOf = (ast: SchemaAST.AST): ReadonlyArray<string> => {
  const encoded = SchemaAST.encodedAST(ast)
  try {
    return SchemaAST.getPropertySignatures(encoded).map((p) => String(p.name))
  } catch {
    return []
  }
}

/** The accepted query parameters of every endpoint of `api`. */
export const acceptedQueries = (api: HttpApi.HttpApi.Any): AcceptedQueries => {
  const accepted = new Map<string, ReadonlyArray<string>>()
  for (const group of Object.values((api as unknown as HttpApi.HttpApi.AnyWithProps).groups)) {
    for (const endpoint of Object.values(group.endpoints)) {
      const names = Option.match(endpoint.urlParamsSchema, { onNone: () => [], onSome: (schema) => namesOf(schema.ast) })
      accepted.set(`${endpoint.method} ${endpoint.path}`, names)
    }
  }
  return accepted
}

const own = Object.prototype.hasOwnProperty

/**
 * The 400 for the query parameters of a request that its operation does not take, or undefined
 * when it takes them all (or the route is not a declared operation).
 */
export const unknownQueryParameters = (
  accepted: AcceptedQueries,
  method: string,
  route: Route,
  searchParams: Readonly<Record<string, unknown>>
): HttpServerResponse.HttpServerResponse | undefined => {
  let names: ReadonlyArray<string> | undefined
  let unknown: Array<string> | undefined
  for (const name in searchParams) {
    if (!own.call(searchParams, name)) continue
    if (names === undefined) {
      // A HEAD is served by the GET of its path.
      names = accepted.get(`${route.method === "*" ? method : route.method} ${route.path}`)
      if (names === undefined) return undefined
    }
    if (!names.includes(name)) (unknown ??= []).push(name)
  }
  if (unknown === undefined || names === undefined) return undefined
  const takes = names.length === 0 ? "it takes none" : `it takes ${names.join(", ")}`
  const errors = unknown.map((name) => ({ path: name, message: `is not a query parameter of this operation (${takes})` }))
  return envelope(400, "invalid_request", errors.map((e) => `${e.path} ${e.message}`).join("; "), { errors })
}
