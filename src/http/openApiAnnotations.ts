import { OpenApi } from "@effect/platform"
import { Context, Option, Schema, SchemaAST } from "effect"

/**
 * Annotations that make the HttpApi declarations the OpenAPI reference (GET /api/v1/openapi.json,
 * /docs; docs/openapi.md): what a field means, what an operation does, and an example of each
 * request and answer. They change nothing a request decodes to or an answer encodes to.
 */

/**
 * A field's description, put where the OpenAPI generator reads it. JSON Schema describes the
 * encoded side, so a description set on a refinement of a transformation (`Schema.Trim.pipe(
 * Schema.minLength(1))`, `Timestamp`) or on a filter the generator skips would be lost: it goes on
 * the node the generator renders instead. That node is never one the error messages read a
 * description from (src/domain/plainIssues.ts reads them from refinements the generator renders
 * itself and from declarations), so what a client is told on a bad value does not change.
 */
export const describe = (description: string) => <A, I, R>(schema: Schema.Schema<A, I, R>): Schema.Schema<A, I, R> => {
  const ast = described(schema.ast, description)
  return ast === undefined ? schema.annotations({ description }) : Schema.make(ast)
}

const annotate = (ast: SchemaAST.AST, description: string) => SchemaAST.annotations(ast, { [SchemaAST.DescriptionAnnotationId]: description })

const hasTransformationBelow = (ast: SchemaAST.AST): boolean =>
  SchemaAST.isTransformation(ast) || (SchemaAST.isRefinement(ast) && hasTransformationBelow(ast.from))

/** The refinement or transformation chain rebuilt with the rendered node described; undefined when the node itself is rendered. */
const described = (ast: SchemaAST.AST, description: string): SchemaAST.AST | undefined => {
  if (!SchemaAST.isRefinement(ast)) return undefined
  // A filter without JSON Schema of its own: the generator renders what it refines.
  if (Option.isNone(SchemaAST.getJSONSchemaAnnotation(ast))) {
    return new SchemaAST.Refinement(described(ast.from, description) ?? annotate(ast.from, description), ast.filter, ast.annotations)
  }
  // A built-in filter of a transformation: the generator renders the transformation's encoded side.
  if (hasTransformationBelow(ast.from)) return new SchemaAST.Refinement(encodedDescribed(ast.from, description), ast.filter, ast.annotations)
  return undefined
}

const encodedDescribed = (ast: SchemaAST.AST, description: string): SchemaAST.AST =>
  SchemaAST.isTransformation(ast)
    ? new SchemaAST.Transformation(annotate(ast.from, description), ast.to, ast.transformation, ast.annotations)
    : SchemaAST.isRefinement(ast)
    ? new SchemaAST.Refinement(encodedDescribed(ast.from, description), ast.filter, ast.annotations)
    : annotate(ast, description)

/** A named example (OpenAPI Example Object). */
export interface NamedExample {
  readonly summary: string
  readonly value: unknown
}

export interface OperationDoc {
  /** One line: what the operation does. */
  readonly summary: string
  /** Who may call it, what it does and what it answers; Markdown. */
  readonly description: string
  /** The JSON body a client sends, as an example (validated against the payload schema by test/http/openapi-reference.test.ts). */
  readonly request?: unknown
  /** Bodies of other content types, by content type (`text/csv`: a CSV file as text). */
  readonly requestBodies?: Readonly<Record<string, unknown>>
  /** The 2xx answer, as an example (validated against the success schema). */
  readonly response?: unknown
  /** Several 2xx answers of different shapes, by name. */
  readonly responses?: Readonly<Record<string, NamedExample>>
  /** What the 2xx answer is (the response's description). */
  readonly returns?: string
}

type Operation = Record<string, any>

const mediaExamples = (content: Record<string, any> | undefined, contentType: string, example: unknown, named?: Readonly<Record<string, NamedExample>>) => {
  const media = content?.[contentType]
  if (media === undefined) return
  if (named !== undefined) media.examples = structuredClone(named)
  else media.example = structuredClone(example)
}

/** Puts an OperationDoc's examples and answer description on the generated Operation Object. */
const withExamples = (doc: OperationDoc) => (operation: Operation): Operation => {
  const op = structuredClone(operation)
  const content = op.requestBody?.content as Record<string, any> | undefined
  if (doc.request !== undefined) mediaExamples(content, "application/json", doc.request)
  for (const [type, example] of Object.entries(doc.requestBodies ?? {})) mediaExamples(content, type, example)
  const success = Object.keys(op.responses ?? {}).find((status) => status.startsWith("2"))
  if (success !== undefined) {
    const answer = op.responses[success]
    if (doc.returns !== undefined) answer.description = doc.returns
    if (doc.response !== undefined || doc.responses !== undefined) mediaExamples(answer.content, "application/json", doc.response, doc.responses)
  }
  return op
}

/**
 * An operation's summary, description and examples, for `endpoint.annotateContext(…)`: the
 * declaration stays the one source of the reference.
 */
export const documented = (doc: OperationDoc): Context.Context<never> =>
  Context.empty().pipe(
    Context.add(OpenApi.Summary, doc.summary),
    Context.add(OpenApi.Description, doc.description),
    Context.add(OpenApi.Transform, withExamples(doc))
  ) as Context.Context<never>
