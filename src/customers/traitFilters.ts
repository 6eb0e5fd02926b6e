import { FieldIssue } from "../domain/errors.ts"
import { isoInstant } from "./isoInstant.ts"

/**
 * A customer search's filters (docs/customers.md), checked once and reused wherever customers are
 * filtered (the public search now, saved segments later): `{trait, op, value}`. Numbers compare as
 * numbers and ISO dates as instants; a trait of another type than the value simply does not
 * match, and every operator but not_exists needs the customer to have the trait.
 */
export const OPERATORS = ["eq", "neq", "contains", "gt", "gte", "lt", "lte", "exists", "not_exists", "in"] as const
export type Operator = typeof OPERATORS[number]

export type Scalar = string | number | boolean

/** A filter value's kind decides how it compares: an ISO date string compares as an instant. */
export type Comparable =
  | { readonly kind: "date"; readonly text: string }
  | { readonly kind: "number"; readonly number: number }
  | { readonly kind: "string"; readonly text: string }
  | { readonly kind: "boolean"; readonly bool: boolean }

export type TraitFilter =
  | { readonly trait: string; readonly op: "exists" | "not_exists" }
  | { readonly trait: string; readonly op: "eq" | "neq" | "contains"; readonly value: Comparable }
  | { readonly trait: string; readonly op: "gt" | "gte" | "lt" | "lte"; readonly value: Extract<Comparable, { kind: "date" | "number" }> }
  | { readonly trait: string; readonly op: "in"; readonly values: ReadonlyArray<Comparable> }

export const MAX_FILTERS = 20
export const MAX_TAGS_FILTERED = 20
export const MAX_IN_VALUES = 100
export const MAX_TRAIT_NAME = 100
export const MAX_TAG_LENGTH = 64
const MAX_STRING_VALUE = 1_000

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

export const comparableOf = (value: Scalar): Comparable => {
  if (typeof value === "number") return { kind: "number", number: value }
  if (typeof value === "boolean") return { kind: "boolean", bool: value }
  return isoInstant(value) !== undefined ? { kind: "date", text: value } : { kind: "string", text: value }
}

const scalarProblem = (value: unknown): string | undefined => {
  if (typeof value === "number" || typeof value === "boolean") return undefined
  if (typeof value === "string") return value.length > MAX_STRING_VALUE ? `must be at most ${MAX_STRING_VALUE} characters` : undefined
  return "must be a string, a number or a boolean"
}

/** A trait's name as clients write it in filters and in track/users. */
export const traitNameProblem = (name: unknown): string | undefined => {
  if (typeof name !== "string" || name.length === 0) return "must be a trait's name (a non-empty string)"
  if (name.length > MAX_TRAIT_NAME) return `must be at most ${MAX_TRAIT_NAME} characters`
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f]/.test(name)) return "must not contain control characters"
  return undefined
}

const parseFilter = (raw: unknown, path: string, issues: Array<FieldIssue>): TraitFilter | undefined => {
  if (!isRecord(raw)) {
    issues.push(new FieldIssue({ path, message: "must be an object {trait, op, value}" }))
    return undefined
  }
  const before = issues.length
  const nameProblem = traitNameProblem(raw.trait)
  if (nameProblem !== undefined) issues.push(new FieldIssue({ path: `${path}.trait`, message: nameProblem }))
  const op = raw.op
  if (typeof op !== "string" || !(OPERATORS as ReadonlyArray<string>).includes(op)) {
    const named = typeof op === "string" ? `unknown operator ${JSON.stringify(op.slice(0, 40))}` : "is required"
    issues.push(new FieldIssue({ path: `${path}.op`, message: `${named}; one of ${OPERATORS.join(", ")}` }))
    return undefined
  }
  const trait = raw.trait as string
  const value = raw.value
  const valuePath = `${path}.value`
  switch (op as Operator) {
    case "exists":
    case "not_exists":
      return issues.length > before ? undefined : { trait, op: op as "exists" | "not_exists" }
    case "in": {
      if (!Array.isArray(value) || value.length === 0 || value.length > MAX_IN_VALUES) {
        issues.push(new FieldIssue({ path: valuePath, message: `must be a list of 1 to ${MAX_IN_VALUES} values` }))
        return undefined
      }
      value.forEach((v, i) => {
        const problem = scalarProblem(v)
        if (problem !== undefined) issues.push(new FieldIssue({ path: `${valuePath}[${i}]`, message: problem }))
      })
      return issues.length > before ? undefined : { trait, op: "in", values: (value as Array<Scalar>).map(comparableOf) }
    }
    case "gt":
    case "gte":
    case "lt":
    case "lte": {
      const comparable = typeof value === "number" || typeof value === "string" ? comparableOf(value) : undefined
      if (comparable === undefined || (comparable.kind !== "number" && comparable.kind !== "date")) {
        issues.push(new FieldIssue({ path: valuePath, message: `${op} compares numbers and ISO dates (2024-05-01 or 2024-05-01T10:00:00Z): the value must be one` }))
        return undefined
      }
      return issues.length > before ? undefined : { trait, op: op as "gt", value: comparable }
    }
    case "eq":
    case "neq":
    case "contains": {
      const problem = scalarProblem(value)
      if (problem !== undefined) {
        issues.push(new FieldIssue({ path: valuePath, message: problem }))
        return undefined
      }
      if (op === "contains" && value === "") issues.push(new FieldIssue({ path: valuePath, message: "must not be empty" }))
      return issues.length > before ? undefined : { trait, op: op as "eq", value: comparableOf(value as Scalar) }
    }
  }
}

export interface CustomerQuery {
  readonly filters: ReadonlyArray<TraitFilter>
  readonly tags: ReadonlyArray<string>
  /** Part of the name or of the phone's digits (GraphQL's ContactFilter.search). */
  readonly search?: string | undefined
}

/** A search's filters and tags, or every problem with them (each named by its path). */
export const parseCustomerQuery = (input: { readonly filters?: unknown; readonly tags?: unknown }): CustomerQuery | { readonly issues: ReadonlyArray<FieldIssue> } => {
  const issues: Array<FieldIssue> = []
  const filters: Array<TraitFilter> = []
  if (input.filters !== undefined && input.filters !== null) {
    if (!Array.isArray(input.filters) || input.filters.length > MAX_FILTERS) {
      issues.push(new FieldIssue({ path: "filters", message: `must be a list of at most ${MAX_FILTERS} filters` }))
    } else {
      input.filters.forEach((raw, i) => {
        const filter = parseFilter(raw, `filters[${i}]`, issues)
        if (filter !== undefined) filters.push(filter)
      })
    }
  }
  const tags: Array<string> = []
  if (input.tags !== undefined && input.tags !== null) {
    if (!Array.isArray(input.tags) || input.tags.length > MAX_TAGS_FILTERED) {
      issues.push(new FieldIssue({ path: "tags", message: `must be a list of at most ${MAX_TAGS_FILTERED} tags` }))
    } else {
      input.tags.forEach((tag, i) => {
        if (typeof tag !== "string" || tag.length === 0 || tag.length > MAX_TAG_LENGTH) {
          issues.push(new FieldIssue({ path: `tags[${i}]`, message: `must be a tag (1 to ${MAX_TAG_LENGTH} characters)` }))
        } else tags.push(tag)
      })
    }
  }
  return issues.length > 0 ? { issues } : { filters, tags }
}
