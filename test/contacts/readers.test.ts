import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Either, Stream } from "effect"
import { importFormatOf, readRows } from "../../src/contacts/Imports.ts"
import type { ParsedRow } from "../../src/contacts/contactRow.ts"
import { RECORD_MAX_CHARS } from "../../src/contacts/importLimits.ts"
import { CsvReader, type ImportFormat, JsonReader, NdjsonReader, type RowReader } from "../../src/contacts/readers.ts"

// The import readers, fed the same body cut at every size from one character up: a record, a
// quoted field, an escape or a CRLF split across pieces must read exactly as the whole body does.

const readers: Record<ImportFormat, () => RowReader> = { json: () => new JsonReader(), ndjson: () => new NdjsonReader(), csv: () => new CsvReader() }

/** The rows of `body` fed in pieces of `size` characters, or the 400's first issue. */
const readIn = (format: ImportFormat, body: string, size: number) => {
  const reader = readers[format]()
  const rows: Array<ParsedRow> = []
  for (let i = 0; i < body.length; i += size) {
    const read = reader.push(body.slice(i, i + size))
    if (Either.isLeft(read)) return { error: read.left.errors[0] }
    rows.push(...read.right)
  }
  const last = reader.end()
  if (Either.isLeft(last)) return { error: last.left.errors[0] }
  rows.push(...last.right)
  return { rows }
}

/** Reads `body` whole and in pieces of every size up to 17, then a few larger: all must agree. */
const read = (format: ImportFormat, body: string) => {
  const whole = readIn(format, body, Math.max(body.length, 1))
  for (const size of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 64, 1000]) {
    expect(readIn(format, body, size), `pieces of ${size}`).toEqual(whole)
  }
  return whole
}

const contact = (row: number, phone: string, name: string | null = null, params: Record<string, unknown> | null = null) => ({
  _tag: "Contact",
  row,
  phone,
  name,
  params: params === null ? null : JSON.stringify(params)
})
const malformed = (row: number, phone: string, reason: string) => ({ _tag: "Malformed", row, phone, reason })

describe("CSV", () => {
  it("reads a header and rows; other columns become string params, in header order", () => {
    expect(read("csv", "phone,name,city,tier\n+919876543210,Asha,Pune,gold\n+14155550123,Bob,,\n").rows).toEqual([
      contact(1, "+919876543210", "Asha", { city: "Pune", tier: "gold" }),
      contact(2, "+14155550123", "Bob", { city: "", tier: "" })
    ])
  })

  it("matches phone and name case-insensitively, in any position; without other columns params are null", () => {
    expect(read("csv", "Name , PHONE\nAsha,919876543210\n").rows).toEqual([contact(1, "919876543210", "Asha")])
    expect(read("csv", "phone\n919876543210").rows).toEqual([contact(1, "919876543210")])
  })

  it("quoted fields hold commas, doubled quotes and line breaks", () => {
    const body = "phone,name,note\n\"+91 98765 43210\",\"Doe, \"\"JJ\"\" John\",\"line one\r\nline two\"\n+14155550123,Plain,\"\"\n"
    expect(read("csv", body).rows).toEqual([
      contact(1, "+91 98765 43210", "Doe, \"JJ\" John", { note: "line one\r\nline two" }),
      contact(2, "+14155550123", "Plain", { note: "" })
    ])
  })

  it("a quote inside an unquoted field is a character", () => {
    expect(read("csv", "phone,name\n+919876543210,John \"JJ\" Smith 5'10\"\n").rows).toEqual([contact(1, "+919876543210", "John \"JJ\" Smith 5'10\"")])
  })

  it("skips a byte-order mark and reads CRLF, LF and CR line endings alike", () => {
    const rows = [contact(1, "+919876543210", "A"), contact(2, "+919876543211", "B"), contact(3, "+919876543212", "C")]
    expect(read("csv", "\uFEFFphone,name\r\n+919876543210,A\r\n+919876543211,B\r\n+919876543212,C\r\n").rows).toEqual(rows)
    expect(read("csv", "phone,name\r+919876543210,A\r+919876543211,B\r+919876543212,C").rows).toEqual(rows)
    expect(read("csv", "phone,name\n+919876543210,A\n+919876543211,B\n+919876543212,C").rows).toEqual(rows)
  })

  it("skips blank records (no cell filled) without counting them; rows are data records, not lines", () => {
    const body = "\n\nphone,name\n\n+919876543210,A\n,,\n   \n+919876543211,\"B\nB\"\n\n+919876543212,C\n\n"
    expect(read("csv", body).rows).toEqual([contact(1, "+919876543210", "A"), contact(2, "+919876543211", "B\nB"), contact(3, "+919876543212", "C")])
  })

  it("a short row has empty cells; a row wider than the header is invalid unless the extra cells are empty", () => {
    expect(read("csv", "phone,name,city\n+919876543210\n+919876543211,B,Pune,,\n+919876543212,C,Pune,extra\n").rows).toEqual([
      contact(1, "+919876543210", null, { city: "" }),
      contact(2, "+919876543211", "B", { city: "Pune" }),
      malformed(3, "+919876543212", "has 4 fields, the header has 3")
    ])
  })

  it("a row without a phone is invalid; a column with an empty header is ignored", () => {
    expect(read("csv", "phone,,name\n,x,Nobody\n+919876543210,ignored,A\n").rows).toEqual([malformed(1, "", "phone is missing"), contact(2, "+919876543210", "A")])
  })

  it("a name over 200 characters is invalid", () => {
    expect(read("csv", `phone,name\n+919876543210,${"n".repeat(201)}\n`).rows).toEqual([malformed(1, "+919876543210", "name is longer than 200 characters")])
  })

  it("breaks on a header without a phone column, a repeated column, an empty body", () => {
    expect(read("csv", "mobile,name\n+919876543210,A\n").error).toEqual({ path: "header", message: "the header row has no phone column" })
    expect(read("csv", "phone,City,city\n").error).toEqual({ path: "header", message: "the header names column city twice" })
    expect(read("csv", "").error?.path).toBe("body")
    expect(read("csv", "\n\n").error?.path).toBe("body")
    // A header alone is no error: nothing to import.
    expect(read("csv", "phone\n").rows).toEqual([])
  })

  it("breaks on characters after a closing quote and on a quote never closed, naming the line", () => {
    expect(read("csv", "phone,name\n+919876543210,\"A\"x\n").error).toEqual({ path: "line 2", message: "has characters after the closing quote of a field" })
    expect(read("csv", "phone,name\n+919876543210,A\n+919876543211,\"B\nstill open").error).toEqual({ path: "line 3", message: "has a quoted field that is never closed" })
  })

  it("breaks on a record longer than the limit, without holding more than one record", () => {
    const reader = new CsvReader()
    expect(Either.isRight(reader.push("phone,name\n+919876543210,\""))).toBe(true)
    let result: Either.Either<ReadonlyArray<ParsedRow>, unknown> = Either.right([])
    for (let i = 0; i < RECORD_MAX_CHARS / 1000 + 2 && Either.isRight(result); i++) result = reader.push("x".repeat(1000))
    expect(Either.isLeft(result)).toBe(true)
  })
})

describe("NDJSON", () => {
  it("reads one object a line, skipping blank lines, with CRLF and a last line without a newline", () => {
    const body = "\uFEFF{\"phone\":\"+919876543210\",\"name\":\"A\"}\r\n\n   \n{\"phone\":919876543211,\"params\":{\"order\":{\"id\":7,\"items\":[1,2]}}}\r\n{\"phone\":\"+919876543212\"}"
    expect(read("ndjson", body).rows).toEqual([
      contact(1, "+919876543210", "A"),
      contact(2, "919876543211", null, { order: { id: 7, items: [1, 2] } }),
      contact(3, "+919876543212")
    ])
  })

  it("a line of the wrong shape is an invalid row; a line that is not JSON breaks the body, naming the line", () => {
    expect(read("ndjson", "{\"phone\":\"+919876543210\"}\n[1,2]\n{\"name\":\"x\"}\n{\"phone\":true}\n{\"phone\":\"+1\",\"name\":5}\n{\"phone\":\"+1\",\"params\":[]}\n").rows).toEqual([
      contact(1, "+919876543210"),
      malformed(2, "", "must be an object with a phone"),
      malformed(3, "", "phone is missing"),
      malformed(4, "", "phone must be a string"),
      malformed(5, "+1", "name must be a string"),
      malformed(6, "+1", "params must be an object")
    ])
    expect(read("ndjson", "{\"phone\":\"+919876543210\"}\n\n{\"phone\": \n").error?.path).toBe("line 3")
  })

  it("params larger than 8 KiB make the row invalid", () => {
    expect(read("ndjson", JSON.stringify({ phone: "+919876543210", params: { note: "x".repeat(9000) } })).rows).toEqual([
      malformed(1, "+919876543210", "params exceed 8192 bytes as JSON")
    ])
  })

  it("breaks on a line longer than the limit", () => {
    const reader = new NdjsonReader()
    let result: Either.Either<ReadonlyArray<ParsedRow>, unknown> = Either.right([])
    for (let i = 0; i < RECORD_MAX_CHARS / 1000 + 2 && Either.isRight(result); i++) result = reader.push("x".repeat(1000))
    expect(Either.isLeft(result)).toBe(true)
  })
})

describe("JSON", () => {
  it("reads the contacts array element by element, nested params, escapes and other members included", () => {
    const body = `\uFEFF {"source": {"note": "a } ] \\" tricky [ {"}, "contacts" : [
      {"phone": "+919876543210", "name": "Asha \\"A\\" \\u00e9", "params": {"order": {"id": 7, "tags": ["a", "]"], "n": null}}},
      {"phone": 919876543211},
      {"phone": "+919876543212", "name": null, "params": null, "extra": [1, {"x": "}"}]}
    ], "after": [1, 2, {"y": true}]}  `
    expect(read("json", body).rows).toEqual([
      contact(1, "+919876543210", "Asha \"A\" é", { order: { id: 7, tags: ["a", "]"], n: null } }),
      contact(2, "919876543211"),
      contact(3, "+919876543212")
    ])
  })

  it("an element of the wrong shape is an invalid row; an empty array reads nothing", () => {
    expect(read("json", `{"contacts":[1,"x",null,{"phone":""},{"phone":{"a":1}}]}`).rows).toEqual([
      malformed(1, "", "must be an object with a phone"),
      malformed(2, "", "must be an object with a phone"),
      malformed(3, "", "must be an object with a phone"),
      malformed(4, "", "phone is missing"),
      malformed(5, "", "phone must be a string")
    ])
    expect(read("json", `{"contacts":[]}`).rows).toEqual([])
    expect(read("json", `{"contacts":[ ]}`).rows).toEqual([])
  })

  it("breaks on a body that is not the expected structure", () => {
    expect(read("json", `[{"phone":"+919876543210"}]`).error?.path).toBe("body")
    expect(read("json", `{"contacts": {"phone":"+919876543210"}}`).error).toEqual({ path: "contacts", message: "must be an array" })
    expect(read("json", `{"items": []}`).error).toEqual({ path: "contacts", message: "is missing" })
    expect(read("json", `{}`).error).toEqual({ path: "contacts", message: "is missing" })
    expect(read("json", "").error?.path).toBe("body")
  })

  it("breaks on bad JSON: a broken element, a trailing comma, a missing end, content after the object", () => {
    expect(read("json", `{"contacts":[{"phone":"+919876543210"},{"phone":"+9198765432` + `11",}]}`).error?.path).toBe("contacts[1]")
    expect(read("json", `{"contacts":[{"phone":"+919876543210"},]}`).error?.path).toBe("contacts[1]")
    expect(read("json", `{"contacts":[{"phone":"+919876543210"}`).error).toEqual({ path: "body", message: "ends before the JSON object is complete" })
    expect(read("json", `{"contacts":[{"phone":"+919876543210"}]} {}`).error).toEqual({ path: "body", message: "has content after the JSON object" })
    expect(read("json", `{"contacts":[{"phone":"+919876543210"} {"phone":"+919876543211"}]}`).error?.path).toBe("contacts[0]")
    expect(read("json", `{"contacts" [] }`).error?.path).toBe("body")
    expect(read("json", `{"contacts":[], }`).error?.path).toBe("body")
  })

  it("rows read before a break are still answered by push: the caller's transaction undoes them", () => {
    const reader = new JsonReader()
    const first = reader.push(`{"contacts":[{"phone":"+919876543210"},`)
    expect(Either.isRight(first) && first.right.length).toBe(1)
    expect(Either.isLeft(reader.push(`oops]}`))).toBe(true)
  })
})

describe("readRows", () => {
  it.effect("turns a stream of text pieces into rows, failing the stream with the 400", () =>
    Effect.gen(function*() {
      const rows = yield* Stream.fromIterable(["phone,na", "me\n+91987654", "3210,A\n+919876543211,B"]).pipe(readRows("csv"), Stream.runCollect)
      expect(Chunk.toReadonlyArray(rows)).toEqual([contact(1, "+919876543210", "A"), contact(2, "+919876543211", "B")])
      const broken = yield* Stream.fromIterable(["{\"contacts\":[{\"phone\":\"+919876543210\"}"]).pipe(readRows("json"), Stream.runCollect, Effect.flip)
      expect(broken.errors[0]).toEqual({ path: "body", message: "ends before the JSON object is complete" })
    }))
})

describe("import formats", () => {
  it("by Content-Type, UTF-8 only", () => {
    expect(importFormatOf("application/json")).toBe("json")
    expect(importFormatOf("Application/JSON; charset=UTF-8")).toBe("json")
    expect(importFormatOf("application/x-ndjson")).toBe("ndjson")
    expect(importFormatOf("application/ndjson")).toBe("ndjson")
    expect(importFormatOf("text/csv; charset=\"utf-8\"; header=present")).toBe("csv")
    expect(importFormatOf("text/csv; charset=latin1")).toBeUndefined()
    expect(importFormatOf("text/plain")).toBeUndefined()
    expect(importFormatOf("multipart/form-data; boundary=x")).toBeUndefined()
    expect(importFormatOf(undefined)).toBeUndefined()
  })
})
