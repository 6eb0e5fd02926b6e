import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { readerFor } from "../../src/contacts/readers.ts"
import { foldRepeats } from "../../src/customers/CustomerImport.ts"
import { CUSTOMER_ROWS } from "../../src/customers/customerRows.ts"

const rowsOf = (format: "csv" | "ndjson" | "json", text: string) => {
  const reader = readerFor(format, CUSTOMER_ROWS)
  const pushed = reader.push(text)
  const ended = reader.end()
  if (Either.isLeft(pushed) || Either.isLeft(ended)) throw new Error("unreadable")
  return [...pushed.right, ...ended.right]
}

describe("a customer import's rows", () => {
  it("reads CSV: every other column a trait; an empty cell sets nothing", () => {
    expect(rowsOf("csv", "Phone,Name,city,plan\n+919876500011,Asha,Pune,\n")).toEqual([
      { _tag: "Contact", row: 1, phone: "+919876500011", name: "Asha", params: JSON.stringify({ city: "Pune" }) }
    ])
  })

  it("types a cell that is a number, a boolean or an ISO date; a :text column keeps its cells as written", () => {
    const csv = [
      "phone,orders,vip,signup,zip,ref:text,score:TEXT,note",
      "+919876500011,5,TRUE, 2025-03-14 ,00123,42,true,1e5",
      "+919876500012,-2.50,false,2025-03-14T10:00:00+05:30,560001,,0,hello"
    ].join("\n")
    const params = rowsOf("csv", csv).map((row) => (row._tag === "Contact" ? JSON.parse(row.params!) : row))
    expect(params).toEqual([
      { orders: 5, vip: true, signup: "2025-03-14", zip: "00123", ref: "42", score: "true", note: "1e5" },
      { orders: -2.5, vip: false, signup: "2025-03-14T10:00:00+05:30", zip: 560001, score: "0", note: "hello" }
    ])
  })

  it("refuses a header naming one trait twice, or phone or name as a :text trait", () => {
    const [twice] = rowsOf("csv", "phone,orders,Orders:text\n+919876500011,1,2\n")
    expect(twice).toMatchObject({ _tag: "Malformed", reason: "the header names trait \"Orders\" twice" })
    const [named] = rowsOf("csv", "phone,name:text\n+919876500011,Asha\n")
    expect(named).toMatchObject({ _tag: "Malformed", reason: expect.stringContaining("name is not a trait") })
    const [empty] = rowsOf("csv", "phone,:text\n+919876500011,1\n")
    expect(empty).toMatchObject({ _tag: "Malformed", reason: expect.stringContaining("must be a trait's name") })
  })

  it("refuses a header column that cannot name a trait, row by row", () => {
    const [row] = rowsOf("csv", `phone,${"x".repeat(101)}\n+919876500011,1\n`)
    expect(row).toMatchObject({ _tag: "Malformed", row: 1, reason: expect.stringContaining("at most 100 characters") })
  })

  it("keeps NDJSON and JSON traits as their JSON types: a string of digits stays a string", () => {
    const traits = { orders: "5", count: 5, vip: "true", flag: false, zip: "00123", signup: "2025-03-14", nested: { a: [1, "1"] } }
    const contact = { phone: "+919876500011", traits }
    for (const [format, body] of [["ndjson", JSON.stringify(contact)], ["json", JSON.stringify({ contacts: [contact] })]] as const) {
      expect(rowsOf(format, body), format).toEqual([expect.objectContaining({ _tag: "Contact", params: JSON.stringify(traits) })])
    }
  })

  it("reads NDJSON lines of POST /app/contacts's body, with typed traits, removals and tags", () => {
    const [row] = rowsOf("ndjson", JSON.stringify({ phone: 919876500011, name: " A ", user_id: "u", traits: { n: 1, gone: null }, tags: ["t", "t"] }))
    expect(row).toEqual({ _tag: "Contact", row: 1, phone: "919876500011", name: "A", userId: "u", params: JSON.stringify({ n: 1, gone: null }), tags: JSON.stringify(["t"]) })
  })

  it("counts a line invalid for an unknown field, a bad trait or tag, naming it", () => {
    const rows = rowsOf("ndjson", [
      JSON.stringify({ phone: "+919876500011", nick: "x" }),
      JSON.stringify({ phone: "+919876500011", traits: [1] }),
      JSON.stringify({ phone: "+919876500011", tags: [""] }),
      JSON.stringify({ phone: "+919876500011", name: 5 })
    ].join("\n"))
    expect(rows.map((r) => (r._tag === "Malformed" ? r.reason : "ok"))).toEqual([
      expect.stringContaining("\"nick\" is not a field"),
      expect.stringContaining("traits"),
      expect.stringContaining("tags[0]"),
      "name must be a string"
    ])
  })
})

describe("a batch's repeated phones", () => {
  it("fold into the first row as writing them in turn would: later names win, traits merge, tags add up", () => {
    const row = (phone: string, name: string | null, params: string | null, tags: string | null) => ({ phone, name, params, userId: null, tags })
    const { batch, repeats } = foldRepeats([
      row("+1", "A", JSON.stringify({ x: 1, y: 1 }), JSON.stringify(["a"])),
      row("+2", null, null, null),
      row("+1", null, JSON.stringify({ y: 2 }), JSON.stringify(["a", "b"])),
      row("+1", "C", null, null)
    ])
    expect(repeats).toBe(2)
    expect(batch).toEqual({
      phones: ["+1", "+2"],
      names: ["C", null],
      userIds: [null, null],
      traits: [JSON.stringify({ x: 1, y: 2 }), null],
      tags: [JSON.stringify(["a", "b"]), null]
    })
  })
})
