import { HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either } from "effect"
import { type ExecutionResult, getOperationAST, type GraphQLError } from "graphql"
import { isJsonContentType, readJsonBody } from "../http/requestBody.ts"
import { graphqlError } from "./errors.ts"
import { describeUnstorable, GraphqlOperations, type GraphqlRequest, requestOf } from "./operations.ts"
import { APPLICATION_JSON, GRAPHQL_RESPONSE_JSON, type ResponseMedia, responseMediaOf } from "./responseMedia.ts"

export const GRAPHQL_PATH = "/api/v1/graphql"
/** A GraphQL request's body is at most this (the design's 1 MB); a socket's message too. */
export const MAX_GRAPHQL_BODY = 1024 * 1024

type Answer = ExecutionResult | { readonly errors: ReadonlyArray<GraphQLError>; readonly data?: null }

/**
 * `{data?, errors?}` in the negotiated media type. The answer varies with Accept (a cache must key
 * on it); application/json is sent exactly as before application/graphql-response+json was served.
 */
const answer = (media: ResponseMedia, status: number, result: Answer, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson(
    { ...("data" in result ? { data: result.data } : {}), ...(result.errors ? { errors: result.errors.map((e) => e.toJSON()) } : {}) },
    { status, headers: { vary: "accept", ...headers }, ...(media === GRAPHQL_RESPONSE_JSON ? { contentType: `${GRAPHQL_RESPONSE_JSON}; charset=utf-8` } : {}) }
  )

/**
 * A request refused before anything ran (parse, validation, variables, cost, a subscription over
 * HTTP): application/json answers 200, as ever; application/graphql-response+json answers 400
 * without a `data` entry, as that media type's status codes say.
 */
const requestErrorStatus = (media: ResponseMedia) => (media === GRAPHQL_RESPONSE_JSON ? 400 : 200)

/** The body (taken raw: requestBody.ts's RAW_BODY_ROUTES) as a GraphQL request, or why it is not one. */
const requestOfBody = (contentType: string | undefined, bytes: ArrayBuffer) => {
  if (!isJsonContentType(contentType)) return `the body must be JSON (Content-Type: application/json), not ${contentType}`
  const json = readJsonBody(new TextDecoder().decode(bytes))
  if (json._tag === "Unreadable") return `the body is not valid JSON (${json.reason})`
  if (json._tag === "Unstorable") return describeUnstorable(json.issue)
  return requestOf(json.value)
}

const GET_PARAMETERS = ["query", "variables", "operationName", "extensions"] as const

/**
 * A GET's query string as a GraphQL request (GraphQL over HTTP, "GET"): `query` and `operationName`
 * as they are, `variables` and `extensions` as JSON text. An unknown or repeated parameter is
 * refused, naming the accepted ones, so a typo is not silently a different request.
 */
const requestOfQueryString = (url: string): GraphqlRequest | string => {
  const params = new URL(url, "http://herald.invalid").searchParams
  const unknown = [...new Set(params.keys())].filter((name) => !(GET_PARAMETERS as ReadonlyArray<string>).includes(name))
  if (unknown.length > 0) return `unknown query parameter${unknown.length === 1 ? "" : "s"} ${unknown.join(", ")}; a GET takes ${GET_PARAMETERS.join(", ")}`
  const fields: Record<string, unknown> = {}
  for (const name of GET_PARAMETERS) {
    const values = params.getAll(name)
    if (values.length > 1) return `${name} is given ${values.length} times; give it once`
    const value = values[0]
    if (value === undefined) continue
    if (name === "query" || name === "operationName") {
      fields[name] = value
      continue
    }
    const json = readJsonBody(value)
    if (json._tag === "Unreadable") return `${name} is not valid JSON (${json.reason})`
    if (json._tag === "Unstorable") return `${name}: ${describeUnstorable(json.issue)}`
    fields[name] = json.value
  }
  return requestOf(fields)
}

/**
 * What POST and GET share once the key is known and the request read: the plan bucket, then
 * GraphqlOperations' checks, then execution, each answer's status as its media type has it
 * (docs/graphql.md, "Media types and status codes").
 */
const serve = (operations: GraphqlOperations, media: ResponseMedia, authorization: string | undefined, read: () => GraphqlRequest | string, method: "GET" | "POST") =>
  Effect.gen(function*() {
    const account = yield* Effect.either(operations.authenticate(authorization))
    if (account._tag === "Left") return answer(media, 401, { errors: [account.left] })
    const request = read()
    if (typeof request === "string") return answer(media, 400, { errors: [graphqlError("VALIDATION_ERROR", request)] })
    const admitted = yield* Effect.either(operations.admit(account.right))
    if (admitted._tag === "Left") {
      const { error, retryAfterSec } = admitted.left
      const retry = retryAfterSec === undefined ? undefined : { "retry-after": String(retryAfterSec) }
      if (media === APPLICATION_JSON) return answer(media, 200, { data: null, errors: [error] }, retry)
      // Nothing ran: no data entry, and the status says why (the plan's bucket, or the plan).
      return answer(media, error.extensions.code === "RATE_LIMITED" ? 429 : 403, { errors: [error] }, retry)
    }
    const document = operations.prepare(request, "http")
    if (Either.isLeft(document)) return answer(media, requestErrorStatus(media), { errors: document.left })
    if (method === "GET" && getOperationAST(document.right, request.operationName)?.operation === "mutation") {
      return answer(media, 405, { errors: [graphqlError("VALIDATION_ERROR", "a mutation is sent with POST; GET runs queries only")] }, { allow: "POST" })
    }
    const result = yield* operations.execute(account.right, request, document.right)
    // No data entry: execution refused the request itself (an operationName the document lacks).
    return answer(media, "data" in result ? 200 : requestErrorStatus(media), result)
  })

/**
 * POST and GET /api/v1/graphql (docs/graphql.md). 401 for a missing or wrong key, 400 for a request
 * that is no GraphQL request, 413 past 1 MB (POST), 405 for a mutation sent with GET; otherwise
 * GraphQL's `{data, errors}` (GraphqlOperations) with the status its media type gives it.
 */
export const GraphqlRoute = HttpLayerRouter.use((router) =>
  Effect.gen(function*() {
    const operations = yield* GraphqlOperations

    yield* router.add(
      "POST",
      GRAPHQL_PATH,
      Effect.gen(function*() {
        const http = yield* HttpServerRequest.HttpServerRequest
        const media = responseMediaOf(http.headers["accept"])
        const bytes = yield* Effect.orElseSucceed(http.arrayBuffer, () => new ArrayBuffer(0))
        if (bytes.byteLength > MAX_GRAPHQL_BODY) {
          return answer(media, 413, { errors: [graphqlError("VALIDATION_ERROR", `the request body exceeds ${MAX_GRAPHQL_BODY} bytes`)] })
        }
        return yield* serve(operations, media, http.headers["authorization"], () => requestOfBody(http.headers["content-type"], bytes), "POST")
      })
    )

    yield* router.add(
      "GET",
      GRAPHQL_PATH,
      Effect.gen(function*() {
        const http = yield* HttpServerRequest.HttpServerRequest
        return yield* serve(operations, responseMediaOf(http.headers["accept"]), http.headers["authorization"], () => requestOfQueryString(http.url), "GET")
      })
    )
  })
)
