import { describe, expect, it } from "@effect/vitest"
import type { ParsedRow } from "../../src/contacts/contactRow.ts"
import { columnsOf, ImportTally, type ValidContact } from "../../src/contacts/importTally.ts"
import { presentImportReport } from "../../src/http/importReport.ts"

const row = (n: number, phone: string): ParsedRow => ({ _tag: "Contact", row: n, phone, name: `n${n}`, params: null })

describe("the import tally", () => {
  it("normalises phones to E.164, counts invalid rows, and lists the first 100 with a cut phone", () => {
    const tally = new ImportTally()
    const valid: Array<ValidContact> = []
    const rows: Array<ParsedRow> = [
      row(1, "+91 98765-43210"),
      row(2, "919876543211"),
      { _tag: "Malformed", row: 3, phone: "", reason: "phone is missing" },
      ...Array.from({ length: 150 }, (_, i) => row(4 + i, `0${"9".repeat(80)}`))
    ]
    tally.sort(rows, valid)
    expect(valid).toEqual([
      { phone: "+919876543210", name: "n1", params: null, userId: null, tags: null },
      { phone: "+919876543211", name: "n2", params: null, userId: null, tags: null }
    ])
    const report = presentImportReport(tally.report())
    expect(report.invalid_count).toBe(151)
    expect(report.invalid).toHaveLength(100)
    expect(report.invalid[0]).toEqual({ row: 3, phone: "", reason: "phone is missing" })
    expect(report.invalid[1]!.row).toBe(4)
    expect(report.invalid[1]!.phone).toHaveLength(64)
    expect(report.invalid[1]!.reason).toMatch(/phone number/)
  })

  it("counts a written batch's rows that were not new as duplicates", () => {
    const tally = new ImportTally()
    tally.written(5_000, 4_990)
    tally.written(10, 0)
    expect(presentImportReport(tally.report())).toEqual({ success: true, added: 4_990, duplicates: 20, invalid: [], invalid_count: 0 })
  })

  it("lays valid contacts out column by column for unnest", () => {
    expect(columnsOf([{ phone: "+1", name: null, params: "{}", userId: null, tags: null }, { phone: "+2", name: "b", params: null, userId: null, tags: null }])).toEqual({
      phones: ["+1", "+2"],
      names: [null, "b"],
      params: ["{}", null]
    })
  })
})
