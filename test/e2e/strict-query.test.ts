import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"

// Issue 34, item 3: a query parameter an operation does not take was ignored, so a partner e-mail
// pager sending `cursor` (the word of the reference's introduction) instead of the list's
// `next_cursor` got the first page again with 200, forever. Every operation now refuses one with
// 400 invalid_request naming it and the parameters it takes (docs/http.md, Query parameters).

const iso = useIsolation()
const env = envFor(iso)
const cli = cliFor(env)
let node: HeraldProcess
let partnerKey = ""
let spec: any

const METHODS = ["get", "post", "put", "patch", "delete"]

beforeAll(async () => {
  node = await startHerald(env)
  spec = await (await fetch(`${node.url}/api/v1/openapi.json`)).json()
  partnerKey = (await cli("admin", "create-partner", "--name", "Strict Query Partner")).api_key
})
afterAll(() => node?.kill())

describe("query parameters are strict", () => {
  it("a partner list refuses cursor, naming what it takes, and pages by next_cursor", async () => {
    const refused = await callJson(node.url, "GET", "/api/v1/partner/email/identities?limit=1&cursor=abc", partnerKey)
    expect(refused.status).toBe(400)
    expect(refused.body).toEqual({
      success: false,
      code: "invalid_request",
      message: "cursor is not a query parameter of this operation (it takes limit, next_cursor)",
      errors: [{ path: "cursor", message: "is not a query parameter of this operation (it takes limit, next_cursor)" }]
    })
    for (const identity of ["a@strict.example", "b@strict.example"]) {
      expect((await callJson(node.url, "POST", "/api/v1/partner/email/identities", partnerKey, { identity })).status).toBe(200)
    }
    const first = await callJson(node.url, "GET", "/api/v1/partner/email/identities?limit=1", partnerKey)
    expect(first.status).toBe(200)
    expect(typeof first.body.next_cursor).toBe("string")
    const second = await callJson(node.url, "GET", `/api/v1/partner/email/identities?limit=1&next_cursor=${encodeURIComponent(first.body.next_cursor)}`, partnerKey)
    expect(second.status).toBe(200)
    expect(second.body.identities.map((i: any) => i.identity)).not.toEqual(first.body.identities.map((i: any) => i.identity))
  })

  it("an operation without query parameters refuses any, saying it takes none", async () => {
    const refused = await callJson(node.url, "GET", "/api/v1/partner/email/quotas?limit=10", partnerKey)
    expect(refused.status).toBe(400)
    expect(refused.body.errors).toEqual([{ path: "limit", message: "is not a query parameter of this operation (it takes none)" }])
  })

  it("every operation of the document refuses an unknown parameter, before its credentials, naming the ones it documents", async () => {
    const failures: Array<string> = []
    let checked = 0
    for (const [path, item] of Object.entries<any>(spec.paths)) {
      for (const method of METHODS) {
        const operation = item[method]
        if (operation === undefined) continue
        const takes = [...(item.parameters ?? []), ...(operation.parameters ?? [])].filter((p: any) => p.in === "query").map((p: any) => p.name)
        const url = path.replace(/\{[^}]+\}/g, "0b5e8f3c-2d1a-4c6e-9f7b-1a2b3c4d5e6f") + "?colour=red"
        const res = await callJson(node.url, method.toUpperCase(), url)
        checked++
        const message = `is not a query parameter of this operation (${takes.length === 0 ? "it takes none" : `it takes ${takes.join(", ")}`})`
        if (res.status !== 400 || res.body.code !== "invalid_request" || JSON.stringify(res.body.errors) !== JSON.stringify([{ path: "colour", message }])) {
          failures.push(`${method.toUpperCase()} ${path}: ${res.status} ${JSON.stringify(res.body)}`)
        }
      }
    }
    expect(checked).toBeGreaterThan(100)
    expect(failures).toEqual([])
  })
})
