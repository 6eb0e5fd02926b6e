import { HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either, ParseResult, Schema } from "effect"
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
  handler: (input: ReadInput<Q>) => Effect.Effect<A, E, R>
) =>
  HttpLayerRouter.use((router) =>
    Effect.gen(function*() {
      const credentials = yield* RcsCredentials
      const decodeQuery = Schema.decodeUnknownEither(query, { errors: "all" })
      const context = yield* Effect.context<R>()
      yield* router.add(
        "GET",
        path,
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const route = yield* HttpLayerRouter.RouteContext
          const search = yield* HttpServerRequest.ParsedSearchParams
          const header = request.headers.authorization
          const token = header !== undefined && header.startsWith("Bearer ") ? header.slice(7) : ""
          const principal = yield* credentials.principal(token, "GET", path)
          const decoded = decodeQuery(search)
          if (Either.isLeft(decoded)) return invalidQuery(decoded.left)
          const body = yield* handler({ principal, params: route.params, query: decoded.right })
          return HttpServerResponse.unsafeJson(body)
        }).pipe(
          Effect.catchAll((error) => {
            const answer = errorEnvelope(error as { readonly _tag: string })
            return answer === undefined ? Effect.die(error) : Effect.succeed(answer)
          }),
          Effect.provide(context)
        )
      )
    })
  )

const invalidQuery = (error: ParseResult.ParseError) => {
  const errors = ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({ path: issue.path.join("."), message: issue.message }))
  return envelope(400, "invalid_request", `invalid request: ${errors.map((e) => `${e.path}: ${e.message}`).join("; ")}`, { errors })
}
