import { describe, expect, it } from "@effect/vitest"
import { execute, parse } from "graphql"
import { makeExecutableSchema } from "../../src/graphql/executableSchema.ts"
import { withCodes } from "../../src/graphql/operations.ts"
import { variableErrors } from "../../src/graphql/variables.ts"

// Variables that do not coerce are the client's mistake: VALIDATION_ERROR, the message starting
// with the field and `field` its input path as dotted argument names (shared/design/graphql.md,
// Errors), like the resolvers' own refusals (`input.to`). graphql-js alone answers them uncoded,
// which Herald used to turn into INTERNAL "internal error".

const schema = makeExecutableSchema()
const SEND = `mutation($input: SendTextInput!) { sendText(input: $input) { message_id } }`
const errorsOf = (query: string, variables: Record<string, unknown> | undefined, operationName?: string) =>
  variableErrors(schema, parse(query), operationName, variables).map((e) => ({ message: e.message, extensions: e.extensions }))

describe("variableErrors", () => {
  it("an input object missing a required field names that field", () => {
    expect(errorsOf(SEND, { input: { to: "919876600001" } })).toEqual([{
      message: `input.text: Field "text" of required type "String!" was not provided. (variable $input)`,
      extensions: { code: "VALIDATION_ERROR", field: "input.text" }
    }])
  })

  it("a number where a String is declared, inside an input object or as a variable of its own", () => {
    expect(errorsOf(SEND, { input: { to: 919876600001, text: "hi" } })).toEqual([{
      message: "input.to: String cannot represent a non string value: 919876600001 (variable $input)",
      extensions: { code: "VALIDATION_ERROR", field: "input.to" }
    }])
    // The variable's use gives the path: $text is input.text.
    const inline = `mutation($to: String!, $text: String!) { sendText(input: {to: $to, text: $text}) { message_id } }`
    expect(errorsOf(inline, { to: "919876600001", text: 5 }).map((e) => e.extensions)).toEqual([{ code: "VALIDATION_ERROR", field: "input.text" }])
  })

  it("a missing or null required variable, a list item, a nested page limit, an unknown input field, a bad enum", () => {
    expect(errorsOf(SEND, {}).map((e) => e.extensions.field)).toEqual(["input"])
    expect(errorsOf(SEND, { input: null })[0]!.message).toBe("input: must not be null (a SendTextInput!) (variable $input)")
    const tags = `mutation($c: ID!, $t: [String!]!) { addTags(contactId: $c, tags: $t) { id } }`
    expect(errorsOf(tags, { c: "x", t: ["a", 5] }).map((e) => e.extensions.field)).toEqual(["tags[1]"])
    expect(errorsOf(`query($n: Int) { contacts(page: {limit: $n}) { edges { node { id } } } }`, { n: "ten" }).map((e) => e.extensions.field)).toEqual(["page.limit"])
    expect(errorsOf(`query($p: PageInput) { contacts(page: $p) { edges { node { id } } } }`, { p: { limit: 1.5 } }).map((e) => e.extensions.field)).toEqual(["page.limit"])
    expect(errorsOf(SEND, { input: { to: "1", text: "x", txet: "y" } }).map((e) => e.extensions.field)).toEqual(["input.txet"])
    expect(errorsOf(`query($s: ConversationStatus) { conversations(filter: {status: $s}) { edges { node { id } } } }`, { s: "open" })
      .map((e) => e.extensions.field)).toEqual(["filter.status"])
  })

  it("none when every variable coerces, for the named operation only", () => {
    expect(errorsOf(SEND, { input: { to: "919876600001", text: "hi" } })).toEqual([])
    const two = `query A($n: Int) { contacts(page: {limit: $n}) { edges { node { id } } } } query B { me { label } }`
    expect(errorsOf(two, { n: "ten" }, "B")).toEqual([])
    expect(errorsOf(two, { n: "ten" }, "A")).toHaveLength(1)
  })
})

describe("withCodes", () => {
  it("graphql-js's own variable coercion errors (execution without Herald's check) are VALIDATION_ERROR, not INTERNAL", async () => {
    const result = withCodes(await execute({ schema, document: parse(SEND), variableValues: { input: { to: 5 } }, contextValue: {} }))
    expect(result.data).toBeUndefined()
    expect(result.errors!.length).toBeGreaterThan(0)
    expect(result.errors!.map((e) => e.extensions.code)).toEqual(result.errors!.map(() => "VALIDATION_ERROR"))
  })
})
