import { HttpApi } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Either, Option, ParseResult, Schema } from "effect"
import { plainIssues } from "../../src/domain/plainIssues.ts"
import { Email } from "../../src/domain/identity.ts"
import { Timestamp } from "../../src/domain/timestamps.ts"
import { HeraldApi } from "../../src/http/Api.ts"
import { describe as described } from "../../src/http/openApiAnnotations.ts"
import { openApiDocument } from "../../src/http/openApiDocument.ts"

// The OpenAPI document is Herald's API reference (docs/openapi.md). These checks keep it one: a
// new operation, field or error without its description, or an example the schema no longer
// takes, fails here rather than reaching the reference.

type Json = Record<string, any>
const doc = openApiDocument() as unknown as Json

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]

/** Every operation: the paths' and the webhooks'. */
const operations = (): Array<{ readonly where: string; readonly op: Json; readonly webhook: boolean }> =>
  [...Object.entries<Json>(doc.paths).map(([path, item]) => [path, item, false] as const), ...Object.entries<Json>(doc.webhooks ?? {}).map(([name, item]) => [`webhook ${name}`, item, true] as const)]
    .flatMap(([path, item, webhook]) =>
      Object.entries<Json>(item).filter(([method]) => METHODS.includes(method)).map(([method, op]) => ({ where: `${method.toUpperCase()} ${path}`, op, webhook }))
    )

const resolve = (schema: Json | undefined): Json | undefined =>
  typeof schema?.$ref === "string" ? doc.components.schemas[schema.$ref.split("/").pop()!] : schema

/**
 * Descriptions Effect's schemas give themselves ("a string at most 64 character(s) long", "an
 * integer"): they say the type, not what the field means, so they do not count.
 */
const GENERATED = [
  /character\(s\)/,
  /item\(s\)/,
  /^an? (string|number|integer|array|positive|negative|non-negative|non-positive|finite|trimmed|lowercase|uppercase|valid|non empty|template literal)\b/,
  /^a Universally Unique Identifier$/,
  /^a number (between|greater|less)/,
  /^an? (string|number) (to be decoded|that will be)/,
  /^a date$/
]
const meaningful = (description: unknown) => typeof description === "string" && description.trim().length > 0 && !GENERATED.some((re) => re.test(description))

/** Every schema property of the document (operations, components, webhooks) without a description of its own meaning. */
const undescribedProperties = () => {
  const missing: Array<string> = []
  const seen = new Set<unknown>()
  const walk = (node: unknown, where: string): void => {
    if (typeof node !== "object" || node === null || seen.has(node)) return
    seen.add(node)
    if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${where}/${i}`))
    for (const [key, value] of Object.entries(node as Json)) {
      if (key === "example" || key === "examples") continue
      if (key === "properties" && typeof value === "object" && value !== null && !("type" in value && typeof value.type === "string")) {
        for (const [name, property] of Object.entries<Json>(value)) {
          if (!meaningful(property.description) && !meaningful(resolve(property)?.description)) missing.push(`${where}/properties/${name}`)
        }
      }
      walk(value, `${where}/${key}`)
    }
  }
  walk(doc.paths, "#/paths")
  walk(doc.components.schemas, "#/components/schemas")
  walk(doc.webhooks, "#/webhooks")
  return missing
}

/** The object schemas a response's body may be (through $ref and anyOf). */
const bodies = (schema: Json | undefined): Array<Json> => {
  const resolved = resolve(schema)
  if (resolved === undefined) return []
  return Array.isArray(resolved.anyOf) ? resolved.anyOf.flatMap(bodies) : Array.isArray(resolved.oneOf) ? resolved.oneOf.flatMap(bodies) : [resolved]
}

describe("the OpenAPI reference", () => {
  it("has a summary and a description on every operation, webhooks included", () => {
    const ops = operations()
    expect(ops.length).toBeGreaterThan(100)
    const missing = ops.flatMap(({ where, op }) => [
      ...(meaningful(op.summary) ? [] : [`${where}: summary`]),
      ...(meaningful(op.description) ? [] : [`${where}: description`])
    ])
    expect(missing).toEqual([])
  })

  it("describes every tag and security scheme", () => {
    expect(doc.tags.filter((tag: Json) => !meaningful(tag.description)).map((tag: Json) => tag.name)).toEqual([])
    const schemes = Object.entries<Json>(doc.components.securitySchemes)
    expect(schemes.map(([name]) => name).sort()).toEqual(["bearer", "partnerKey", "secretKey", "secretKeyBasic"])
    expect(schemes.filter(([, scheme]) => !meaningful(scheme.description)).map(([name]) => name)).toEqual([])
  })

  it("describes every parameter", () => {
    const missing = operations().flatMap(({ where, op }) =>
      (op.parameters ?? []).filter((p: Json) => !meaningful(p.description) && !meaningful(resolve(p.schema)?.description)).map((p: Json) => `${where}: ${p.in} ${p.name}`)
    )
    expect(missing).toEqual([])
  })

  it("describes every field of every schema", () => {
    expect(undescribedProperties()).toEqual([])
  })

  it("documents each error response's code: {success: false, code, message}, the code a constant, named in the response's description", () => {
    const problems: Array<string> = []
    for (const { where, op, webhook } of operations()) {
      // A webhook's 4xx and 5xx are the consumer's answers, which Herald reads only as failures.
      if (webhook) continue
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        if (!/^[45]/.test(status)) continue
        const schemas = bodies(response.content?.["application/json"]?.schema)
        if (schemas.length === 0) problems.push(`${where} ${status}: no JSON body`)
        for (const schema of schemas) {
          const code = schema.properties?.code
          const codes: Array<unknown> = code?.const !== undefined ? [code.const] : code?.enum ?? []
          if (codes.length !== 1 || typeof codes[0] !== "string") {
            problems.push(`${where} ${status}: code is not a constant`)
            continue
          }
          if (!schema.required?.includes("code") || !schema.required?.includes("message")) problems.push(`${where} ${status}: code and message not required`)
          if (schema.properties?.success?.enum?.[0] !== false) problems.push(`${where} ${status} ${codes[0]}: success is not false`)
          if (!meaningful(schema.description)) problems.push(`${where} ${status} ${codes[0]}: the error is not described`)
          if (!String(response.description).includes(`\`${codes[0]}\``)) problems.push(`${where} ${status}: the description does not name ${codes[0]}`)
        }
      }
    }
    expect(problems).toEqual([])
  })

  it("has an example of every request body and of every 2xx answer", () => {
    const missing: Array<string> = []
    for (const { where, op } of operations()) {
      for (const [type, media] of Object.entries<Json>(op.requestBody?.content ?? {})) {
        if (media.example === undefined && media.examples === undefined) missing.push(`${where}: request ${type}`)
      }
      for (const [status, response] of Object.entries<Json>(op.responses)) {
        if (!/^2/.test(status)) continue
        for (const [type, media] of Object.entries<Json>(response.content ?? {})) {
          if (media.example === undefined && media.examples === undefined) missing.push(`${where}: ${status} ${type}`)
        }
      }
    }
    expect(missing).toEqual([])
  })

  it("has examples that the operations' own schemas take: requests decode, answers are what the handlers' answers encode to", () => {
    const problems: Array<string> = []
    const check = (what: string, ast: Schema.Schema.AnyNoContext["ast"], example: unknown) => {
      const result = Schema.decodeUnknownEither(Schema.make(ast), { onExcessProperty: "error", errors: "all" })(example)
      if (Either.isLeft(result)) problems.push(`${what}: ${ParseResult.TreeFormatter.formatErrorSync(result.left)}`)
    }
    const valuesOf = (media: Json | undefined): Array<unknown> =>
      media === undefined ? [] : media.examples !== undefined ? Object.values<Json>(media.examples).map((e) => e.value) : media.example !== undefined ? [media.example] : []
    HttpApi.reflect(HeraldApi, {
      onGroup() {},
      onEndpoint({ endpoint, payloads, successes }) {
        const path = endpoint.path.replace(/:(\w+)\??/g, "{$1}")
        const op = doc.paths[path]?.[endpoint.method.toLowerCase()] as Json | undefined
        if (op === undefined) return
        const where = `${endpoint.method} ${path}`
        for (const [type, payload] of payloads) {
          for (const example of valuesOf(op.requestBody?.content?.[type])) check(`${where} request ${type}`, payload.ast, example)
        }
        for (const [status, success] of successes) {
          if (Option.isNone(success.ast)) continue
          for (const example of valuesOf(op.responses?.[status]?.content?.["application/json"])) check(`${where} ${status}`, success.ast.value, example)
        }
      }
    })
    expect(problems).toEqual([])
  })

  it("describes a field without changing what a client is told about a bad value", () => {
    const custom = Schema.String.pipe(Schema.filter((s) => s.length > 0))
    const cases: ReadonlyArray<readonly [Schema.Schema<any, any>, ReadonlyArray<unknown>]> = [
      [custom, ["", 1]],
      [Email, ["x", 1, "a".repeat(300)]],
      [Timestamp, ["tomorrow", 3, "0000-01-01"]],
      [Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(5)), [" ", "abcdefgh", 2]],
      [Schema.NumberFromString.pipe(Schema.int(), Schema.positive()), ["x", "-1", "1.5"]],
      [Schema.Redacted(Schema.String.pipe(Schema.maxLength(3))), ["abcd", 1]],
      [Schema.UUID, ["x"]],
      [Schema.Int, [1.5, "x"]],
      [Schema.Literal("a", "b"), ["c"]],
      [Schema.Array(Schema.String).pipe(Schema.minItems(1)), [[], [1]]]
    ]
    for (const [schema, values] of cases) {
      for (const value of values) {
        const told = (s: Schema.Schema<any, any>) => {
          const result = Schema.decodeUnknownEither(Schema.Struct({ field: s }))({ field: value })
          return Either.isLeft(result) ? plainIssues(result.left) : []
        }
        const before = told(schema)
        expect(before.length).toBeGreaterThan(0)
        expect(told(schema.pipe(described("what the field means")))).toEqual(before)
      }
    }
  })

  // Issue 34: `limit` was typed string (the wire text of NumberFromString), which broke generated clients.
  it("types a query parameter as what it decodes to: every limit an integer with its bounds", () => {
    const limits = operations().filter(({ webhook }) => !webhook).flatMap(({ where, op }) =>
      ((op.parameters ?? []) as Array<Json>).filter((p) => p.in === "query" && p.name === "limit").map((p) => ({ where, schema: p.schema as Json })))
    expect(limits.length).toBeGreaterThan(20)
    for (const { where, schema } of limits) {
      expect({ where, type: schema.type, minimum: schema.minimum }).toEqual({ where, type: "integer", minimum: 1 })
    }
    const partner = doc.paths["/api/v1/partner/email/identities"].get.parameters.find((p: Json) => p.name === "limit").schema
    expect(partner).toMatchObject({ type: "integer", minimum: 1, maximum: 1000 })
  })
})
