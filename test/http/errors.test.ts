import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpServer } from "@effect/platform"
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer, Option, Schema } from "effect"
import { request } from "node:http"
import { connect } from "node:net"
import { NotFound } from "../../src/domain/errors.ts"
import { withEnvelopeErrors, withStrictPayloads } from "../../src/http/Api.ts"
import { NotFoundResponse } from "../../src/http/errors.ts"
import { metricsRoute } from "../../src/http/HttpMetrics.ts"
import { apiGroup, serveApi } from "../../src/http/adapter/apiRoutes.ts"
import { serveRoutes } from "../../src/http/adapter/NodeAdapter.ts"
import { MAX_BODY_BYTES } from "../../src/http/requestBody.ts"
import { listenerOn } from "../../src/server.ts"

// A small API served through Herald's real middleware, so each error path is exercised the way
// production routes hit it.
class Probe extends HttpApiGroup.make("probe")
  .add(
    HttpApiEndpoint.post("create", "/things")
      .setPayload(Schema.Struct({ name: Schema.String.pipe(Schema.minLength(1)), size: Schema.Int }))
      .addSuccess(Schema.Struct({ ok: Schema.Boolean, bytes: Schema.Number }))
  )
  .add(HttpApiEndpoint.get("missing", "/things/:id").setPath(Schema.Struct({ id: Schema.String })).addSuccess(Schema.Void).addError(NotFoundResponse))
  .add(HttpApiEndpoint.get("dbDown", "/db-down").addSuccess(Schema.Void))
  .add(HttpApiEndpoint.post("touch", "/touch").addSuccess(Schema.Struct({ touched: Schema.Number })))
  .add(
    HttpApiEndpoint.post("nested", "/nested")
      .setPayload(Schema.Struct({ inner: Schema.Struct({ a: Schema.String }), list: Schema.optional(Schema.Array(Schema.Struct({ b: Schema.Number }))) }))
      .addSuccess(Schema.Struct({ ok: Schema.Boolean }))
  )
  .add(HttpApiEndpoint.get("defect", "/defect").addSuccess(Schema.Void)) {}

const ProbeApi = withStrictPayloads(withEnvelopeErrors(HttpApi.make("probe").add(Probe)))

/** Times a body-less handler ran: a request whose body never completes must not get there. */
let touched = 0

const ProbeHandlers = apiGroup(ProbeApi, "probe", (h) =>
  h
    .handle("create", ({ payload }) => Effect.succeed({ ok: true, bytes: payload.name.length }))
    .handle("missing", ({ path }) => Effect.fail(new NotFound({ message: `no thing ${path.id}` })))
    .handle("touch", () => Effect.sync(() => ({ touched: ++touched })))
    .handle("nested", () => Effect.succeed({ ok: true }))
    .handle("dbDown", () => Effect.die(new SqlError({ cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }) })))
    .handle("defect", () => Effect.die(new Error("bug"))))

const ServerLive = serveRoutes(
  Layer.mergeAll(serveApi(ProbeApi).pipe(Layer.provide(ProbeHandlers)), metricsRoute(Option.none())),
  // Short, so that the stalled-body test does not wait out the production 10 s.
  { idleMs: 500, deadlineMs: 2_000 }
).pipe(Layer.provideMerge(listenerOn(0)))

const baseUrl = HttpServer.addressFormattedWith((address) => Effect.succeed(address.replace("0.0.0.0", "127.0.0.1")))

const call = (path: string, init?: RequestInit) =>
  Effect.flatMap(baseUrl, (base) =>
    Effect.promise(async () => {
      const res = await fetch(base + path, init)
      const text = await res.text()
      return { status: res.status, headers: res.headers, body: text.startsWith("{") ? JSON.parse(text) : text }
    }))

const json = (body: string) => ({ method: "POST", headers: { "content-type": "application/json" }, body })

layer(ServerLive)("HTTP error envelope", (it) => {
  it.effect("answers a valid request", () =>
    Effect.gen(function*() {
      const res = yield* call("/things", json(JSON.stringify({ name: "a", size: 1 })))
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ ok: true, bytes: 1 })
    }))

  it.effect("bad JSON → 400 invalid_request", () =>
    Effect.gen(function*() {
      const res = yield* call("/things", json("{\"name\": "))
      expect(res.status).toBe(400)
      expect(res.body).toMatchObject({ success: false, code: "invalid_request" })
      expect(typeof res.body.message).toBe("string")
    }))

  it.effect("a body of the wrong shape → 400 invalid_request naming each field", () =>
    Effect.gen(function*() {
      const res = yield* call("/things", json(JSON.stringify({ name: "", size: 1.5 })))
      expect(res.status).toBe(400)
      expect(res.body.code).toBe("invalid_request")
      expect(res.body.success).toBe(false)
      const paths = (res.body.errors as Array<{ path: string }>).map((e) => e.path)
      expect(paths).toContain("name")
    }))

  it.effect("a missing body → 400 invalid_request", () =>
    Effect.gen(function*() {
      const res = yield* call("/things", { method: "POST" })
      expect(res.status).toBe(400)
      expect(res.body.code).toBe("invalid_request")
    }))

  it.effect("a domain error → its status and code", () =>
    Effect.gen(function*() {
      const res = yield* call("/things/42")
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ success: false, code: "not_found", message: "no thing 42" })
    }))

  it.effect("unknown route → 404 not_found", () =>
    Effect.gen(function*() {
      const res = yield* call("/no/such/route?x=1")
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ success: false, code: "not_found", message: "no route for GET /no/such/route" })
      // A known path with a method it does not take: 405 naming the ones it does.
      const wrongMethod = yield* call("/things", { method: "DELETE" })
      expect(wrongMethod.status).toBe(405)
      expect(wrongMethod.body.code).toBe("method_not_allowed")
      expect(wrongMethod.body.allowed_methods).toContain("POST")
    }))

  it.effect("a declared body over 10 MB → 413 payload_too_large before it is read", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const status = yield* Effect.promise(
        () =>
          new Promise<{ status: number; body: string }>((resolve, reject) => {
            const req = request(base + "/things", { method: "POST", headers: { "content-type": "application/json", "content-length": String(MAX_BODY_BYTES + 1) } }, (res) => {
              let body = ""
              res.on("data", (d) => (body += d)).on("end", () => resolve({ status: res.statusCode ?? 0, body }))
            })
            req.on("error", reject)
            req.write("{")
          })
      )
      expect(status.status).toBe(413)
      expect(JSON.parse(status.body)).toMatchObject({ success: false, code: "payload_too_large" })
    }))

  it.effect("a streamed (chunked) body over 10 MB → 413 payload_too_large", () =>
    Effect.gen(function*() {
      const base = new URL(yield* baseUrl)
      const answer = yield* Effect.promise(
        () =>
          new Promise<string>((resolve) => {
            // A raw socket, so the test reads the answer while it is still uploading.
            const socket = connect(Number(base.port), base.hostname)
            let got = ""
            socket.on("data", (d) => {
              got += d
              if (got.endsWith("}")) socket.destroy()
            }).on("error", () => {}).on("close", () => resolve(got))
            socket.write("POST /things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
            const chunk = "x".repeat(64 * 1024)
            let sent = 0
            const pump = () => {
              if (got !== "" || sent > MAX_BODY_BYTES * 2 || socket.destroyed) return
              socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`, () => {
                sent += chunk.length
                pump()
              })
            }
            pump()
          })
      )
      expect(answer).toMatch(/^HTTP\/1.1 413/)
      expect(answer).toContain("\"code\":\"payload_too_large\"")
    }))

  it.effect("a streamed body within the limit is read", () =>
    Effect.gen(function*() {
      const body = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(JSON.stringify({ name: "streamed", size: 2 })))
          controller.close()
        }
      })
      const res = yield* call("/things", { method: "POST", headers: { "content-type": "application/json" }, body, duplex: "half" } as RequestInit)
      expect(res.status).toBe(200)
      expect(res.body).toEqual({ ok: true, bytes: 8 })
      const bad = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode("{nope"))
          controller.close()
        }
      })
      const res2 = yield* call("/things", { method: "POST", headers: { "content-type": "application/json" }, body: bad, duplex: "half" } as RequestInit)
      expect(res2.status).toBe(400)
      expect(res2.body.code).toBe("invalid_request")
    }))

  it.effect("a body that never completes → 408 request_timeout; the handler never runs", () =>
    Effect.gen(function*() {
      const base = new URL(yield* baseUrl)
      const before = touched
      const rawRequest = (head: string, body: string) =>
        Effect.promise(() =>
          new Promise<{ answer: string; ms: number }>((resolve) => {
            const started = Date.now()
            const socket = connect(Number(base.port), base.hostname)
            let got = ""
            socket.on("data", (d) => (got += d)).on("error", () => {}).on("close", () => resolve({ answer: got, ms: Date.now() - started }))
            socket.write(`${head}\r\nHost: x\r\n\r\n${body}`)
          })
        )
      // Declares 100 bytes, sends 5 and waits: idle past the limit.
      const lied = yield* rawRequest("POST /touch HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 100", "{\"a\":")
      expect(lied.answer).toMatch(/^HTTP\/1.1 408/)
      expect(lied.answer).toContain("\"code\":\"request_timeout\"")
      expect(lied.ms).toBeGreaterThanOrEqual(450)
      // A chunked body that never ends is cut off the same way.
      const chunked = yield* rawRequest("POST /touch HTTP/1.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked", "2\r\n{}\r\n")
      expect(chunked.answer).toMatch(/^HTTP\/1.1 408/)
      expect(touched).toBe(before)
      // The same request whole runs.
      const whole = yield* call("/touch", json("{}"))
      expect(whole.status).toBe(200)
      expect(touched).toBe(before + 1)
    }))

  it.effect("a body of another type than JSON → 415 unsupported_media_type; multipart without a boundary too", () =>
    Effect.gen(function*() {
      for (const type of ["text/plain", "multipart/form-data", "application/x-www-form-urlencoded", "application/json; charset=utf-16", "application/xml"]) {
        const res = yield* call("/things", { method: "POST", headers: { "content-type": type }, body: type.startsWith("multipart") ? "--" : JSON.stringify({ name: "a", size: 1 }) })
        expect(res.status, type).toBe(415)
        expect(res.body, type).toMatchObject({ success: false, code: "unsupported_media_type" })
      }
      const utf8 = yield* call("/things", { method: "POST", headers: { "content-type": "application/json; charset=UTF-8" }, body: JSON.stringify({ name: "a", size: 1 }) })
      expect(utf8.status).toBe(200)
    }))

  it.effect("what cannot be stored or nests too deep → 400 naming the field, before any decoding", () =>
    Effect.gen(function*() {
      const deep = "[".repeat(10_000) + "]".repeat(10_000)
      for (const body of [`{"name": ${deep}, "size": 1}`, deep]) {
        const res = yield* call("/things", json(body))
        expect(res.status).toBe(400)
        expect(res.body.errors[0].message).toMatch(/nests deeper than \d+ levels/)
      }
      const nul = yield* call("/things", json(JSON.stringify({ name: "a\u0000b", size: 1 })))
      expect(nul.status).toBe(400)
      expect(nul.body.errors).toEqual([{ path: "name", message: expect.stringContaining("NUL") }])
      const surrogate = yield* call("/nested", json(JSON.stringify({ inner: { a: "x" }, list: [{ b: 1 }, { b: 2, ["k\ud800"]: 1 }] })))
      expect(surrogate.status).toBe(400)
      expect(surrogate.body.errors[0]).toMatchObject({ path: "list.1", message: expect.stringContaining("surrogate") })
      const pathParam = yield* call("/things/a%00b")
      expect(pathParam.status).toBe(400)
      expect(pathParam.body.errors).toEqual([{ path: "id", message: expect.stringContaining("NUL") }])
      const query = yield* call("/things/1?q=%00")
      expect(query.status).toBe(400)
      expect(query.body.errors[0].path).toBe("q")
    }))

  it.effect("a field the schema does not declare → 400 naming it, at any depth", () =>
    Effect.gen(function*() {
      const top = yield* call("/things", json(JSON.stringify({ name: "a", size: 1, admin: true })))
      expect(top.status).toBe(400)
      expect(top.body.errors.map((e: { path: string }) => e.path)).toContain("admin")
      const nested = yield* call("/nested", json(JSON.stringify({ inner: { a: "x", b: 1 }, list: [{ b: 1, c: 2 }] })))
      expect(nested.status).toBe(400)
      const paths = nested.body.errors.map((e: { path: string }) => e.path)
      expect(paths).toContain("inner.b")
      expect(paths).toContain("list.0.c")
    }))

  it.effect("an unreachable database → 503 service_unavailable, not 500", () =>
    Effect.gen(function*() {
      const res = yield* call("/db-down")
      expect(res.status).toBe(503)
      expect(res.body).toMatchObject({ success: false, code: "service_unavailable" })
    }))

  it.effect("a bug → 500 internal_error without internals", () =>
    Effect.gen(function*() {
      const res = yield* call("/defect")
      expect(res.status).toBe(500)
      expect(res.body).toEqual({ success: false, code: "internal_error", message: "internal error" })
    }))

  it.effect("echoes a sane x-request-id and generates one otherwise", () =>
    Effect.gen(function*() {
      const given = yield* call("/things/1", { headers: { "x-request-id": "abc-123" } })
      expect(given.headers.get("x-request-id")).toBe("abc-123")
      const generated = yield* call("/things/1", { headers: { "x-request-id": "bad id with spaces" } })
      expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
    }))

  it.effect("counts requests per route pattern with latency histograms", () =>
    Effect.gen(function*() {
      yield* call("/things/abc")
      const res = yield* call("/metrics")
      expect(res.headers.get("content-type")).toContain("text/plain")
      expect(res.body).toContain("# TYPE http_requests_total counter")
      expect(res.body).toMatch(/http_requests_total\{method="GET",route="\/things\/:id",status="404"\} \d+/)
      expect(res.body).toMatch(/http_request_duration_seconds_bucket\{method="GET",route="\/things\/:id",le="\+Inf"\} \d+/)
      expect(res.body).toMatch(/http_requests_total\{method="GET",route="unmatched",status="404"\} \d+/)
    }))
})

describe("envelope OpenAPI", () => {
  it("documents the envelope, not HttpApi's default decode error", async () => {
    const { OpenApi } = await import("@effect/platform")
    const spec = JSON.stringify(OpenApi.fromApi(ProbeApi))
    expect(spec).toContain("invalid_request")
    expect(spec).not.toContain("HttpApiDecodeError")
  })
})
