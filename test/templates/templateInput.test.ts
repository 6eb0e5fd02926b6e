import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { contentOf } from "../../src/templates/templateInput.ts"

describe("template body → content", () => {
  it("takes the field named by type, with the message suggestions", () => {
    const suggestions = [{ type: "reply" as const, text: "Yes" }]
    expect(contentOf({ type: "text", text: "Hello", suggestions })).toEqual(Either.right({ type: "text", text: "Hello", suggestions }))
    expect(contentOf({ type: "rich_card", rich_card: { title: "T" }, suggestions: [] })).toEqual(
      Either.right({ type: "rich_card", rich_card: { title: "T" }, suggestions: [] })
    )
    expect(contentOf({ type: "carousel", carousel: { cards: [{ title: "a" }, { title: "b" }] }, suggestions: [] })).toEqual(
      Either.right({ type: "carousel", carousel: { cards: [{ title: "a" }, { title: "b" }] }, suggestions: [] })
    )
  })

  it("names the missing field and every field that must be absent", () => {
    const result = contentOf({ type: "rich_card", text: "Hello", carousel: { cards: [] }, suggestions: [] })
    if (Either.isRight(result)) throw new Error("expected a refusal")
    const error = result.left
    expect(error.errors.map((e) => `${e.path}: ${e.message}`)).toEqual([
      "text: must be absent when type is rich_card",
      "rich_card: is required when type is rich_card",
      "carousel: must be absent when type is rich_card"
    ])
    // The message says it in sentences, each naming its field.
    expect(error.message).toContain("rich_card is required when type is rich_card")
  })
})
