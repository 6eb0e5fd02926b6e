import { describe, expect, it } from "@effect/vitest"
import http from "node:http"
import { Pool } from "undici"
import { type Exchange, exchange } from "../../src/gateway/rbm/exchange.ts"

// A request to the gateway is checked once more as it gets its socket, just before it is written
// (docs/actors.md, "Side effects and the lease"): a node that froze with sends queued for a socket
// and woke without the bot's partition writes none of them. A cluster fault test saw broadcast
// targets reach the simulator twice, sent on waking by a worker paused under SIGSTOP.

const server = async () => {
  const received: Array<string> = []
  const s = http.createServer((req, res) => {
    received.push(req.url ?? "")
    req.resume()
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"))
  })
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve))
  const origin = `http://127.0.0.1:${(s.address() as { port: number }).port}`
  return { origin, received, close: () => new Promise<void>((resolve) => s.close(() => resolve())) }
}

const run = (pool: Pool, path: string, proceed?: () => boolean) =>
  new Promise<Exchange>((resolve) => exchange(pool, { method: "POST", path, headers: {}, body: Buffer.from("{}"), ...(proceed ? { proceed } : {}) }, 5_000, resolve))

describe("gateway exchange", () => {
  it("a request whose check says no when it gets its socket is never written: NotSent", async () => {
    const s = await server()
    const pool = new Pool(s.origin, { connections: 1 })
    try {
      expect(await run(pool, "/sent", () => true)).toMatchObject({ _tag: "Answered", status: 200 })
      const withheld = await run(pool, "/withheld", () => false)
      expect(withheld._tag).toBe("NotSent")
      expect((withheld as { cause: string }).cause).toContain("withheld")
      // The pool is still usable, and the server saw only what was allowed through.
      expect(await run(pool, "/after")).toMatchObject({ _tag: "Answered", status: 200 })
      expect(s.received).toEqual(["/sent", "/after"])
    } finally {
      await pool.destroy()
      await s.close()
    }
  })
})
