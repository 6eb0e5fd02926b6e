import { HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either } from "effect"
import type { ExecutionResult, GraphQLError } from "graphql"
import { isJsonContentType, readJsonBody } from "../http/requestBody.ts"
import { graphqlError } from "./errors.ts"
import { describeUnstorable, GraphqlOperations, requestOf } from "./operations.ts"

export const GRAPHQL_PATH = "/api/v1/graphql"
/** A GraphQL request's body is at most this (the design's 1 MB); a socket's message too. */
export const MAX_GRAPHQL_BODY = 1024 * 1024

const answer = (status: number, result: ExecutionResult | { readonly errors: ReadonlyArray<GraphQLError>; readonly data?: null }, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson(
    { ...("data" in result ? { data: result.data } : {}), ...(result.errors ? { errors: result.errors.map((e) => e.toJSON()) } : {}) },
    { status, headers }
  )

/** The body (taken raw: requestBody.ts's RAW_BODY_ROUTES) as a GraphQL request, or why it is not one. */
const requestOfBody = (contentType: string | undefined, bytes: ArrayBuffer) => {
  if (!isJsonContentType(contentType)) return `the body must be JSON (Content-Type: application/json), not ${contentType}`
  const json = readJsonBody(new TextDecoder().decode(bytes))
  if (json._tag === "Unreadable") return `the body is not valid JSON (${json.reason})`
  if (json._tag === "Unstorable") return describeUnstorable(json.issue)
  return requestOf(json.value)
}

/**
 * POST /api/v1/graphql (docs/graphql.md). The status is 200 but for a missing or wrong key (401),
 * a body that is no GraphQL request (400) and one past 1 MB (413); everything else is GraphQL's
 * `{data, errors}` (GraphqlOperations).
 */
export const GraphqlRoute = HttpLayerRouter.use((router) =>
  Effect.gen(function*() {
    const operations = yield* GraphqlOperations

    yield* router.add(
      "POST",
      GRAPHQL_PATH,
      Effect.gen(function*() {
        const http = yield* HttpServerRequest.HttpServerRequest
        const bytes = yield* Effect.orElseSucceed(http.arrayBuffer, () => new ArrayBuffer(0))
        if (bytes.byteLength > MAX_GRAPHQL_BODY) {
          return answer(413, { errors: [graphqlError("VALIDATION_ERROR", `the request body exceeds ${MAX_GRAPHQL_BODY} bytes`)] })
        }
        const account = yield* Effect.either(operations.authenticate(http.headers["authorization"]))
        if (account._tag === "Left") return answer(401, { errors: [account.left] })
        const request = requestOfBody(http.headers["content-type"], bytes)
        if (typeof request === "string") return answer(400, { errors: [graphqlError("VALIDATION_ERROR", request)] })
        const admitted = yield* Effect.either(operations.admit(account.right))
        if (admitted._tag === "Left") {
          const retry = admitted.left.retryAfterSec === undefined ? undefined : { "retry-after": String(admitted.left.retryAfterSec) }
          return answer(200, { data: null, errors: [admitted.left.error] }, retry)
        }
        const document = operations.prepare(request, "http")
        if (Either.isLeft(document)) return answer(200, { errors: document.left })
        return answer(200, yield* operations.execute(account.right, request, document.right))
      })
    )
  })
)
