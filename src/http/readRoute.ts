import { HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either, type ParseResult, Schema } from "effect"
import { describeParseError } from "../domain/plainIssues.ts"
import type { Principal } from "../domain/signIn.ts"
import { RcsCredentials } from "./Authentication.ts"
import { envelope, errorEnvelope } from "./errors.ts"

export interface ReadInput<Q> {
  readonly principal: Principal
  readonly params: Readonly<Record<string, string | undefined>>
  readonly query: Q
}

/**
 * A hot GET of the RCS API (one that API keys call at their 300 requests/second) served straight
 * off the router instead of through HttpApi, whose per-request decoding and encoding cost about half
 * of the framework's throughput. The endpoint stays declared in HeraldApi, which documents it
 * (OpenAPI) and which the authorization matrix walks; only serving differs. Same credential check,
 * same envelopes: the query is decoded with the endpoint's own schema, and a domain error is
 * answered with the status and code its `errorResponse` declared.
 */
export const readRoute = <Q, QI, A, E extends { readonly _tag: string }, R>(
  path: `/${string}`,
  query: Schema.Schema<Q, QI>,
  makeHandler: Effect.Effect<(input: ReadInput<Q>) => Effect.Effect<A | HttpServerResponse.HttpServerResponse, E>, never, R>
) =>
  HttpLayerRouter.use((router) =>
    Effect.gen(function*() {
      const credentials = yield* RcsCredentials
      const decodeQuery = Schema.decodeUnknownEither(query, { errors: "all" })
      // Services are resolved once, here: providing them per request would copy the context each time.
      const handler = yield* makeHandler
      yield* router.add(
        "GET",
        path,
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const route = yield* HttpLayerRouter.RouteContext
          const search = yield* HttpServerRequest.ParsedSearchParams
          const principal = yield* credentials.fromHeader(request.headers.authorization, "GET", path)
          const decoded = decodeQuery(search)
          if (Either.isLeft(decoded)) return invalidQuery(decoded.left)
          const body = yield* handler({ principal, params: route.params, query: decoded.right })
          // A handler may answer with a response it rendered earlier (see `renderedOnce`).
          return HttpServerResponse.isServerResponse(body) ? body : HttpServerResponse.unsafeJson(body)
        }).pipe(
          Effect.catchAll((error) => {
            const answer = errorEnvelope(error as { readonly _tag: string })
            return answer === undefined ? Effect.die(error) : Effect.succeed(answer)
          })
        )
      )
    })
  )

/**
 * The JSON response for `source` (a cached value, compared by identity) and `variant`, rendered
 * once: the cache hands out the same object until the rows change, so the rendering is reused
 * until then and dropped with the object.
 */
export const renderedOnce = <K extends object>(render: (source: K, variant: string) => unknown) => {
  const responses = new WeakMap<K, Map<string, HttpServerResponse.HttpServerResponse>>()
  return (source: K, variant: string): HttpServerResponse.HttpServerResponse => {
    let byVariant = responses.get(source)
    if (byVariant === undefined) responses.set(source, byVariant = new Map())
    let response = byVariant.get(variant)
    if (response === undefined) byVariant.set(variant, response = HttpServerResponse.unsafeJson(render(source, variant)))
    return response
  }
}

const invalidQuery = (error: ParseResult.ParseError) => {
  const { message, errors } = describeParseError(error)
  return envelope(400, "invalid_request", message, { errors })
}
