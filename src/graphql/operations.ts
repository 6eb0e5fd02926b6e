import { Cause, Effect, Either, Exit, Option, Runtime } from "effect"
import { readSecretKey } from "../http/bearer.ts"
import { type DocumentNode, execute, type ExecutionResult, getOperationAST, GraphQLError, parse, validate } from "graphql"
import type { Unstorable } from "../domain/storable.ts"
import { ApiRateLimits } from "../ratelimit/ApiRateLimits.ts"
import { type SecretKeyAccount, SecretKeys } from "../security/SecretKeys.ts"
import { ListCursors } from "../storage/ListCursors.ts"
import { costOf, MAX_COST } from "./cost.ts"
import { fromDomainError, graphqlError } from "./errors.ts"
import { makeExecutableSchema } from "./executableSchema.ts"
import { type GraphqlContext, makeLoaders, type Run } from "./context.ts"
import { graphqlServices } from "./services.ts"
import { variableErrors } from "./variables.ts"
import type { OpenFeed } from "./subscriptions/LiveFeed.ts"

export interface GraphqlRequest {
  readonly query: string
  readonly variables: Record<string, unknown> | undefined
  readonly operationName: string | undefined
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** Why a body (HTTP) or a subscribe message's payload (WebSocket) holds what Postgres cannot store. */
export const describeUnstorable = (issue: Unstorable) => `${issue.path === "" ? "the request" : issue.path} ${issue.message}`

/**
 * A body (HTTP), a GET's parameters or a subscribe message's payload (WebSocket) as a GraphQL
 * request, or why it is not one. `extensions` is GraphQL over HTTP's map for protocol extensions:
 * Herald uses none, so any object (or null) is accepted and ignored, and anything else is refused
 * as `variables` is (docs/graphql.md).
 */
export const requestOf = (body: unknown): GraphqlRequest | string => {
  if (!isRecord(body)) return "the body must be a JSON object {query, variables?, operationName?, extensions?}"
  if (typeof body.query !== "string" || body.query.trim() === "") return "query is required (a GraphQL document)"
  if (body.variables !== undefined && body.variables !== null && !isRecord(body.variables)) return "variables must be an object"
  if (body.operationName !== undefined && body.operationName !== null && typeof body.operationName !== "string") return "operationName must be a string"
  if (body.extensions !== undefined && body.extensions !== null && !isRecord(body.extensions)) return "extensions must be an object"
  return {
    query: body.query,
    variables: isRecord(body.variables) ? body.variables : undefined,
    operationName: typeof body.operationName === "string" ? body.operationName : undefined
  }
}

/** A resolver's failure as the contract's error: Herald's refusals keep their code, anything else is INTERNAL. */
export const withCode = (error: GraphQLError): GraphQLError => {
  if (error.extensions?.code !== undefined) return error
  const original = error.originalError
  // graphql-js's own refusals of the request (a variable that does not coerce, an unknown operation)
  // come before any field runs, so without a path, and with no original or one of graphql-js's own
  // uncoded errors: the client's mistake (prepare checks variables first; this is the safety net). An
  // uncoded error with a path is a field's answer that did not serialize: Herald's fault, INTERNAL.
  const graphqlJsOwn = original === undefined || (original instanceof GraphQLError && original.extensions?.code === undefined)
  if (graphqlJsOwn && (original === undefined || error.path === undefined)) {
    return new GraphQLError(error.message, { nodes: error.nodes, path: error.path, extensions: { code: "VALIDATION_ERROR" } })
  }
  const coded = original instanceof GraphQLError && original.extensions?.code !== undefined ? original : fromDomainError(original)
  return new GraphQLError(coded.message, { nodes: error.nodes, path: error.path, extensions: coded.extensions })
}

export const withCodes = <R extends ExecutionResult>(result: R): R => (result.errors === undefined ? result : { ...result, errors: result.errors.map(withCode) })

/** Documents kept, and the longest query text kept (a bound on the cache's memory). */
const CACHED_DOCUMENTS = 256
const CACHED_QUERY_MAX = 4 * 1024

/** A least-recently-used cache of what `load` makes of a query text. */
const documentCache = <A>(load: (query: string) => A) => {
  const entries = new Map<string, A>()
  return {
    get: (query: string): A => {
      const hit = entries.get(query)
      if (hit !== undefined) {
        entries.delete(query)
        entries.set(query, hit)
        return hit
      }
      const made = load(query)
      if (query.length <= CACHED_QUERY_MAX) {
        entries.set(query, made)
        if (entries.size > CACHED_DOCUMENTS) entries.delete(entries.keys().next().value!)
      }
      return made
    }
  }
}

/** The plan bucket refused: the error, and for RATE_LIMITED the seconds to wait. */
export interface Refusal {
  readonly error: GraphQLError
  readonly retryAfterSec: number | undefined
}

/**
 * What both transports (POST and graphql-ws) do with an operation: the secret key, the account's
 * plan bucket (shared with /api/v1/public and /api/v1/app), then parse, validation and cost before
 * anything runs; resolvers call REST's services with per-operation DataLoaders.
 */
export class GraphqlOperations extends Effect.Service<GraphqlOperations>()("herald/graphql/GraphqlOperations", {
  effect: Effect.gen(function*() {
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

    // Parsing and validating a document is most of what a small query costs, and clients send the
    // same few documents again and again: the outcome is kept per query text (cost is not: it
    // depends on the variables).
    const parsed = documentCache((query): Either.Either<DocumentNode, ReadonlyArray<GraphQLError>> => {
      let document: DocumentNode
      try {
        document = parse(query, { maxTokens: 50_000 })
      } catch (error) {
        return Either.left([graphqlError("VALIDATION_ERROR", error instanceof GraphQLError ? error.message : "the query does not parse")])
      }
      const invalid = validate(schema, document, undefined, { maxErrors: 20 })
      return invalid.length > 0
        ? Either.left(invalid.map((e) => new GraphQLError(e.message, { nodes: e.nodes, extensions: { code: "VALIDATION_ERROR" } })))
        : Either.right(document)
    })

    /**
     * `Bearer <secret key>` (the Authorization header, or connection_init's payload); the same key
     * as Basic is taken too (readSecretKey). A refusal's message names the scheme, or says the key
     * itself is unknown.
     */
    const authenticate = (authorization: string | undefined) => {
      const read = readSecretKey(authorization, "Bearer")
      if ("problem" in read) return Effect.fail(graphqlError("UNAUTHENTICATED", read.problem))
      return Effect.mapError(keys.authenticate(read.credential), (e) => graphqlError("UNAUTHENTICATED", `Invalid or revoked secret key: ${e.detail ?? e.message}`))
    }

    /** One token of the account's plan bucket; the Starter plan is FEATURE_LOCKED. */
    const admit = (account: SecretKeyAccount): Effect.Effect<void, Refusal> =>
      Effect.mapError(limits.plan(account), (refused) => ({
        error: fromDomainError(refused),
        retryAfterSec: refused._tag === "RateLimited" ? refused.retry_after_sec : undefined
      }))

    /**
     * The request's document once it parses, validates, its variables coerce (VALIDATION_ERROR naming
     * each one's `field`) and it costs at most MAX_COST, or the errors that refuse it whole.
     * Subscriptions need a socket: over HTTP they are refused here.
     */
    const prepare = (request: GraphqlRequest, transport: "http" | "socket"): Either.Either<DocumentNode, ReadonlyArray<GraphQLError>> => {
      const document = parsed.get(request.query)
      if (Either.isLeft(document)) return document
      // Before anything runs, as graphql-js would, but naming the field each problem is about.
      const invalidVariables = variableErrors(schema, document.right, request.operationName, request.variables)
      if (invalidVariables.length > 0) return Either.left(invalidVariables)
      const report = costOf(schema, document.right, request.variables, request.operationName)
      if (report.problems.length > 0) return Either.left(report.problems.map((p) => graphqlError("VALIDATION_ERROR", p.message, { field: p.field })))
      if (report.cost > MAX_COST) {
        return Either.left([graphqlError("QUERY_TOO_EXPENSIVE", `the query costs ${report.cost}, above the maximum of ${MAX_COST}`, { cost: report.cost, maximum: MAX_COST })])
      }
      if (transport === "http" && getOperationAST(document.right, request.operationName)?.operation === "subscription") {
        return Either.left([graphqlError("VALIDATION_ERROR", "subscriptions are served over the WebSocket (protocol graphql-transport-ws) on /api/v1/graphql")])
      }
      return document
    }

    const contextFor = (account: SecretKeyAccount, openFeed?: OpenFeed): GraphqlContext => ({
      account,
      services,
      run,
      loaders: makeLoaders(account, services, run),
      openFeed
    })

    const executeQuery = (account: SecretKeyAccount, request: GraphqlRequest, document: DocumentNode) =>
      Effect.promise(async () =>
        withCodes(
          await execute({ schema, document, variableValues: request.variables ?? null, operationName: request.operationName ?? null, contextValue: contextFor(account) })
        )
      )

    return { schema, authenticate, admit, prepare, contextFor, execute: executeQuery } as const
  }),
  dependencies: [ListCursors.Default, SecretKeys.Default, ApiRateLimits.Default]
}) {}
