import type { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import type { Comparable, CustomerQuery, TraitFilter } from "./traitFilters.ts"

/**
 * A customer query as a condition on `customers c`, run in Postgres. Equality and presence use
 * the operators the GIN index on traits serves (`@>`, `?`); comparisons read the trait with a
 * type check first, so a trait of another type is no match rather than a cast error. Dates
 * compare as numbers: `trait_instants` holds every trait that is an ISO date as epoch seconds,
 * computed when the traits were written (migration 0018).
 */
export const customerCondition = (sql: SqlClient.SqlClient, query: CustomerQuery): Fragment => {
  const parts = query.filters.map((filter) => filterCondition(sql, filter))
  if (query.tags.length > 0) parts.push(sql`c.tags @> ${query.tags}::text[]`)
  if (query.search !== undefined && query.search.trim() !== "") parts.push(searchCondition(sql, query.search.trim()))
  return parts.length === 0 ? sql`TRUE` : sql.and(parts)
}

const jsonOf = (value: Comparable): string => {
  switch (value.kind) {
    case "number":
      return JSON.stringify(value.number)
    case "boolean":
      return JSON.stringify(value.bool)
    default:
      return JSON.stringify(value.text)
  }
}

const SQL_OPERATOR = { gt: ">", gte: ">=", lt: "<", lte: "<=", eq: "=", neq: "<>" } as const

const filterCondition = (sql: SqlClient.SqlClient, filter: TraitFilter): Fragment => {
  const k = filter.trait
  switch (filter.op) {
    case "exists":
      return sql`c.traits ? ${k}`
    case "not_exists":
      return sql`NOT (c.traits ? ${k})`
    case "eq":
      return filter.value.kind === "date"
        ? sql`(c.trait_instants -> ${k})::numeric = ${epochOf(sql, filter.value.text)}`
        // Containment finds candidates by the index; equality then refuses an array holding the value.
        : sql`(c.traits @> ${JSON.stringify({ [k]: JSON.parse(jsonOf(filter.value)) })}::jsonb AND c.traits -> ${k} = ${jsonOf(filter.value)}::jsonb)`
    case "neq":
    case "gt":
    case "gte":
    case "lt":
    case "lte":
      return compare(sql, k, SQL_OPERATOR[filter.op], filter.value)
    case "contains": {
      const element = sql`c.traits -> ${k} @> jsonb_build_array(${jsonOf(filter.value)}::jsonb)`
      if (filter.value.kind !== "string" && filter.value.kind !== "date") {
        return sql`(jsonb_typeof(c.traits -> ${k}) = 'array' AND ${element})`
      }
      return sql`(CASE jsonb_typeof(c.traits -> ${k})
        WHEN 'string' THEN strpos(lower(c.traits ->> ${k}), lower(${filter.value.text})) > 0
        WHEN 'array' THEN ${element} END)`
    }
    case "in": {
      const dates = filter.values.flatMap((v) => (v.kind === "date" ? [v.text] : []))
      const exact = sql`c.traits -> ${k} = ANY(${filter.values.map(jsonOf)}::jsonb[])`
      return dates.length === 0
        ? exact
        : sql`(${exact} OR (c.trait_instants -> ${k})::numeric = ANY(ARRAY(SELECT extract(epoch FROM herald_iso_instant(d)) FROM unnest(${dates}::text[]) d)))`
    }
  }
}

/** A comparison of the trait with a value of the same kind; NULL (no match) for a trait of another. */
const compare = (sql: SqlClient.SqlClient, k: string, operator: string, value: Comparable): Fragment => {
  const op = sql.literal(operator)
  switch (value.kind) {
    case "date":
      return sql`(c.trait_instants -> ${k})::numeric ${op} ${epochOf(sql, value.text)}`
    case "number":
      return sql`(CASE WHEN jsonb_typeof(c.traits -> ${k}) = 'number' THEN (c.traits -> ${k})::numeric ${op} ${value.number}::numeric END)`
    case "boolean":
      return sql`(CASE WHEN jsonb_typeof(c.traits -> ${k}) = 'boolean' THEN (c.traits -> ${k})::boolean ${op} ${value.bool}::boolean END)`
    case "string":
      return sql`(CASE WHEN jsonb_typeof(c.traits -> ${k}) = 'string' THEN (c.traits ->> ${k}) ${op} ${value.text} END)`
  }
}

/** A filter value's instant as epoch seconds, worked out once per query (an InitPlan), not per row. */
const epochOf = (sql: SqlClient.SqlClient, text: string): Fragment => sql`(SELECT extract(epoch FROM herald_iso_instant(${text})))`

/** A name containing the text (any case), or a phone containing its digits. */
const searchCondition = (sql: SqlClient.SqlClient, text: string): Fragment => {
  const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
  const digits = text.replace(/\D/g, "")
  return digits.length >= 3
    ? sql`(c.name ILIKE ${pattern} OR c.phone LIKE ${`%${digits}%`})`
    : sql`c.name ILIKE ${pattern}`
}
