import { OpenApi } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { HeraldApi } from "../../src/http/Api.ts"

// A client generated from the OpenAPI document must send what Herald takes: Basic on the public
// API, Bearer on /api/v1/app.
describe("the OpenAPI document's credentials", () => {
  const doc = OpenApi.fromApi(HeraldApi) as any
  const schemeOf = (path: string, method: string) => {
    const [requirement] = doc.paths[path][method].security as Array<Record<string, unknown>>
    return doc.components.securitySchemes[Object.keys(requirement!)[0]!]
  }

  it("says Basic for every operation of /api/v1/public", () => {
    const operations = Object.entries<any>(doc.paths).filter(([path]) => path.startsWith("/api/v1/public/"))
      .flatMap(([path, ops]) => Object.keys(ops).map((method) => [path, method] as const))
    expect(operations.length).toBeGreaterThanOrEqual(5)
    for (const [path, method] of operations) expect(schemeOf(path, method), `${method} ${path}`).toEqual({ type: "http", scheme: "basic" })
  })

  it("says Bearer for /api/v1/app/me", () => {
    expect(schemeOf("/api/v1/app/me", "get")).toEqual({ type: "http", scheme: "bearer" })
  })
})
