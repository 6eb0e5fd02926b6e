import { describe, expect, it } from "@effect/vitest"
import { guardedLookup, isPrivateAddress, urlProblem } from "../../src/webhooks/urlPolicy.ts"

describe("webhook URL policy", () => {
  it("accepts http and https URLs without credentials", () => {
    expect(urlProblem("https://hooks.example.com/herald", false)).toBeUndefined()
    expect(urlProblem("http://203.0.113.7:8080/x?y=1", false)).toBeUndefined()
  })

  it("refuses other schemes, credentials and garbage", () => {
    expect(urlProblem("ftp://example.com/", false)).toMatch(/https or http/)
    expect(urlProblem("https://user:secret@example.com/", false)).toMatch(/credentials/)
    expect(urlProblem("example.com/hook", false)).toMatch(/absolute URL/)
  })

  it("refuses private, loopback and link-local targets unless allowed", () => {
    for (const url of [
      "http://127.0.0.1/", "http://10.1.2.3/", "http://172.20.0.1/", "http://192.168.1.1/", "http://169.254.169.254/latest/meta-data",
      "http://100.64.0.1/", "http://0.0.0.0/", "http://[::1]/", "http://[fe80::1]/", "http://[fd00::1]/", "http://[::ffff:127.0.0.1]/",
      "http://localhost:8080/", "http://api.localhost/"
    ]) {
      expect(urlProblem(url, false), url).toMatch(/private or loopback/)
      expect(urlProblem(url, true), url).toBeUndefined()
    }
    expect(isPrivateAddress("8.8.8.8")).toBe(false)
    expect(isPrivateAddress("2606:4700::1111")).toBe(false)
  })

  it("checks names again at connect time: a name resolving to a private address is refused", async () => {
    const lookup = (allow: boolean) =>
      new Promise<{ error: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
        guardedLookup(allow)("localhost", {}, (error, address) => resolve({ error, address })))
    const refused = await lookup(false)
    expect(refused.error?.code).toBe("EPRIVATE")
    const allowed = await lookup(true)
    expect(allowed.error).toBeNull()
    expect(["127.0.0.1", "::1"]).toContain(allowed.address)
  })
})
