import { HttpLayerRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Exit, Option, Runtime } from "effect"
import { type DocumentNode, execute, type ExecutionResult, GraphQLError, parse, validate } from "graphql"
import { ApiRateLimits } from "../ratelimit/ApiRateLimits.ts"
import { type SecretKeyAccount, SecretKeys } from "../security/SecretKeys.ts"
import { costOf, MAX_COST } from "./cost.ts"
import { fromDomainError, graphqlError } from "./errors.ts"
import { makeExecutableSchema } from "./executableSchema.ts"
import { type GraphqlContext, makeLoaders, type Run } from "./resolvers.ts"
import { graphqlServices } from "./services.ts"

export const GRAPHQL_PATH = "/api/v1/graphql"
/** A GraphQL request's body is at most this (the design's 1 MB). */
export const MAX_GRAPHQL_BODY = 1024 * 1024

interface GraphqlRequest {
  readonly query: string
  readonly variables: Record<string, unknown> | undefined
  readonly operationName: string | undefined
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** The body as a GraphQL request, or why it is not one. */
const requestOf = (body: unknown): GraphqlRequest | string => {
  if (!isRecord(body)) return "the body must be a JSON object {query, variables?, operationName?}"
  if (typeof body.query !== "string" || body.query.trim() === "") return "query is required (a GraphQL document)"
  if (body.variables !== undefined && body.variables !== null && !isRecord(body.variables)) return "variables must be an object"
  if (body.operationName !== undefined && body.operationName !== null && typeof body.operationName !== "string") return "operationName must be a string"
  return {
    query: body.query,
    variables: isRecord(body.variables) ? body.variables : undefined,
    operationName: typeof body.operationName === "string" ? body.operationName : undefined
  }
}

const answer = (status: number, result: ExecutionResult | { readonly errors: ReadonlyArray<GraphQLError> }, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson(
    { ...("data" in result ? { data: result.data } : {}), ...(result.errors ? { errors: result.errors.map((e) => e.toJSON()) } : {}) },
    { status, headers }
  )

/** A resolver's failure as the contract's error: Herald's refusals keep their code, anything else is INTERNAL. */
const withCode = (error: GraphQLError): GraphQLError => {
  if (error.extensions?.code !== undefined) return error
  const original = error.originalError
  // graphql-js's own errors (variable coercion, a null for a non-null field) have no original.
  if (original === undefined) return new GraphQLError(error.message, { nodes: error.nodes, path: error.path, extensions: { code: "VALIDATION_ERROR" } })
  const coded = original instanceof GraphQLError && original.extensions?.code !== undefined ? original : fromDomainError(original)
  return new GraphQLError(coded.message, { nodes: error.nodes, path: error.path, extensions: coded.extensions })
}

/**
 * POST /api/v1/graphql (docs/graphql.md). The secret key and the account's plan bucket (shared
 * with /api/v1/public and /api/v1/app) first; then the document is parsed, validated and costed
 * before anything runs; resolvers call the REST services with per-request DataLoaders. The status
 * is 200 but for a missing or wrong key (401), a body that is no GraphQL request (400) and one
 * past 1 MB (413).
 */
export const GraphqlRoute = HttpLayerRouter.use((router) =>
  Effect.gen(function*() {
    const keys = yield* SecretKeys
    const limits = yield* ApiRateLimits
    const services = yield* graphqlServices
    const runtime = yield* Effect.runtime<never>()
    const runExit = Runtime.runPromiseExit(runtime)
    const schema = makeExecutableSchema()

    const run: Run = (effect) =>
      runExit(effect).then((exit) => {
        if (Exit.isSuccess(exit)) return exit.value
        const failure = Cause.failureOption(exit.cause)
        if (Option.isSome(failure)) throw failure.value
        Runtime.runFork(runtime)(Effect.logError("GraphQL resolver failed", exit.cause))
        throw graphqlError("INTERNAL", "internal error")
      })

    const authenticate = (header: string | undefined) => {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "")
      if (match === null) return Effect.fail(graphqlError("UNAUTHENTICATED", "Authorization: Bearer <secret key> is required"))
      return Effect.mapError(keys.authenticate(match[1]!), () => graphqlError("UNAUTHENTICATED", "Invalid or revoked secret key"))
    }

    const executeFor = (account: SecretKeyAccount, request: GraphqlRequest, document: DocumentNode) =>
      Effect.promise(async () => {
        const context: GraphqlContext = { account, services, run, loaders: makeLoaders(account, services, run) }
        const result = await execute({ schema, document, variableValues: request.variables ?? null, operationName: request.operationName ?? null, contextValue: context })
        return result.errors === undefined ? result : { ...result, errors: result.errors.map(withCode) }
      })

    yield* router.add(
      "POST",
      GRAPHQL_PATH,
      Effect.gen(function*() {
        const http = yield* HttpServerRequest.HttpServerRequest
        if ((yield* Effect.orElseSucceed(http.arrayBuffer, () => new ArrayBuffer(0))).byteLength > MAX_GRAPHQL_BODY) {
          return answer(413, { errors: [graphqlError("VALIDATION_ERROR", `the request body exceeds ${MAX_GRAPHQL_BODY} bytes`)] })
        }
        const account = yield* Effect.either(authenticate(http.headers["authorization"]))
        if (account._tag === "Left") return answer(401, { errors: [account.left] })
        const body = yield* Effect.orElseSucceed(http.json, () => undefined)
        const request = requestOf(body)
        if (typeof request === "string") return answer(400, { errors: [graphqlError("VALIDATION_ERROR", request)] })
        const allowed = yield* Effect.either(limits.plan(account.right))
        if (allowed._tag === "Left") {
          const error = fromDomainError(allowed.left)
          const retry = allowed.left._tag === "RateLimited" ? { "retry-after": String(allowed.left.retry_after_sec) } : undefined
          return answer(200, { data: null, errors: [error] }, retry)
        }
        let document: DocumentNode
        try {
          document = parse(request.query, { maxTokens: 50_000 })
        } catch (error) {
          return answer(200, { errors: [graphqlError("VALIDATION_ERROR", error instanceof GraphQLError ? error.message : "the query does not parse")] })
        }
        const invalid = validate(schema, document, undefined, { maxErrors: 20 })
        if (invalid.length > 0) return answer(200, { errors: invalid.map((e) => new GraphQLError(e.message, { nodes: e.nodes, extensions: { code: "VALIDATION_ERROR" } })) })
        const report = costOf(schema, document, request.variables, request.operationName)
        if (report.problems.length > 0) {
          return answer(200, { errors: report.problems.map((p) => graphqlError("VALIDATION_ERROR", p.message, { field: p.field })) })
        }
        if (report.cost > MAX_COST) {
          return answer(200, { errors: [graphqlError("QUERY_TOO_EXPENSIVE", `the query costs ${report.cost}, above the maximum of ${MAX_COST}`, { cost: report.cost, maximum: MAX_COST })] })
        }
        return answer(200, yield* executeFor(account.right, request, document))
      })
    )
  })
)
