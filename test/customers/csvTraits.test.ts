import { describe, expect, it } from "@effect/vitest"
import { csvTraitValue, traitColumn } from "../../src/customers/csvTraits.ts"

describe("a customer import's CSV cell", () => {
  it("is a number when it is one plainly: an optional minus, no leading zero but 0, an optional fraction", () => {
    const numbers: Array<[string, number]> = [
      ["5", 5], ["0", 0], ["-12", -12], ["3.25", 3.25], ["0.5", 0.5], ["-0.75", -0.75], ["1.50", 1.5], [" 42 ", 42],
      ["123456789012345", 123456789012345], ["1234567890.12345", 1234567890.12345]
    ]
    for (const [cell, value] of numbers) expect(csvTraitValue(cell), cell).toBe(value)
  })

  it("stays text in every shape a code, a phone or a formatted amount takes", () => {
    const texts = [
      "00123", "0123", "01", "+5", "+919876543210", "1e5", "1E-3", ".5", "5.", "1,000", "1 000", "0x1F", "Infinity", "NaN", "-", "",
      "5 apples", "12-34", "1.2.3", "--1",
      // 16 digits and more would not survive as a JSON number (a card, a long id).
      "1234567890123456", "9007199254740993", "12345678901234.56"
    ]
    for (const cell of texts) expect(csvTraitValue(cell), cell).toBe(cell)
  })

  it("is a boolean for true and false in any case, and text for every other yes or no", () => {
    expect(["true", "false", "TRUE", "False", " true "].map(csvTraitValue)).toEqual([true, false, true, false, true])
    for (const cell of ["yes", "no", "Y", "on", "t", "truthy"]) expect(csvTraitValue(cell), cell).toBe(cell)
  })

  it("keeps an ISO 8601 date or instant as a string, trimmed so that searches read it as an instant", () => {
    expect(csvTraitValue("2025-03-14")).toBe("2025-03-14")
    expect(csvTraitValue(" 2025-03-14T10:00:00Z ")).toBe("2025-03-14T10:00:00Z")
    expect(csvTraitValue("2025-03-14T15:30:00+05:30")).toBe("2025-03-14T15:30:00+05:30")
    // Not ISO dates: written as they came, spaces included.
    for (const cell of ["14/03/2025", "2025-02-30", "2025-3-14", " March 14 "]) expect(csvTraitValue(cell), cell).toBe(cell)
  })

  it("is text, as written, other than those", () => {
    expect(csvTraitValue(" Pune ")).toBe(" Pune ")
    expect(csvTraitValue("null")).toBe("null")
  })
})

describe("a CSV column's trait", () => {
  it("is its header, typed; a :text suffix in any case names the trait without it and keeps the cells as text", () => {
    expect(traitColumn("orders")).toEqual({ name: "orders", typed: true })
    expect(traitColumn("zip:text")).toEqual({ name: "zip", typed: false })
    expect(traitColumn("Zip Code :TEXT")).toEqual({ name: "Zip Code", typed: false })
    expect(traitColumn("ratio:number")).toEqual({ name: "ratio:number", typed: true })
  })
})
