import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { describeParseError, plainIssues } from "../../src/domain/plainIssues.ts"
import { Timestamp } from "../../src/domain/timestamps.ts"
import { toE164 } from "../../src/messaging/phone.ts"

const Body = Schema.Struct({
  name: Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(20)),
  count: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.between(1, 10))),
  kind: Schema.optional(Schema.Literal("a", "b")),
  tags: Schema.optional(Schema.Array(Schema.String)),
  id: Schema.optional(Schema.UUID),
  password: Schema.optional(Schema.String),
  at: Schema.optional(Timestamp),
  content: Schema.optional(Schema.Union(
    Schema.Struct({ type: Schema.Literal("text"), text: Schema.String }),
    Schema.Struct({ type: Schema.Literal("image"), url: Schema.String })
  ))
})

const issuesOf = (input: unknown) => {
  const result = Schema.decodeUnknownEither(Body, { errors: "all", onExcessProperty: "error" })(input)
  if (Either.isRight(result)) throw new Error("decoded")
  return plainIssues(result.left)
}

describe("plainIssues", () => {
  it("names each field and the form it takes, without Schema's own wording", () => {
    const issues = issuesOf({
      name: "",
      count: 11,
      kind: "c",
      tags: [1],
      id: "x",
      at: "tomorrow",
      content: { type: "text", text: 5 },
      colour: "red"
    })
    expect(issues).toEqual([
      { path: "colour", message: "is not a field this request takes (it takes name, count, kind, tags, id, password, at, content)" },
      { path: "name", message: "must not be empty" },
      { path: "count", message: "must be from 1 to 10, not 11" },
      { path: "kind", message: "must be one of \"a\", \"b\", not \"c\"" },
      { path: "tags.0", message: "must be a string, not 1" },
      { path: "id", message: "must be a UUID, such as 0b5e8f3c-2d1a-4c6e-9f7b-1a2b3c4d5e6f, not \"x\"" },
      { path: "at", message: "must be an ISO 8601 date-time, such as 2026-11-24T10:00:00Z" },
      { path: "content.text", message: "must be a string, not 5" }
    ])
    expect(JSON.stringify(issues)).not.toMatch(/Expected|actual|undefined/)
  })

  it("says what is missing, what a body that is not an object is, and which member of a union was meant", () => {
    expect(issuesOf({})).toEqual([{ path: "name", message: "is required" }])
    expect(issuesOf(null)).toEqual([{ path: "", message: "must be a JSON object, not null" }])
    expect(issuesOf({ name: "x", content: { type: "video" } })).toEqual([{ path: "content.type", message: "must be one of \"text\", \"image\", not \"video\"" }])
    expect(issuesOf({ name: "x".repeat(30) })).toEqual([{ path: "name", message: "must be at most 20 characters long" }])
  })

  it("never repeats the value of a secret field", () => {
    expect(issuesOf({ name: "x", password: 12345 })).toEqual([{ path: "password", message: "must be a string (a number was sent)" }])
  })

  it("sums the issues up in one sentence per field", () => {
    const result = Schema.decodeUnknownEither(Body, { errors: "all" })({ count: 0 })
    expect(describeParseError((result as Either.Left<any, any>).left).message).toBe("name is required; count must be from 1 to 10, not 0")
  })
})

describe("phone numbers", () => {
  it("a number without its country code is told so, with the form it likely meant", () => {
    expect(toE164("9876543210")).toEqual({ problem: "has no country code: write it with + and its country code (+919876543210 if it is a number in India)" })
    expect(toE164("07911 123456")).toMatchObject({ problem: expect.stringContaining("has no country code") })
    expect(toE164("+919876543210")).toEqual({ e164: "+919876543210" })
    expect(toE164("919876543210")).toEqual({ e164: "+919876543210" })
    expect(toE164("00919876543210")).toEqual({ e164: "+919876543210" })
    expect(toE164("+123")).toEqual({ problem: "+123 is not a valid phone number" })
  })
})
