import { describe, expect, it } from "@effect/vitest"
import { decodePageCursor as decodeCursor, encodePageCursor as encodeCursor, pageOf } from "../../src/storage/pageCursor.ts"

describe("list cursor", () => {
  const position = { createdAt: "2025-03-04T05:06:07.123456Z", id: "0b7c5c1e-4a43-4b38-9d0c-7c0e1f2a3b4c" }

  it("round-trips a position and is opaque (base64url)", () => {
    const cursor = encodeCursor(position)
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(decodeCursor(cursor)).toEqual(position)
  })

  it("refuses anything it did not give out", () => {
    const bad = [
      "",
      "not-a-cursor",
      Buffer.from("{}").toString("base64url"),
      Buffer.from(JSON.stringify(["2025-03-04", position.id])).toString("base64url"),
      Buffer.from(JSON.stringify([position.createdAt, "1; DROP TABLE templates"])).toString("base64url"),
      Buffer.from(JSON.stringify([position.createdAt, position.id, 1])).toString("base64url")
    ]
    for (const cursor of bad) expect(decodeCursor(cursor), cursor).toBeUndefined()
  })

  it("a page is the first `limit` rows; a next cursor only when the extra row shows more", () => {
    const rows = [1, 2, 3].map((n) => ({ n, createdAt: position.createdAt, id: position.id }))
    expect(pageOf(rows, 2, (r) => r)).toEqual({ rows: rows.slice(0, 2), nextCursor: encodeCursor(position) })
    expect(pageOf(rows, 3, (r) => r)).toEqual({ rows, nextCursor: undefined })
  })
})
