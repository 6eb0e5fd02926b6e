import { describe, expect, it } from "@effect/vitest"
import { openApiDocument } from "../../src/http/openApiDocument.ts"
import { compileDocument, problemWith } from "../support/openApiResponses.ts"

// The checker every end-to-end answer goes through (test/support/openApiResponses.ts), on the
// document the nodes serve: it must refuse what the document does not describe, or it holds the
// document to nothing.

const document = compileDocument(structuredClone(openApiDocument()) as any)
const json = "application/json"
const check = (method: string, path: string, status: number, body: unknown) => problemWith(document, method, path, status, json, JSON.stringify(body))

describe("the e2e answers' check against the OpenAPI document", () => {
  it("takes an answer the document describes", () => {
    expect(check("GET", "/health/live", 200, { status: "live" })).toBeUndefined()
    expect(check("GET", "/api/v1/rcs/bots", 200, { success: true, bots: [] })).toBeUndefined()
    expect(check("POST", "/api/v1/public/message", 400, { result: false, success: false, code: "invalid_request", message: "m", errors: [] })).toBeUndefined()
    expect(check("POST", "/api/v1/rcs/webhooks", 415, { success: false, code: "unsupported_media_type", message: "m" })).toBeUndefined()
  })

  it("refuses a status the operation does not declare, naming the operation", () => {
    expect(check("GET", "/api/v1/rcs/bots", 418, { success: false, code: "teapot", message: "m" })).toMatch(/^GET \/api\/v1\/rcs\/bots \(.+\) answered 418, a status the document does not declare/)
  })

  it("refuses a body its schema does not take: an undeclared field, a wrong type, a missing field", () => {
    expect(check("GET", "/api/v1/rcs/bots", 200, { success: true, bots: [], extra: 1 })).toMatch(/additional propert/)
    expect(check("GET", "/api/v1/rcs/bots", 200, { success: "yes", bots: [] })).toMatch(/answered 200 with a body its schema refuses/)
    expect(check("GET", "/api/v1/rcs/bots", 200, { success: true })).toMatch(/required property 'bots'/)
    expect(check("POST", "/api/v1/public/message", 400, { success: false, code: "invalid_request", message: "m", errors: [] })).toMatch(/result/)
    // Conversions sent with the secret key carry result on their refusals too (src/http/resultFlag.ts).
    expect(check("POST", "/api/v1/app/meta-ads/capi/events", 400, { success: false, code: "invalid_request", message: "m", errors: [] })).toMatch(/result/)
    expect(check("POST", "/api/v1/app/meta-ads/capi/events", 400, { result: false, success: false, code: "invalid_request", message: "m", errors: [] })).toBeUndefined()
  })

  it("matches literal segments before parameters, and holds a method the path does not take to 405", () => {
    expect(check("GET", "/api/v1/rcs/webhooks/dead-letter", 200, { success: true, items: [] })).toBeUndefined()
    expect(check("PUT", "/api/v1/rcs/bots", 405, { success: false, code: "method_not_allowed", message: "m", allowed_methods: ["GET"] })).toBeUndefined()
    expect(check("PUT", "/api/v1/rcs/bots", 200, {})).toMatch(/has no PUT on this path/)
    expect(check("GET", "/api/v1/graphql", 200, {})).toBeUndefined()
    // GET /rcs/messages/send is GET /rcs/messages/{id} (the literal path takes only POST), as the router finds it.
    expect(check("GET", "/api/v1/rcs/messages/send", 400, { success: false, code: "invalid_request", message: "m", errors: [] })).toBeUndefined()
    expect(check("GET", "/api/v1/rcs/messages/send", 201, {})).toMatch(/^GET \/api\/v1\/rcs\/messages\/\{id\}/)
  })
})
