import { describe, expect, it } from "@effect/vitest"
import { byPrecedence, matches, normalize, pickRule, replyOf } from "../../src/autoReplies/rules.ts"

const rule = (ruleId: string, match: "exact" | "contains", keyword: string, createdAt: string, active = true) => ({ ruleId, match, keyword, active, createdAt })

describe("matching", () => {
  it("exact: the whole text equals the keyword, whatever the case and the surrounding whitespace", () => {
    expect(matches("exact", "Hours", "hours")).toBe(true)
    expect(matches("exact", "hours", "  HOURS \n")).toBe(true)
    expect(matches("exact", "  opening hours ", "Opening Hours")).toBe(true)
    expect(matches("exact", "hours", "hours?")).toBe(false)
    expect(matches("exact", "hours", "opening hours")).toBe(false)
    // Inner whitespace is part of the keyword.
    expect(matches("exact", "opening hours", "opening  hours")).toBe(false)
    expect(matches("exact", "opening hours", "openinghours")).toBe(false)
  })

  it("contains: the keyword anywhere in the text, case-insensitively", () => {
    expect(matches("contains", "price", "What is the PRICE of this?")).toBe(true)
    expect(matches("contains", "price", "price")).toBe(true)
    expect(matches("contains", " price ", "pricey")).toBe(true)
    expect(matches("contains", "price", "pric e")).toBe(false)
    expect(matches("contains", "price", "")).toBe(false)
  })

  it("compares Unicode-normalized text: composed and decomposed accents, full-width letters, non-ASCII case", () => {
    expect(matches("exact", "café", "CAFE\u0301")).toBe(true)
    expect(matches("exact", "hi", "ＨＩ")).toBe(true)
    expect(matches("contains", "straße", "Die STRASSE")).toBe(true)
    expect(matches("exact", "ΟΔΟΣ", "οδος")).toBe(true)
    expect(matches("exact", "ΟΔΟΣ", "οδoς")).toBe(false)
    expect(matches("exact", "привет", "ПРИВЕТ")).toBe(true)
    expect(normalize("  Ｈello\t")).toBe("hello")
  })

  it("an empty keyword never matches (the API refuses one; a stored one must not fire on everything)", () => {
    expect(matches("contains", "   ", "anything")).toBe(false)
    expect(matches("exact", "", "")).toBe(false)
  })
})

describe("which rule fires", () => {
  const rules = [
    rule("c-old", "contains", "order", "2025-01-01T00:00:00Z"),
    rule("e-new", "exact", "order status", "2025-03-01T00:00:00Z"),
    rule("e-old", "exact", "ORDER STATUS", "2025-02-01T00:00:00Z"),
    rule("c-new", "contains", "status", "2025-04-01T00:00:00Z"),
    rule("off", "exact", "order status", "2024-01-01T00:00:00Z", false)
  ]

  it("exact rules come before contains rules, then the oldest first; inactive rules never fire", () => {
    expect(pickRule(rules, "Order status")?.ruleId).toBe("e-old")
    expect(pickRule(rules, "my order status?")?.ruleId).toBe("c-old")
    expect(pickRule(rules, "status please")?.ruleId).toBe("c-new")
    expect(pickRule(rules, "hello")).toBeUndefined()
    expect(pickRule([rules[4]!], "order status")).toBeUndefined()
  })

  it("the order is total: same kind and time are ordered by rule id", () => {
    const a = rule("a", "contains", "x", "2025-01-01T00:00:00Z")
    const b = rule("b", "contains", "x", "2025-01-01T00:00:00Z")
    expect([b, a].sort(byPrecedence).map((r) => r.ruleId)).toEqual(["a", "b"])
    expect(pickRule([b, a], "x")?.ruleId).toBe("a")
    // Dates as Date objects (what the repository reads) order the same way.
    const c = { ...rule("c", "contains", "x", ""), createdAt: new Date("2024-01-01T00:00:00Z") }
    expect(pickRule([a, c], "x")?.ruleId).toBe("c")
  })
})

describe("a rule's reply", () => {
  it("is exactly one of text or template_id", () => {
    expect(replyOf({ text: "Open 9 to 5" })).toEqual({ text: "Open 9 to 5" })
    expect(replyOf({ template_id: "t-1" })).toEqual({ template_id: "t-1" })
    expect(replyOf({})).toEqual([{ path: "reply", message: "give text or template_id" }])
    expect(replyOf({ text: "x", template_id: "t-1" })).toEqual([{ path: "reply", message: "give text or template_id, not both" }])
  })

  it("a text is checked as the text message it is sent as, the field named under reply", () => {
    expect(replyOf({ text: "   " })).toEqual([{ path: "reply.text", message: "must not be empty" }])
    expect(replyOf({ text: "x".repeat(3073) })).toEqual([{ path: "reply.text", message: "at most 3072 characters (got 3073)" }])
    // Counted in characters: 3072 emoji are within the limit.
    expect(replyOf({ text: "😀".repeat(3072) })).toEqual({ text: "😀".repeat(3072) })
  })
})
