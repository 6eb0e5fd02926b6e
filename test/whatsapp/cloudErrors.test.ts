import { readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { GatewayErrorRecord } from "../../src/domain/gatewayError.ts"
import { categoryOfStatus, fromMetaError, fromMetaStatusError, META_ERROR_CODES } from "../../src/gateway/cloud/errors.ts"
import { ECOSYSTEM_ERROR, somethingWentWrong, undeliverable } from "../../src/simulator/whatsapp/metaErrors.ts"

const envelope = (code: number, message = `(#${code}) Something`, details = "What Meta says in detail") => ({
  error: { message, type: "OAuthException", code, error_data: { messaging_product: "whatsapp", details }, error_subcode: 2494010, fbtrace_id: "AbCdEf123" }
})

const isRecord = Schema.is(GatewayErrorRecord)

/** The brief's required mappings: code → category. */
const REQUIRED: ReadonlyArray<readonly [number, string]> = [
  [131047, "content"], [131026, "recipient"], [131049, "recipient"], [130429, "quota"], [131056, "quota"],
  [132000, "content"], [132001, "config"], [132005, "content"], [132007, "content"], [132012, "content"], [132015, "config"], [132016, "config"],
  [131051, "content"], [131052, "media"], [131053, "media"], [131008, "content"], [131009, "content"], [100, "content"],
  [190, "config"], [0, "config"], [3, "config"], [10, "config"], [200, "config"], [131031, "config"], [368, "config"],
  [4, "quota"], [80007, "quota"], [130472, "recipient"],
  [1, "gateway"], [2, "gateway"], [131000, "gateway"], [131016, "gateway"]
]

describe("fromMetaError: Meta's envelope", () => {
  for (const [code, category] of REQUIRED) {
    it(`${code} → ${category}`, () => {
      const error = fromMetaError(400, envelope(code))
      expect(error.category).toBe(category)
      expect(error.upstream_code).toBe(code)
      expect(error.retryable).toBe(category === "gateway")
    })
  }

  it("maps every code of the table as the table says, as a valid Gateway error record", () => {
    for (const mapping of META_ERROR_CODES) {
      const error = fromMetaError(400, envelope(mapping.code))
      expect(isRecord(error)).toBe(true)
      expect(error).toMatchObject({ success: false, category: mapping.category, message: mapping.message, upstream_code: mapping.code })
      expect(error.retryable).toBe(mapping.category === "gateway")
      expect(error).not.toHaveProperty("message_id")
    }
  })

  it("has one row per code", () => {
    const codes = META_ERROR_CODES.map((m) => m.code)
    expect(new Set(codes).size).toBe(codes.length)
  })

  it("131049 is recipient and never retryable (design)", () => {
    expect(fromMetaError(400, envelope(131049))).toMatchObject({ category: "recipient", retryable: false })
  })

  it("keeps Meta's own words in detail, on one line, with the trace id", () => {
    const error = fromMetaError(400, envelope(131047, "(#131047) Re-engagement message", "Message failed to send because more than 24 hours\nhave passed"))
    expect(error.detail).toBe("(#131047) Re-engagement message: Message failed to send because more than 24 hours have passed (fbtrace_id AbCdEf123)")
    expect(error.message).toBe("Outside the customer service window: only a template can be sent.")
  })

  it("does not repeat details equal to the message", () => {
    expect(fromMetaError(400, envelope(131026, "Message Undeliverable", "Message Undeliverable")).detail).toBe("Message Undeliverable (fbtrace_id AbCdEf123)")
  })

  it("bounds a long detail", () => {
    expect(fromMetaError(400, envelope(100, "x".repeat(5000))).detail.length).toBeLessThanOrEqual(300)
  })

  it("reads the envelope from a raw JSON string too", () => {
    expect(fromMetaError(400, JSON.stringify(envelope(131056)))).toMatchObject({ category: "quota", upstream_code: 131056 })
  })

  it("the whole 200-299 range is API Permission", () => {
    expect(fromMetaError(403, envelope(299))).toMatchObject({ category: "config", upstream_code: 299 })
    expect(fromMetaError(403, envelope(250))).toMatchObject({ category: "config" })
  })

  it("a code wins over the HTTP status", () => {
    expect(fromMetaError(500, envelope(131026))).toMatchObject({ category: "recipient", retryable: false })
    expect(fromMetaError(400, envelope(131000))).toMatchObject({ category: "gateway", retryable: true })
  })

  it("an unknown code falls back to the HTTP status, keeping the code", () => {
    expect(fromMetaError(400, envelope(999999))).toMatchObject({ category: "unknown", retryable: false, upstream_code: 999999 })
    expect(fromMetaError(503, envelope(999999))).toMatchObject({ category: "gateway", retryable: true, upstream_code: 999999 })
    expect(fromMetaError(429, envelope(999999))).toMatchObject({ category: "quota", retryable: false })
    expect(fromMetaError(401, envelope(999999))).toMatchObject({ category: "config" })
  })

  it("with a message_id, gateway trouble is not retryable", () => {
    const error = fromMetaError(500, envelope(131000), "herald-id")
    expect(error).toMatchObject({ category: "gateway", retryable: false, message_id: "herald-id" })
  })
})

describe("fromMetaError: garbage", () => {
  const garbage: ReadonlyArray<unknown> = [
    undefined, null, "", "<html><body>Bad Gateway</body></html>", "{not json", 42, [], {}, { error: "boom" }, { error: null }, { message: "no envelope" }
  ]

  it("5xx without a known code is gateway trouble, retryable", () => {
    for (const body of garbage) {
      const error = fromMetaError(502, body)
      expect(isRecord(error)).toBe(true)
      expect(error).toMatchObject({ success: false, category: "gateway", retryable: true })
      expect(error).not.toHaveProperty("upstream_code")
      expect(error.detail).toMatch(/^Meta answered HTTP 502/)
    }
  })

  it("other statuses give the category of the status", () => {
    expect(fromMetaError(429, "slow down")).toMatchObject({ category: "quota", retryable: false })
    expect(fromMetaError(401, null)).toMatchObject({ category: "config" })
    expect(fromMetaError(403, "")).toMatchObject({ category: "config" })
    expect(fromMetaError(400, "<html>")).toMatchObject({ category: "unknown", retryable: false })
    expect(fromMetaError(404, undefined)).toMatchObject({ category: "unknown", detail: "Meta answered HTTP 404" })
  })

  it("an envelope without a code or words still says what came", () => {
    const error = fromMetaError(500, { error: { type: "OAuthException" } })
    expect(error).toMatchObject({ category: "gateway", retryable: true, detail: "Meta answered HTTP 500 with code none" })
    expect(error).not.toHaveProperty("upstream_code")
    expect(fromMetaError(400, { error: { code: "131026" } })).toMatchObject({ category: "unknown" })
  })

  it("quotes a garbage body on one bounded line", () => {
    const detail = fromMetaError(500, `line one\nline two ${"x".repeat(1000)}`).detail
    expect(detail).not.toContain("\n")
    expect(detail.length).toBeLessThanOrEqual(330)
  })

  it("categoryOfStatus", () => {
    expect([500, 502, 503, 504, 429, 401, 403, 400, 404, 422, 0].map(categoryOfStatus)).toEqual(
      ["gateway", "gateway", "gateway", "gateway", "quota", "config", "config", "unknown", "unknown", "unknown", "unknown"]
    )
  })
})

describe("fromMetaStatusError: a failed status webhook", () => {
  const statusError = (code: number) => ({
    code,
    title: "Meta chose not to deliver",
    message: "Meta chose not to deliver",
    error_data: { details: "This message was not delivered to maintain healthy ecosystem engagement." },
    href: "https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/"
  })

  it("131049 is recipient, not retryable, Meta's words kept", () => {
    expect(fromMetaStatusError([statusError(131049)])).toEqual({
      success: false,
      message: "Meta did not deliver this marketing message.",
      detail: "Meta chose not to deliver: This message was not delivered to maintain healthy ecosystem engagement.",
      category: "recipient",
      retryable: false,
      upstream_code: 131049
    })
  })

  it("maps every code of the table the same way as a synchronous answer", () => {
    for (const mapping of META_ERROR_CODES) {
      expect(fromMetaStatusError([statusError(mapping.code)])).toMatchObject({ category: mapping.category, upstream_code: mapping.code })
    }
  })

  it("the first error decides", () => {
    expect(fromMetaStatusError([statusError(131026), statusError(131000)])).toMatchObject({ category: "recipient", upstream_code: 131026 })
    expect(fromMetaStatusError(["junk", statusError(130472)])).toMatchObject({ category: "recipient", upstream_code: 130472 })
  })

  it("an unknown code is unknown, whatever it is", () => {
    expect(fromMetaStatusError([statusError(555555)])).toMatchObject({ category: "unknown", retryable: false, upstream_code: 555555 })
  })

  it("with the message id, nothing is retryable", () => {
    expect(fromMetaStatusError([statusError(131000)], "herald-id")).toMatchObject({ category: "gateway", retryable: false, message_id: "herald-id" })
  })

  it("garbage", () => {
    for (const errors of [undefined, null, [], "x", {}, [1, 2], [null]]) {
      const error = fromMetaStatusError(errors)
      expect(isRecord(error)).toBe(true)
      expect(error).toMatchObject({ category: "unknown", retryable: false })
      expect(error).not.toHaveProperty("upstream_code")
    }
    expect(fromMetaStatusError([{ title: "Rate limit hit" }])).toMatchObject({ category: "unknown", detail: "Rate limit hit" })
  })
})

describe("docs/whatsapp-error-codes.md", () => {
  const doc = readFileSync(new URL("../../docs/whatsapp-error-codes.md", import.meta.url), "utf8")

  it("has a row for every mapped code, with its category and retryability", () => {
    for (const mapping of META_ERROR_CODES) {
      const row = doc.split("\n").find((line) => line.startsWith(`| ${mapping.code} |`))
      expect(row, `row for ${mapping.code}`).toBeDefined()
      expect(row).toContain(`| ${mapping.category} |`)
      expect(row).toContain(mapping.category === "gateway" ? "| yes |" : "| no |")
    }
  })
})

// Issue 34: a message.failed's detail repeated Meta's title (the simulator's 0001 number gave
// "(#131026) Message Undeliverable.: Message Undeliverable."). Meta's title, message and details
// often say one thing three ways; the detail says each statement once.
describe("detail: Meta's words, each once", () => {
  const count = (text: string, part: string) => text.toLowerCase().split(part.toLowerCase()).length - 1

  it("a message that is the details with (#code) before it and a full stop", () => {
    const error = fromMetaError(400, envelope(131026, "(#131026) Message Undeliverable.", "Message Undeliverable."))
    expect(error.detail).toBe("(#131026) Message Undeliverable. (fbtrace_id AbCdEf123)")
  })

  it("a failed status whose title, message and details differ only in case and punctuation", () => {
    const error = fromMetaStatusError([{ code: 131026, title: "Message undeliverable", message: "Message undeliverable", error_data: { details: "Message Undeliverable." } }])
    expect(error.detail).toBe("Message undeliverable")
  })

  it("details that hold the message say it once, in full", () => {
    const error = fromMetaError(400, envelope(100, "(#100) Invalid parameter", "Invalid parameter: components[0] needs 2 values"))
    expect(error.detail).toBe("Invalid parameter: components[0] needs 2 values (fbtrace_id AbCdEf123)")
  })

  it("the simulator's own failures read without a repeat", () => {
    for (const [answer, said] of [[undeliverable(), "Message Undeliverable"], [somethingWentWrong(), "Something went wrong"]] as const) {
      const error = fromMetaError(answer.status, answer.body)
      expect(count(error.detail, said), error.detail).toBe(1)
    }
    const failed = fromMetaStatusError([ECOSYSTEM_ERROR])
    expect(count(failed.detail, ECOSYSTEM_ERROR.title)).toBe(1)
  })
})
