import { describe, expect, it } from "@effect/vitest"
import type { MessageContent } from "../../src/domain/content.ts"
import { checkDefaults, contactValue, personalise, placeholdersOf } from "../../src/templates/placeholders.ts"

const text = (t: string): MessageContent => ({ type: "text", text: t, suggestions: [] })

describe("placeholders", () => {
  it("are {{name}}, {{ spaced }} and {{dotted.paths}}, found once each in every filled part", () => {
    const card: MessageContent = {
      type: "rich_card",
      rich_card: {
        title: "Hi {{name}}",
        description: "Your {{ city }} store: {{offer.pct}}% off, {{name}}",
        media: { url: "https://cdn.example.com/{{city}}.png", height: "medium" },
        suggestions: [{ type: "url", text: "Shop {{city}}", url: "https://shop.example/{{sku}}" }]
      },
      suggestions: [{ type: "reply", text: "Stop", postback_data: "stop:{{customer_id}}" }]
    }
    // Media URLs and suggestion URLs are sent as written: not placeholders.
    expect(placeholdersOf(card)).toEqual(["name", "city", "offer.pct", "customer_id"])
    expect(placeholdersOf(text("{{}} {{ }} {name} {{a b}} {{ok}}"))).toEqual(["ok"])
  })

  it("are filled from the contact's values, else the defaults, in one pass", () => {
    const content = text("Hi {{name}}, {{ city }} has {{offer.pct}}% off. {{name}}!")
    const defaults = { name: "there", city: "your city", "offer.pct": "10" }
    expect(personalise(content, { name: "Asha", city: "Pune", "offer.pct": 20 }, defaults)).toEqual(text("Hi Asha, Pune has 20% off. Asha!"))
    expect(personalise(content, { name: "Ravi" }, defaults)).toEqual(text("Hi Ravi, your city has 10% off. Ravi!"))
    expect(personalise(content, null, defaults)).toEqual(text("Hi there, your city has 10% off. there!"))
    // A value reading like a placeholder is not filled again.
    expect(personalise(text("{{name}}"), { name: "{{city}}" }, { name: "x", city: "y" })).toEqual(text("{{city}}"))
  })

  it("take a contact's blank, null or structured value as missing", () => {
    expect(contactValue("  ")).toBeUndefined()
    expect(contactValue("")).toBeUndefined()
    expect(contactValue(null)).toBeUndefined()
    expect(contactValue({ a: 1 })).toBeUndefined()
    expect(contactValue([1])).toBeUndefined()
    expect(contactValue(0)).toBe("0")
    expect(contactValue(false)).toBe("false")
    expect(contactValue(" Asha ")).toBe(" Asha ")
  })

  it("need a default each, and every default names one", () => {
    expect(checkDefaults([], {})).toEqual([])
    expect(checkDefaults(["name", "city"], { name: "there", city: "" })).toEqual([])
    expect(checkDefaults(["name", "city"], { name: "there", cty: "x" }).map((p) => p.path)).toEqual(["variables.city", "variables.cty"])
    expect(checkDefaults([], { name: "x" })[0]!.message).toContain("has none")
  })
})
