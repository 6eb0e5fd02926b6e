import {
  type ASTNode,
  coerceInputValue,
  type DocumentNode,
  getOperationAST,
  type GraphQLError,
  type GraphQLSchema,
  isInputType,
  isNonNullType,
  Kind,
  typeFromAST,
  visit
} from "graphql"
import { graphqlError } from "./errors.ts"

/** At most this many variable problems are reported (as many as validation's). */
const MAX_VARIABLE_ERRORS = 20

/**
 * Where each variable of the document is first used, as dotted argument and input field names:
 * `input` for `sendText(input: $input)`, `input.text` for `sendText(input: {to: $to, text: $text})`,
 * `page.limit` for `contacts(page: {limit: $n})`. The same names a resolver's refusal gives as
 * `field`, so a client reads one kind of path whether the value came inline or as a variable.
 */
const usagesOf = (document: DocumentNode): ReadonlyMap<string, string> => {
  const usages = new Map<string, string>()
  visit(document, {
    Variable(node, _key, parent, _path, ancestors) {
      const names: Array<string> = []
      // graphql-js's ancestors stop short of the parent.
      for (const ancestor of [...ancestors, parent]) {
        if (ancestor === undefined) continue
        if (Array.isArray(ancestor)) continue
        const at = ancestor as ASTNode
        // The variable's own definition is no use of it.
        if (at.kind === Kind.VARIABLE_DEFINITION) return
        if (at.kind === Kind.ARGUMENT || at.kind === Kind.OBJECT_FIELD) names.push(at.name.value)
      }
      if (!usages.has(node.name.value)) usages.set(node.name.value, names.join("."))
    }
  })
  return usages
}

/** A path inside a variable's value onto its use: object keys dotted, list positions as `[i]`. */
const joinPath = (base: string, path: ReadonlyArray<string | number>) =>
  path.reduce<string>((joined, step) => (typeof step === "number" ? `${joined}[${step}]` : joined === "" ? step : `${joined}.${step}`), base)

/** graphql-js names a missing or unknown input field in its message only; the path it reports is the object's. */
const NAMED_FIELD = /^Field "([^"]+)" (?:of required type .* was not provided\.|is not defined by type )/

/**
 * The operation's variables checked against their declared types, as graphql-js's execution would
 * coerce them, but with each problem a VALIDATION_ERROR whose message starts with the field it is
 * about and whose `field` is that path (`input.text`, `input.to`, `page.limit`): graphql-js's own
 * errors carry neither (an error raised before execution has no response `path`), and it answers
 * them without a code. Empty when every variable coerces; the operation must be valid.
 */
export const variableErrors = (
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | undefined,
  inputs: Record<string, unknown> | undefined
): ReadonlyArray<GraphQLError> => {
  const operation = getOperationAST(document, operationName)
  // No such operation: execution names it.
  if (operation === null || operation === undefined || operation.variableDefinitions === undefined || operation.variableDefinitions.length === 0) return []
  const errors: Array<GraphQLError> = []
  let usages: ReadonlyMap<string, string> | undefined
  const refuse = (variable: string, path: ReadonlyArray<string | number>, message: string) => {
    if (errors.length >= MAX_VARIABLE_ERRORS) return
    usages ??= usagesOf(document)
    const field = joinPath(usages.get(variable) || variable, path)
    errors.push(graphqlError("VALIDATION_ERROR", `${field}: ${message} (variable $${variable})`, { field }))
  }
  for (const definition of operation.variableDefinitions) {
    const name = definition.variable.name.value
    const type = typeFromAST(schema, definition.type)
    // Validation refused unknown and non-input types already.
    if (type === undefined || !isInputType(type)) continue
    if (inputs === undefined || !Object.hasOwn(inputs, name)) {
      if (definition.defaultValue === undefined && isNonNullType(type)) refuse(name, [], `is required (a ${String(type)}) and was not given`)
      continue
    }
    const value = inputs[name]
    if (value === null && isNonNullType(type)) {
      refuse(name, [], `must not be null (a ${String(type)})`)
      continue
    }
    coerceInputValue(value, type, (path, _invalid, error) => {
      const named = NAMED_FIELD.exec(error.message)?.[1]
      refuse(name, named === undefined ? path : [...path, named], error.message)
    })
  }
  return errors
}
