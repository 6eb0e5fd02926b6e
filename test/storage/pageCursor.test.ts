import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { Timestamp } from "../../src/domain/timestamps.ts"
import { decodeKeyCursor, encodeKeyCursor, isBigintKey, isIntegerKey } from "../../src/storage/keyCursor.ts"
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
      Buffer.from(JSON.stringify([position.createdAt, position.id, 1])).toString("base64url"),
      // Well formed, but no instant Postgres takes.
      ...["0000-01-01T00:00:00.000000Z", "2025-02-30T00:00:00.000000Z", "2025-13-01T00:00:00.000000Z", "2025-01-01T24:00:00.000000Z", "2025-01-01T23:60:00.000000Z"]
        .map((at) => encodeCursor({ createdAt: at, id: position.id }))
    ]
    for (const cursor of bad) expect(decodeCursor(cursor), cursor).toBeUndefined()
  })

  it("a page is the first `limit` rows; a next cursor only when the extra row shows more", () => {
    const rows = [1, 2, 3].map((n) => ({ n, createdAt: position.createdAt, id: position.id }))
    expect(pageOf(rows, 2, (r) => r)).toEqual({ rows: rows.slice(0, 2), nextCursor: encodeCursor(position) })
    expect(pageOf(rows, 3, (r) => r)).toEqual({ rows, nextCursor: undefined })
  })
})

describe("key cursor", () => {
  it("takes only keys the column can hold", () => {
    expect(decodeKeyCursor(encodeKeyCursor("9223372036854775807"), isBigintKey)).toBe("9223372036854775807")
    for (const key of ["9223372036854775808", "9999999999999999999", "0", "-1", "01", "1e3"]) {
      expect(decodeKeyCursor(encodeKeyCursor(key), isBigintKey), key).toBeUndefined()
    }
    expect(decodeKeyCursor(encodeKeyCursor(2 ** 31 - 1), isIntegerKey)).toBe(2 ** 31 - 1)
    for (const key of [2 ** 31, -1, 1.5, Number.MAX_SAFE_INTEGER]) expect(decodeKeyCursor(encodeKeyCursor(key), isIntegerKey), String(key)).toBeUndefined()
  })
})

describe("timestamps from clients", () => {
  const decode = Schema.decodeUnknownEither(Timestamp)
  it("take years 0001 to 9999 and nothing Postgres would refuse", () => {
    for (const ok of ["0001-01-01T00:00:00Z", "2026-11-24T10:00:00.123Z", "9999-12-31T23:59:59.999Z"]) expect(Either.isRight(decode(ok)), ok).toBe(true)
    for (const ok of ["2024-02-29", "2026-11-24T10:00", "2026-11-24T10:00:00+05:30", "2026-11-24t10:00:00.123456z"]) expect(Either.isRight(decode(ok)), ok).toBe(true)
    for (const bad of ["0000-01-01T00:00:00Z", "+275760-09-13T00:00:00.000Z", "-271821-04-20T00:00:00.000Z", "+010000-01-01T00:00:00Z", "tomorrow", "", "2025-02-30T00:00:00Z", "2025-02-29", "2026-13-01", "2026-11-24T24:00:00Z", "Tue, 24 Nov 2026 10:00:00 GMT", "1"]) {
      expect(Either.isLeft(decode(bad)), bad).toBe(true)
    }
  })
})
