import { describe, expect, it } from "@effect/vitest"
import { responseMediaOf } from "../../src/graphql/responseMedia.ts"

// The answer's media type from Accept (GraphQL over HTTP): graphql-response+json when preferred.

const GQL = "application/graphql-response+json"
const JSON_TYPE = "application/json"

describe("responseMediaOf", () => {
  it.each([
    [undefined, JSON_TYPE],
    ["", JSON_TYPE],
    [GQL, GQL],
    [`${GQL}, ${JSON_TYPE}`, GQL], // graphql-http's client
    [`${GQL},${JSON_TYPE};q=0.9`, GQL], // Apollo Client
    [`${JSON_TYPE}, ${GQL}`, JSON_TYPE],
    [`${JSON_TYPE};q=0.5, ${GQL}`, GQL],
    [`${GQL};q=0.5, ${JSON_TYPE}`, JSON_TYPE],
    ["*/*", JSON_TYPE],
    ["application/*", JSON_TYPE],
    [`*/*, ${GQL}`, GQL],
    [`${JSON_TYPE};q=0, */*`, GQL],
    [`${GQL};q=0`, JSON_TYPE],
    ["text/html", JSON_TYPE],
    [`TEXT/HTML, ${GQL.toUpperCase()}`, GQL]
  ] as const)("Accept %j → %s", (accept, expected) => {
    expect(responseMediaOf(accept)).toBe(expected)
  })
})
