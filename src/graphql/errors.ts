import { GraphQLError } from "graphql"
import { restCodeOf } from "../http/errors.ts"

/** The codes of the contract's GraphQL errors, and INTERNAL for anything unexpected. */
export type GraphqlCode = "UNAUTHENTICATED" | "RATE_LIMITED" | "QUERY_TOO_EXPENSIVE" | "NOT_FOUND" | "VALIDATION_ERROR" | "FEATURE_LOCKED" | "INTERNAL"

export const graphqlError = (code: GraphqlCode, message: string, extensions: Record<string, unknown> = {}) =>
  new GraphQLError(message, { extensions: { code, ...extensions } })

const NOT_FOUND_TAGS = new Set(["NotFound", "ConversationNotFound", "AgentNotFound"])

/**
 * A service's failure as a GraphQL error. The services are REST's: their refusals keep their REST
 * code as `reason`, and a refusal about input names its field as `field`.
 */
export const fromDomainError = (error: unknown): GraphQLError => {
  const tagged = error as { readonly _tag?: string; readonly message?: string; readonly errors?: ReadonlyArray<{ readonly path: string }>; readonly retry_after_sec?: number }
  const tag = tagged?._tag
  const message = typeof tagged?.message === "string" ? tagged.message : "failed"
  switch (tag) {
    case undefined:
      return graphqlError("INTERNAL", "internal error")
    case "FeatureLocked":
      return graphqlError("FEATURE_LOCKED", message)
    case "RateLimited":
      return graphqlError("RATE_LIMITED", message, { retry_after_sec: tagged.retry_after_sec })
    case "InvalidApiKey":
      return graphqlError("UNAUTHENTICATED", message)
    default: {
      if (NOT_FOUND_TAGS.has(tag)) return graphqlError("NOT_FOUND", message, { reason: restCodeOf(tag) ?? "not_found" })
      const field = tagged.errors?.[0]?.path
      return graphqlError("VALIDATION_ERROR", message, { reason: restCodeOf(tag) ?? "invalid_request", ...(field ? { field } : {}) })
    }
  }
}
