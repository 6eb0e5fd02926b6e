import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { firstUnstorable, storableText, unstorableText } from "../../src/domain/storable.ts"
import { isJsonContentType, nestsDeeperThan, readJsonBody } from "../../src/http/requestBody.ts"

const depthOf = (value: unknown): number =>
  typeof value === "object" && value !== null ? 1 + Math.max(0, ...Object.values(value).map(depthOf)) : 0

describe("what can be stored", () => {
  it("refuses NUL and unpaired surrogates, takes any other text", () => {
    expect(unstorableText("a\u0000b")).toContain("NUL")
    expect(unstorableText("a\ud800")).toContain("surrogate")
    expect(unstorableText("\udc00a")).toContain("surrogate")
    for (const ok of ["", "plain", "😀 emoji (a surrogate pair)", "\u202e right-to-left", "\u0001\u001f controls", "𝔘𝔫𝔦"]) expect(unstorableText(ok), ok).toBeUndefined()
  })

  it("names the first value that cannot be stored, keys included, and nesting past the limit", () => {
    expect(firstUnstorable({ a: [1, { b: "x\u0000" }] })).toEqual({ path: "a.1.b", message: expect.stringContaining("NUL") })
    expect(firstUnstorable({ a: { ["k\ud800"]: 1 } })).toEqual({ path: "a", message: expect.stringContaining("key") })
    expect(firstUnstorable({ a: [[[1]]] }, 3)).toEqual({ path: "a.0.0", message: "nests deeper than 3 levels" })
    expect(firstUnstorable({ a: [[1]] }, 3)).toBeUndefined()
    let deep: unknown = "x\u0000"
    for (let i = 0; i < 100_000; i++) deep = [deep]
    expect(firstUnstorable(deep, Number.MAX_SAFE_INTEGER)?.message).toContain("NUL")
  })

  it("makes text storable by escaping NUL and replacing unpaired surrogates", () => {
    expect(storableText("a\u0000b\ud800")).toBe("a\\u0000b\ufffd")
    fc.assert(fc.property(fc.string({ unit: "binary" }), (s) => unstorableText(storableText(s)) === undefined))
  })
})

describe("JSON bodies", () => {
  it("measures nesting exactly as the parsed value has it, strings with brackets included", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 9 }), (value, max) =>
        nestsDeeperThan(JSON.stringify(value), max) === depthOf(value) > max
      )
    )
    expect(nestsDeeperThan(JSON.stringify({ s: "[[[[{{{{\\\"" }), 1)).toBe(false)
  })

  it("reads a body: parsed, or why not", () => {
    expect(readJsonBody(`{"a": [1, "x"]}`)).toEqual({ _tag: "Json", value: { a: [1, "x"] } })
    expect(readJsonBody(`{"a": `)._tag).toBe("Unreadable")
    expect(readJsonBody(`{"a": "\\u0000"}`)).toMatchObject({ _tag: "Unstorable", issue: { path: "a" } })
    expect(readJsonBody("[".repeat(100) + "]".repeat(100))).toMatchObject({ _tag: "Unstorable", issue: { path: "" } })
  })

  it("takes JSON in UTF-8 only", () => {
    for (const ok of [undefined, "", "application/json", "Application/JSON; charset=UTF-8", "application/json;charset=\"utf8\""]) expect(isJsonContentType(ok), ok).toBe(true)
    for (const bad of ["text/plain", "multipart/form-data", "application/json; charset=latin1", "application/jsonx", "application/x-www-form-urlencoded"]) {
      expect(isJsonContentType(bad), bad).toBe(false)
    }
  })
})
