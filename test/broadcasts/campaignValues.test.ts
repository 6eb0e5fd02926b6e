import { describe, expect, it } from "@effect/vitest"
import { checkFallbacks, fillTraits, MAX_CAMPAIGN_TRAITS, traitsIn } from "../../src/broadcasts/campaignValues.ts"

// A campaign's per-recipient values (src/broadcasts/campaignValues.ts, docs/campaigns.md): which
// traits the template's values name, the fallbacks each needs, and how a customer's values fill them.

const template = {
  name: "diwali_offer",
  languageCode: "en",
  headerValues: ["{{trait.city}}"],
  bodyValues: ["Hi {{ trait.first_name }}", "{{trait.discount}}% off in {{trait.city}}"],
  buttonValues: { "0": ["{{trait.code}}"] }
}

describe("traitsIn", () => {
  it("names each trait once, in order of first appearance, anywhere in the values (spaces inside the braces allowed)", () => {
    expect(traitsIn(template)).toEqual(["city", "first_name", "discount", "code"])
  })
  it("finds none in plain values, and no other placeholder is a trait", () => {
    expect(traitsIn({ name: "t", languageCode: "en", bodyValues: ["Asha", "{{1}}", "{{name}}", "{{trait.}}"] })).toEqual([])
  })
})

describe("checkFallbacks", () => {
  it("asks a fallback of every trait named, and names every one missing", () => {
    const issues = checkFallbacks(["city", "first_name"], { city: "your city" })
    expect(issues.map((i) => i.path)).toEqual(["fallbackValues.first_name"])
    expect(issues[0]!.message).toContain("{{trait.first_name}} needs a fallback value")
  })
  it("refuses a fallback naming no trait of the values (a misspelling), and an empty or blank one", () => {
    const issues = checkFallbacks(["city", "code"], { city: " ", code: "WELCOME", cty: "Pune" })
    expect(issues.map((i) => i.path).sort()).toEqual(["fallbackValues.city", "fallbackValues.cty"])
  })
  it("refuses more than the most traits one campaign may name", () => {
    const traits = Array.from({ length: MAX_CAMPAIGN_TRAITS + 1 }, (_, i) => `t${i}`)
    const issues = checkFallbacks(traits, Object.fromEntries(traits.map((t) => [t, "x"])))
    expect(issues.map((i) => i.path)).toEqual(["template"])
  })
  it("is satisfied by exactly one fallback per trait", () => {
    expect(checkFallbacks(["city"], { city: "your city" })).toEqual([])
  })
})

describe("fillTraits", () => {
  const fallbacks = { city: "your city", first_name: "there", discount: "10", code: "WELCOME" }

  it("fills each placeholder with the customer's trait, a number or boolean as its text", () => {
    expect(fillTraits(template, { city: "Pune", first_name: "Asha", discount: 20, code: true }, fallbacks)).toEqual({
      name: "diwali_offer",
      languageCode: "en",
      headerValues: ["Pune"],
      bodyValues: ["Hi Asha", "20% off in Pune"],
      buttonValues: { "0": ["true"] }
    })
  })
  it("takes the fallback for a trait the customer lacks, or has blank, null, a list or an object", () => {
    expect(fillTraits(template, { city: "  ", first_name: null, discount: [5], code: { a: 1 } }, fallbacks)).toMatchObject({
      headerValues: ["your city"],
      bodyValues: ["Hi there", "10% off in your city"],
      buttonValues: { "0": ["WELCOME"] }
    })
    expect(fillTraits(template, null, fallbacks).bodyValues).toEqual(["Hi there", "10% off in your city"])
  })
  it("fills in one pass: a value that reads like a placeholder is sent as written", () => {
    expect(fillTraits({ bodyValues: ["{{trait.a}}"] }, { a: "{{trait.b}}", b: "no" }, { a: "x", b: "y" }).bodyValues).toEqual(["{{trait.b}}"])
  })
})
