import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  GraphQLIncludeDirective,
  type GraphQLSchema,
  GraphQLSkipDirective,
  getArgumentValues,
  getDirectiveValues,
  getNamedType,
  getOperationAST,
  getVariableValues,
  isInterfaceType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
  SchemaMetaFieldDef,
  typeFromAST,
  TypeMetaFieldDef
} from "graphql"

/*
 * The cost and shape of one GraphQL operation, measured before it runs (pure: no I/O, no Effect).
 *
 * Cost rules:
 * - Every field costs 1 plus the cost of its selection; `__typename` costs nothing.
 * - A connection field (its named output type's name ends in "Connection") costs
 *   1 + limit × (cost of the selection inside `edges { node }`) + (cost of `pageInfo`'s selection).
 *   `edges`, `node`, `cursor` and `pageInfo` themselves cost nothing. Any other field of an edge costs
 *   per edge (limit × (1 + its selection)); any other field of the connection (a `totalCount`, say)
 *   costs once, like a plain field. A list that is no connection costs like any field, whatever its
 *   length (Herald's unbounded-looking lists are short and fixed, the long ones are connections). `limit` is the field's `page: {limit, cursor}` argument's `limit`
 *   (inline, through variables, or the whole `page` as a variable, with the schema's defaults),
 *   PAGE_LIMIT_DEFAULT when absent or null.
 * - A page limit outside 1..PAGE_LIMIT_MAX is a problem (field: the argument's path,
 *   `contacts.page.limit`). For the cost figure it is clamped into 1..PAGE_LIMIT_MAX, so one bad limit
 *   does not also show up as an absurd cost; the problem refuses the operation anyway.
 * - Named fragments and inline fragments count where they are spread, every time they are spread
 *   (on an abstract type every branch counts, not only the most expensive).
 * - Selections (fields, spreads, inline fragments) excluded by `@skip(if: true)` / `@include(if: false)`
 *   count for nothing, with the operation's variables applied.
 * - Introspection: `__schema` and `__type` and everything under them are costed as plain fields (1 each
 *   plus their selection). Their list fan-out is not multiplied: graphql-js's standard validation
 *   (MaxIntrospectionDepthRule, in `specifiedRules` since 16.9) refuses the deep `fields { type { fields`
 *   nestings that would make introspection expensive. `__Type.ofType` adds no depth level (it is a single
 *   object whose chain ends with the schema's type wrappers), so the standard introspection query, which
 *   nests `ofType` nine times, stays within MAX_DEPTH; it still counts as fields and cost.
 *
 * Shape rules:
 * - depth: the longest chain of nested fields (`{ me }` is 1, `{ me { id } }` is 2), fragments
 *   transparent. More than `maxDepth` is a problem; nothing deeper is walked.
 * - fields: field selections after expanding fragments, skipped ones excluded, every field counted
 *   (`__typename`, `edges`, `node`, `cursor`, `pageInfo` included): 5,000 aliases of `me` are 5,000.
 *   More than `maxFields` is a problem and the walk stops there (`truncated`).
 * - Work bound: at most `maxSelections` selection nodes (fields, skipped or not, spreads, inline
 *   fragments) are visited, so even fragments doubling each other under `@skip` cost little to measure;
 *   fragment spreads nest at most `maxFragmentNesting` deep, and a spread of a fragment already being
 *   expanded (a cycle: the validated document has none) is a problem and is not followed. The walk is
 *   iterative, so no document can overflow the stack.
 *
 * The cost above MAX_COST is not among the problems: the caller compares `cost` with MAX_COST
 * (QUERY_TOO_EXPENSIVE) after refusing any problem (VALIDATION_ERROR naming `field`). Variables that do
 * not coerce are not problems either: execution refuses them before any resolver runs.
 *
 * When `truncated` is true the walk stopped early: cost, depth and fields are lower bounds, and
 * `problems` is non-empty. A subscription is measured per event. The document is expected to be validated already, but an invalid one is
 * measured too (unknown fields as plain fields, missing fragments ignored), so the check may also run
 * before validation as a cheap first gate.
 */

/** Why an operation must be refused before it runs. */
export interface CostProblem {
  /** "page_limit" and "arguments" name an argument path; the shape kinds name where the limit was crossed. */
  readonly kind: "page_limit" | "arguments" | "depth" | "fields" | "fragments" | "operation"
  readonly message: string
  /** A response path (aliases as the client wrote them, fragments transparent), an argument path below it, or "" for the whole operation. */
  readonly field: string
}

export interface CostReport {
  readonly cost: number
  readonly depth: number
  readonly fields: number
  readonly problems: ReadonlyArray<CostProblem>
  /** The walk stopped early (a shape limit far exceeded): cost, depth and fields are lower bounds. */
  readonly truncated: boolean
}

export interface CostLimits {
  readonly maxDepth: number
  readonly maxFields: number
  readonly maxSelections: number
  readonly maxFragmentNesting: number
}

export const MAX_COST = 1000
export const MAX_DEPTH = 12
export const MAX_FIELDS = 2000
/** Selection nodes visited at most, skipped ones and fragment spreads included (5 × MAX_FIELDS). */
export const MAX_SELECTIONS = 10_000
export const MAX_FRAGMENT_NESTING = 50
export const PAGE_LIMIT_DEFAULT = 20
export const PAGE_LIMIT_MAX = 100

export const DEFAULT_LIMITS: CostLimits = {
  maxDepth: MAX_DEPTH,
  maxFields: MAX_FIELDS,
  maxSelections: MAX_SELECTIONS,
  maxFragmentNesting: MAX_FRAGMENT_NESTING
}

type Role =
  | { readonly kind: "plain" }
  | { readonly kind: "connection"; readonly limit: number }
  | { readonly kind: "edge"; readonly limit: number }

const PLAIN: Role = { kind: "plain" }

/** The fragments being expanded above a selection set, innermost first. */
interface FragmentChain {
  readonly name: string
  readonly outer: FragmentChain | undefined
  readonly size: number
}

interface Task {
  readonly selectionSet: SelectionSetNode
  readonly parentType: GraphQLNamedType | undefined
  readonly role: Role
  /** Times each field here runs: the product of the enclosing connections' limits. */
  readonly multiplier: number
  /** Depth of the field owning this selection set (0 for the operation). */
  readonly depth: number
  readonly path: string
  readonly fragments: FragmentChain | undefined
}

const chainHas = (chain: FragmentChain | undefined, name: string): boolean => {
  for (let link = chain; link !== undefined; link = link.outer) {
    if (link.name === name) return true
  }
  return false
}

const chainNames = (chain: FragmentChain | undefined): Array<string> => {
  const names: Array<string> = []
  for (let link = chain; link !== undefined; link = link.outer) names.unshift(link.name)
  return names
}

const join = (path: string, key: string) => (path === "" ? key : `${path}.${key}`)

const isConnectionType = (type: GraphQLNamedType | undefined): boolean =>
  type !== undefined && (isObjectType(type) || isInterfaceType(type)) && type.name.endsWith("Connection")

/**
 * Measures `operationName` (or the document's only operation) of `document` with `variables`
 * (raw JSON, coerced here with the operation's variable definitions and defaults).
 */
export const costOf = (
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName?: string | null,
  limits: Partial<CostLimits> = {}
): CostReport => {
  const { maxDepth, maxFields, maxSelections, maxFragmentNesting } = { ...DEFAULT_LIMITS, ...limits }
  const problems: Array<CostProblem> = []
  const reported = new Set<string>()
  /** Records a problem once, however many times fragments repeat its cause. */
  const report = (problem: CostProblem) => {
    const key = `${problem.kind}\u0000${problem.field}\u0000${problem.message}`
    if (reported.has(key)) return
    reported.add(key)
    problems.push(problem)
  }

  const operation: OperationDefinitionNode | null | undefined = getOperationAST(document, operationName)
  if (operation === null || operation === undefined) {
    const message = operationName
      ? `Unknown operation named "${operationName}".`
      : "Must provide operation name if query contains multiple operations."
    return { cost: 0, depth: 0, fields: 0, problems: [{ kind: "operation", message, field: "" }], truncated: false }
  }
  const rootType = schema.getRootType(operation.operation)
  if (rootType === null || rootType === undefined) {
    const message = `Schema is not configured to execute ${operation.operation} operation.`
    return { cost: 0, depth: 0, fields: 0, problems: [{ kind: "operation", message, field: "" }], truncated: false }
  }

  // Variables as execution will see them: coerced, with their defaults. Variables that do not coerce
  // are no problem of this report: execution refuses them (graphql-js's own error) before any resolver
  // runs; the raw values are measured meanwhile, so a bad page limit among them is still named.
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables ?? {}, { maxErrors: 1 })
  const variableValues: Record<string, unknown> = coerced.errors === undefined ? coerced.coerced : { ...(variables ?? {}) }

  const fragments = new Map<string, FragmentDefinitionNode>()
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition)
  }

  /** Whether @skip / @include keep this selection (an unreadable condition keeps it: it counts). */
  const included = (node: SelectionNode): boolean => {
    if (node.directives === undefined || node.directives.length === 0) return true
    try {
      if (getDirectiveValues(GraphQLSkipDirective, node, variableValues)?.["if"] === true) return false
      if (getDirectiveValues(GraphQLIncludeDirective, node, variableValues)?.["if"] === false) return false
    } catch {
      return true
    }
    return true
  }

  const fieldDefinition = (parentType: GraphQLNamedType | undefined, name: string): GraphQLField<unknown, unknown> | undefined => {
    if (parentType === undefined) return undefined
    if (parentType === schema.getQueryType()) {
      if (name === SchemaMetaFieldDef.name) return SchemaMetaFieldDef
      if (name === TypeMetaFieldDef.name) return TypeMetaFieldDef
    }
    if (isObjectType(parentType) || isInterfaceType(parentType)) return parentType.getFields()[name]
    return undefined
  }

  /** The connection's page size: `page.limit`, PAGE_LIMIT_DEFAULT when absent or null; out of range is a problem. */
  const pageLimit = (definition: GraphQLField<unknown, unknown>, node: FieldNode, path: string): number => {
    if (!definition.args.some((argument) => argument.name === "page")) return PAGE_LIMIT_DEFAULT
    let args: Record<string, unknown>
    try {
      args = getArgumentValues(definition, node, variableValues)
    } catch (error) {
      report({ kind: "arguments", message: error instanceof Error ? error.message : String(error), field: join(path, "page") })
      return PAGE_LIMIT_DEFAULT
    }
    const page = args["page"]
    if (page === null || page === undefined || typeof page !== "object") return PAGE_LIMIT_DEFAULT
    const limit = (page as Record<string, unknown>)["limit"]
    if (limit === null || limit === undefined) return PAGE_LIMIT_DEFAULT
    if (typeof limit === "number" && Number.isInteger(limit) && limit >= 1 && limit <= PAGE_LIMIT_MAX) return limit
    report({
      kind: "page_limit",
      message: `page.limit must be an integer from 1 to ${PAGE_LIMIT_MAX}, got ${JSON.stringify(limit) ?? String(limit)}`,
      field: join(path, "page.limit")
    })
    return typeof limit === "number" && Number.isFinite(limit) ? Math.min(Math.max(Math.trunc(limit), 1), PAGE_LIMIT_MAX) : PAGE_LIMIT_DEFAULT
  }

  let cost = 0
  let depth = 0
  let fieldCount = 0
  let visited = 0
  let truncated = false
  let depthReported = false

  // Depth first, in document order, without recursion: each frame is a selection set and the index
  // of its next selection.
  const stack: Array<{ readonly task: Task; next: number }> = [{
    task: {
      selectionSet: operation.selectionSet,
      parentType: rootType,
      role: PLAIN,
      multiplier: 1,
      depth: 0,
      path: "",
      fragments: undefined
    },
    next: 0
  }]
  const enter = (task: Task) => stack.push({ task, next: 0 })

  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!
    const task = frame.task
    const selection = task.selectionSet.selections[frame.next]
    if (selection === undefined) {
      stack.pop()
      continue
    }
    frame.next += 1
    visited += 1
    if (visited > maxSelections) {
      report({
        kind: "fields",
        message: `the operation expands to more than ${maxSelections} selections (fragments included)`,
        field: task.path
      })
      truncated = true
      break
    }
    if (!included(selection)) continue

    if (selection.kind === Kind.INLINE_FRAGMENT) {
      const parentType = selection.typeCondition === undefined
        ? task.parentType
        : (typeFromAST(schema, selection.typeCondition) ?? task.parentType)
      enter({ ...task, selectionSet: selection.selectionSet, parentType })
      continue
    }

    if (selection.kind === Kind.FRAGMENT_SPREAD) {
      const name = selection.name.value
      const fragment = fragments.get(name)
      if (fragment === undefined) continue
      if (chainHas(task.fragments, name)) {
        report({
          kind: "fragments",
          message: `fragment "${name}" spreads itself (${[...chainNames(task.fragments), name].join(" → ")})`,
          field: task.path
        })
        continue
      }
      const size = (task.fragments?.size ?? 0) + 1
      if (size > maxFragmentNesting) {
        report({ kind: "fragments", message: `fragments nest more than ${maxFragmentNesting} deep`, field: task.path })
        truncated = true
        continue
      }
      enter({
        ...task,
        selectionSet: fragment.selectionSet,
        parentType: typeFromAST(schema, fragment.typeCondition) ?? task.parentType,
        fragments: { name, outer: task.fragments, size }
      })
      continue
    }

    // A field.
    fieldCount += 1
    const name = selection.name.value
    const path = join(task.path, selection.alias?.value ?? name)
    if (fieldCount > maxFields) {
      report({ kind: "fields", message: `the operation selects more than ${maxFields} fields (fragments expanded)`, field: path })
      truncated = true
      break
    }
    const fieldDepth = name === "ofType" && task.parentType?.name === "__Type" ? task.depth : task.depth + 1
    if (fieldDepth > depth) depth = fieldDepth
    if (fieldDepth > maxDepth && !depthReported) {
      depthReported = true
      report({ kind: "depth", message: `the operation nests fields deeper than ${maxDepth} levels`, field: path })
    }
    if (name === "__typename") continue

    const definition = fieldDefinition(task.parentType, name)
    const fieldType = definition === undefined ? undefined : getNamedType(definition.type)

    let contribution: number
    let childRole: Role = PLAIN
    let childMultiplier = task.multiplier
    if (task.role.kind === "connection" && name === "edges") {
      contribution = 0
      childRole = { kind: "edge", limit: task.role.limit }
    } else if (task.role.kind === "connection" && name === "pageInfo") {
      contribution = 0
    } else if (task.role.kind === "edge" && (name === "node" || name === "cursor")) {
      contribution = 0
      childMultiplier = task.multiplier * task.role.limit
    } else {
      // A plain field, or another field of a connection (once) or of an edge (once per edge).
      const multiplier = task.role.kind === "edge" ? task.multiplier * task.role.limit : task.multiplier
      contribution = multiplier
      childMultiplier = multiplier
      if (definition !== undefined && isConnectionType(fieldType) && selection.selectionSet !== undefined) {
        childRole = { kind: "connection", limit: pageLimit(definition, selection, path) }
      }
    }
    cost += contribution

    if (selection.selectionSet === undefined) continue
    if (fieldDepth > maxDepth) {
      // Already too deep (reported above): walk no further down.
      truncated = true
      continue
    }
    enter({
      selectionSet: selection.selectionSet,
      parentType: fieldType,
      role: childRole,
      multiplier: childMultiplier,
      depth: fieldDepth,
      path,
      fragments: task.fragments
    })
  }

  return { cost, depth, fields: fieldCount, problems, truncated }
}
