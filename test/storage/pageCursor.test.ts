import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Redacted, Schema } from "effect"
import { AppConfig, type AppSettings } from "../../src/config/AppConfig.ts"
import { InvalidRequest } from "../../src/domain/errors.ts"
import { Timestamp } from "../../src/domain/timestamps.ts"
import { isBigintKey, isIntegerKey } from "../../src/storage/keyCursor.ts"
import { ListCursors } from "../../src/storage/ListCursors.ts"

const cursorsUnder = (secretsKey: string) =>
  Effect.runSync(Effect.provide(ListCursors, ListCursors.Default.pipe(Layer.provide(AppConfig.make({ secretsKey: Redacted.make(secretsKey) } as AppSettings)))))
const cursors = cursorsUnder("test-herald-secrets-key-0123456789abcdef")

/** What reading `cursor` gives: the value, or the refusal's field. */
const read = <A>(effect: Effect.Effect<A, InvalidRequest>) => {
  const outcome = Effect.runSync(Effect.either(effect))
  return Either.isRight(outcome) ? { value: outcome.right } : { refused: outcome.left.errors[0]!.path }
}
/** The cursor's body (its values, base64url JSON) with other values and the same signature. */
const withBody = (cursor: string, values: ReadonlyArray<unknown>) => `${Buffer.from(JSON.stringify(values)).toString("base64url")}${cursor.slice(cursor.indexOf("."))}`

describe("list cursors (signed)", () => {
  const position = { createdAt: "2025-03-04T05:06:07.123456Z", id: "0b7c5c1e-4a43-4b38-9d0c-7c0e1f2a3b4c" }
  const scope = { list: "templates", accountId: "5d1f3a4e-0000-4000-8000-000000000001" }
  const rows = [1, 2, 3].map((n) => ({ n, ...position }))
  const cursor = cursors.positionPage(scope, rows, 2, (r) => r).nextCursor!

  it("round-trip a position; are opaque (base64url and a signature); none for the first page", () => {
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/)
    expect(read(cursors.readPosition(scope, cursor))).toEqual({ value: position })
    for (const first of [undefined, null, ""]) expect(read(cursors.readPosition(scope, first))).toEqual({ value: undefined })
  })

  it("a page is the first `limit` rows; a next cursor only when the extra row shows more", () => {
    expect(cursors.positionPage(scope, rows, 2, (r) => r).rows).toEqual(rows.slice(0, 2))
    expect(cursors.positionPage(scope, rows, 3, (r) => r)).toEqual({ rows, nextCursor: undefined })
  })

  it("refuse an edited cursor, another list's or account's, an unsigned one, and one signed under another key", () => {
    const otherId = "0b7c5c1e-4a43-4b38-9d0c-7c0e1f2a3b4d"
    const bad = [
      "not-a-cursor",
      ".",
      // The old unsigned form, and a well-formed position whose signature is another's.
      Buffer.from(JSON.stringify([position.createdAt, position.id])).toString("base64url"),
      withBody(cursor, [position.createdAt, otherId]),
      withBody(cursor, ["2025-03-04T05:06:07.123457Z", position.id]),
      `${cursor.slice(0, -1)}${cursor.endsWith("A") ? "B" : "A"}`,
      cursors.positionPage({ ...scope, list: "broadcasts" }, rows, 2, (r) => r).nextCursor!,
      cursors.positionPage({ ...scope, accountId: "5d1f3a4e-0000-4000-8000-000000000002" }, rows, 2, (r) => r).nextCursor!,
      cursorsUnder("another-herald-secrets-key-0123456789abcdef").positionPage(scope, rows, 2, (r) => r).nextCursor!
    ]
    for (const c of bad) expect(read(cursors.readPosition(scope, c)), c).toEqual({ refused: "cursor" })
    // GraphQL names its argument.
    expect(read(cursors.readPosition(scope, bad[3], "page.cursor"))).toEqual({ refused: "page.cursor" })
  })

  it("refuse a signed cursor of another kind: values that are no position", () => {
    const signed = (values: ReadonlyArray<unknown>) => cursors.sign(scope, values)
    const bad = [
      signed([]),
      signed([position.createdAt, "1; DROP TABLE templates"]),
      signed([position.createdAt, position.id, 1]),
      signed([7]),
      // Well formed, but no instant Postgres takes.
      ...["0000-01-01T00:00:00.000000Z", "2025-02-30T00:00:00.000000Z", "2025-13-01T00:00:00.000000Z", "2025-01-01T24:00:00.000000Z", "2025-01-01T23:60:00.000000Z"]
        .map((at) => signed([at, position.id]))
    ]
    for (const c of bad) expect(read(cursors.readPosition(scope, c)), c).toEqual({ refused: "cursor" })
  })
})

describe("key cursors (a contact list's contacts, a broadcast's targets)", () => {
  const scope = { list: "contact-list:x", accountId: "5d1f3a4e-0000-4000-8000-000000000001" }
  const keyCursor = (key: unknown) => cursors.sign(scope, [key])

  it("take only keys the column can hold", () => {
    expect(read(cursors.readKey(scope, keyCursor("9223372036854775807"), isBigintKey))).toEqual({ value: "9223372036854775807" })
    for (const key of ["9223372036854775808", "9999999999999999999", "0", "-1", "01", "1e3", 12]) {
      expect(read(cursors.readKey(scope, keyCursor(key), isBigintKey)), String(key)).toEqual({ refused: "cursor" })
    }
    expect(read(cursors.readKey(scope, keyCursor(2 ** 31 - 1), isIntegerKey))).toEqual({ value: 2 ** 31 - 1 })
    for (const key of [2 ** 31, -1, 1.5, Number.MAX_SAFE_INTEGER, "7"]) {
      expect(read(cursors.readKey(scope, keyCursor(key), isIntegerKey)), String(key)).toEqual({ refused: "cursor" })
    }
  })

  it("page by the last row's key, signed: an edited key is refused", () => {
    const page = cursors.keyPage(scope, [{ k: 9 }, { k: 7 }, { k: 5 }], 2, (row) => row.k)
    expect(page.rows).toEqual([{ k: 9 }, { k: 7 }])
    expect(read(cursors.readKey(scope, page.nextCursor, isIntegerKey))).toEqual({ value: 7 })
    expect(read(cursors.readKey(scope, withBody(page.nextCursor!, [3]), isIntegerKey))).toEqual({ refused: "cursor" })
    expect(read(cursors.readKey(scope, Buffer.from("[7]").toString("base64url"), isIntegerKey))).toEqual({ refused: "cursor" })
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
