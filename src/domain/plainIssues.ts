import { Effect, Option, type ParseResult, SchemaAST } from "effect"

/**
 * Schema's decode failures as sentences a person can act on: each names its field and says what
 * the field must be ("must be an ISO 8601 date-time", "is required", "must be one of "a", "b""),
 * instead of Schema's own text ("Expected undefined, actual \"tomorrow\"", a type signature for a
 * body that is not an object). Messages set on a schema with `message` annotations are kept.
 */

export interface PlainIssue {
  readonly path: string
  readonly message: string
}

/** Every problem of a decode failure, one per field, in the order Schema found them. */
export const plainIssues = (error: ParseResult.ParseError | ParseResult.ParseIssue): Array<PlainIssue> => {
  const out: Array<PlainIssue> = []
  const seen = new Set<string>()
  walk("issue" in error && error._tag === "ParseError" ? error.issue : (error as ParseResult.ParseIssue), [], undefined, (path, message) => {
    const key = `${path.join(".")}\u0000${message}`
    if (seen.has(key)) return
    seen.add(key)
    out.push({ path: path.join("."), message })
  })
  return out
}

/** The issues of a decode failure, with the sentence that sums them up. */
export const describeParseError = (error: ParseResult.ParseError) => {
  const errors = plainIssues(error)
  return { message: errors.map(sentenceOf).join("; ") || "the request is not valid", errors }
}

/** A field's problem as one sentence: "scheduled_at must be …", or the body's. */
export const sentenceOf = (issue: PlainIssue) => issue.path === "" ? `the body ${issue.message}` : `${issue.path} ${issue.message}`

type Emit = (path: ReadonlyArray<PropertyKey>, message: string) => void

const walk = (issue: ParseResult.ParseIssue, path: ReadonlyArray<PropertyKey>, parent: SchemaAST.AST | undefined, emit: Emit): void => {
  switch (issue._tag) {
    case "Pointer": {
      const at = Array.isArray(issue.path) ? issue.path : [issue.path]
      return walk(issue.issue, [...path, ...at], parent, emit)
    }
    case "Missing":
      return emit(path, annotated(issue.ast as unknown as SchemaAST.AST, issue) ?? "is required")
    case "Unexpected":
      return emit(path, unexpected(parent))
    case "Forbidden":
      return emit(path, "could not be checked")
    case "Type": {
      const own = annotated(issue.ast, issue) ?? issue.message
      if (own !== undefined) return emit(path, own)
      const literals = literalChoices(issue.ast)
      if (literals !== undefined) return emit(path, `must be one of ${literals}${actualOf(issue.actual, path)}`)
      return emit(path, `must be ${expected(issue.ast)}${actualOf(issue.actual, path)}`)
    }
    case "Refinement": {
      const own = annotated(issue.ast, issue)
      if (issue.kind === "From") return walk(issue.issue, path, parent, emit)
      // A filter that returns a string (or an issue) says itself what is wrong.
      const said = issue.issue._tag === "Type" ? issue.issue.message : undefined
      if (own !== undefined || said !== undefined) return emit(path, (own ?? said)!)
      const rule = refinementRule(issue.ast)
      // A length or count rule is about the whole value: repeating it back says nothing more.
      return emit(path, / long$|items?$/.test(rule) || rule === NOT_EMPTY ? rule : `${rule}${actualOf(issue.actual, path)}`)
    }
    case "Transformation": {
      const own = annotated(issue.ast, issue)
      if (own !== undefined && issue.kind !== "Encoded") return emit(path, own)
      return walk(issue.issue, path, parent, emit)
    }
    case "Composite": {
      const issues = Array.isArray(issue.issues) ? issue.issues : [issue.issues as ParseResult.ParseIssue]
      if (SchemaAST.isUnion(issue.ast)) return union(issue, issues, path, emit)
      const own = annotated(issue.ast, issue)
      if (own !== undefined) return emit(path, own)
      for (const inner of issues) walk(inner, path, issue.ast, emit)
      return
    }
  }
}

/**
 * A union's failure. Members that could not have been meant are dropped (`undefined` of an
 * optional field, `null` of a nullable one); what is left is either one member, whose own problem
 * is the answer, or a choice: literals become "must be one of …", anything else "must be A or B".
 */
const union = (
  issue: ParseResult.Composite,
  issues: ReadonlyArray<ParseResult.ParseIssue>,
  path: ReadonlyArray<PropertyKey>,
  emit: Emit
) => {
  const own = annotated(issue.ast, issue)
  if (own !== undefined) return emit(path, own)
  const members = issues.filter((member) => !(member._tag === "Type" && isAbsence(member.ast)))
  if (members.length === 1) return walk(members[0]!, path, issue.ast, emit)
  // A member that got past its top-level type (a struct whose field failed) is the one meant.
  const deeper = members.filter((member) => member._tag !== "Type")
  if (deeper.length === 1) return walk(deeper[0]!, path, issue.ast, emit)
  const literals = literalChoices(issue.ast)
  if (literals !== undefined) return emit(path, `must be one of ${literals}${actualOf(issue.actual, path)}`)
  return emit(path, `must be ${expected(issue.ast)}${actualOf(issue.actual, path)}`)
}

/** A union of literals (an enum) as `"a", "b"`; undefined for any other schema. */
const literalChoices = (ast: SchemaAST.AST): string | undefined => {
  if (!SchemaAST.isUnion(ast)) return undefined
  const choices = ast.types.filter((member) => !isAbsence(member))
  if (choices.length === 0 || !choices.every(SchemaAST.isLiteral)) return undefined
  return choices.map((c) => JSON.stringify((c as SchemaAST.Literal).literal)).join(", ")
}

const isAbsence = (ast: SchemaAST.AST) => SchemaAST.isUndefinedKeyword(ast) || (SchemaAST.isLiteral(ast) && ast.literal === null)

/** A schema's own message (a `message` annotation), as Schema's formatters would use it. */
const annotated = (ast: SchemaAST.AST, issue: ParseResult.ParseIssue): string | undefined => {
  const annotation = Option.getOrUndefined(SchemaAST.getMessageAnnotation(ast))
  if (annotation === undefined) return undefined
  const result = annotation(issue)
  const value = typeof result === "object" && result !== null && "message" in result ? result.message : result
  if (typeof value === "string") return value
  return Effect.isEffect(value) ? Effect.runSync(value as Effect.Effect<string>) : undefined
}

/** What a schema takes, as a noun phrase: "a string", "an object", "true or false". */
const expected = (ast: SchemaAST.AST): string => {
  switch (ast._tag) {
    case "StringKeyword":
    case "TemplateLiteral":
      return "a string"
    case "NumberKeyword":
      return "a number"
    case "BooleanKeyword":
      return "true or false"
    case "BigIntKeyword":
      return "an integer"
    case "TypeLiteral":
    case "ObjectKeyword":
      return "a JSON object"
    case "TupleType":
      return ast.elements.length === 0 && ast.rest.length > 0 ? "an array" : "an array of the right length"
    case "Literal":
      return JSON.stringify(ast.literal)
    case "UndefinedKeyword":
    case "VoidKeyword":
      return "absent"
    case "Enums":
      return `one of ${ast.enums.map(([, value]) => JSON.stringify(value)).join(", ")}`
    case "Union":
      return [...new Set(ast.types.filter((t) => !isAbsence(t)).map(expected))].join(" or ")
    case "Refinement":
      return expected(ast.from)
    case "Transformation":
      return expected(ast.from)
    case "Suspend":
      return expected(ast.f())
    case "Declaration":
      return Option.getOrUndefined(SchemaAST.getDescriptionAnnotation(ast)) ?? Option.getOrUndefined(SchemaAST.getIdentifierAnnotation(ast)) ?? "a value of another form"
    default:
      return "a value of another form"
  }
}

const NOT_EMPTY = "must not be empty"

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`

/** The rule a refinement checks, as "must …", from what Schema's filters record about themselves. */
const refinementRule = (ast: SchemaAST.Refinement): string => {
  const json = Option.getOrUndefined(SchemaAST.getJSONSchemaAnnotation(ast)) as Record<string, unknown> | undefined
  if (json !== undefined) {
    const text = SchemaAST.isStringKeyword(base(ast))
    if (typeof json.minLength === "number") {
      return json.minLength === 1 ? NOT_EMPTY : `must be at least ${plural(json.minLength, "character")} long`
    }
    if (typeof json.maxLength === "number") return `must be at most ${plural(json.maxLength, "character")} long`
    if (typeof json.minItems === "number") {
      return json.minItems === 1 ? "must have at least one item" : `must have at least ${plural(json.minItems, "item")}`
    }
    if (typeof json.maxItems === "number") return `must have at most ${plural(json.maxItems, "item")}`
    if (typeof json.minimum === "number" && typeof json.maximum === "number") return `must be from ${json.minimum} to ${json.maximum}`
    if (typeof json.minimum === "number") return `must be ${json.minimum} or more`
    if (typeof json.maximum === "number") return `must be ${json.maximum} or less`
    if (typeof json.exclusiveMinimum === "number") return `must be more than ${json.exclusiveMinimum}`
    if (typeof json.exclusiveMaximum === "number") return `must be less than ${json.exclusiveMaximum}`
    if (json.type === "integer") return "must be a whole number"
    if (json.format === "uuid" || Option.getOrUndefined(SchemaAST.getIdentifierAnnotation(ast)) === "UUID") {
      return "must be a UUID, such as 0b5e8f3c-2d1a-4c6e-9f7b-1a2b3c4d5e6f"
    }
    if (text && typeof json.pattern === "string") return `must match the pattern ${json.pattern}`
  }
  const description = Option.getOrUndefined(SchemaAST.getDescriptionAnnotation(ast))
  return description !== undefined ? `must be ${description}` : `must be ${expected(ast.from)} of the accepted form`
}

const base = (ast: SchemaAST.AST): SchemaAST.AST => SchemaAST.isRefinement(ast) ? base(ast.from) : ast

/** The fields an object takes, for a field it does not. */
const unexpected = (parent: SchemaAST.AST | undefined) => {
  const keys = parent !== undefined && SchemaAST.isTypeLiteral(parent) ? parent.propertySignatures.map((p) => String(p.name)) : []
  if (keys.length === 0) return "is not a field this request takes"
  const shown = keys.length > 15 ? `${keys.slice(0, 15).join(", ")}, …` : keys.join(", ")
  return `is not a field this request takes (it takes ${shown})`
}

// Values of fields like these are never repeated back (error bodies end up in logs).
const SECRET_FIELD = /pass|secret|token|key|code|otp|credential|authorization/i

/** ", not <what was sent>": short values as sent, others by their kind. */
const actualOf = (actual: unknown, path: ReadonlyArray<PropertyKey>): string => {
  if (actual === undefined) return ""
  if (actual === null) return ", not null"
  const secret = path.some((key) => typeof key === "string" && SECRET_FIELD.test(key))
  switch (typeof actual) {
    case "string":
      return secret || actual.length > 40 ? "" : `, not ${JSON.stringify(actual)}`
    case "number":
    case "boolean":
      return secret ? ` (a ${typeof actual} was sent)` : `, not ${String(actual)}`
    case "object":
      return Array.isArray(actual) ? ", not an array" : ", not an object"
    default:
      return ""
  }
}
