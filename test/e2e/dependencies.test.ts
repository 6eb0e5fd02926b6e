import { afterAll, describe, expect, it } from "@effect/vitest"
import { NATS_URL } from "../support/isolation.ts"
import { envFor } from "../support/isolation.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { TcpProxy } from "../support/TcpProxy.ts"
import { eventually, useIsolation } from "../support/e2e.ts"

// Postgres and NATS are shared by every test file running in parallel, so they are never really
// stopped here: the node under test reaches them through a proxy this file switches off and on.

const iso = useIsolation()

const ready = async (node: HeraldProcess) => {
  const res = await fetch(`${node.url}/health/ready`)
  return { status: res.status, body: (await res.json()) as any }
}

/** Waits until /health/ready answers `status` (and, when given, `check` holds of its body). */
const readyAnswers = (node: HeraldProcess, status: number, check: (body: any) => boolean = () => true) =>
  eventually(async () => {
    const r = await ready(node)
    if (r.status !== status || !check(r.body)) throw new Error(`${r.status} ${JSON.stringify(r.body)}`)
    return r
  }, { timeoutMs: 20_000 })

describe("Postgres unavailable", () => {
  const nodes: Array<HeraldProcess> = []
  afterAll(() => Promise.all(nodes.map((n) => n.kill())))

  it("starts without it, answers 503 until it is up, then works without a restart; survives losing it", async () => {
    const proxy = await TcpProxy.reserve({ host: "127.0.0.1", port: 5432 })
    const url = new URL(iso.databaseUrl)
    url.port = String(proxy.port)
    const node = await startHerald(envFor(iso, { DATABASE_URL: url.toString() }), { waitReady: false })
    nodes.push(node)

    const down = await eventually(async () => {
      const r = await ready(node)
      if (r.body.checks?.nats !== "up") throw new Error("NATS not connected yet")
      return r
    })
    expect(down.status).toBe(503)
    expect(down.body).toMatchObject({ success: false, code: "service_unavailable", checks: { postgres: "down", nats: "up" } })
    expect(down.body.message).toContain("postgres")

    await proxy.up()
    const up = await readyAnswers(node, 200)
    expect(up.body.checks).toEqual({ postgres: "up", migrations: "up", nats: "up" })

    // Lost while running: 503 (never 500), and back on its own.
    await proxy.down()
    const lost = await readyAnswers(node, 503)
    expect(lost.body).toMatchObject({ code: "service_unavailable", checks: { postgres: "down" } })
    await proxy.up()
    await readyAnswers(node, 200)
    await proxy.down()
  })
})

describe("NATS unavailable", () => {
  const nodes: Array<HeraldProcess> = []
  afterAll(() => Promise.all(nodes.map((n) => n.kill())))

  it("starts without it, answers 503 until it is up, then works without a restart; survives losing it", async () => {
    const nats = new URL(NATS_URL)
    const proxy = await TcpProxy.reserve({ host: nats.hostname, port: Number(nats.port || 4222) })
    const node = await startHerald(envFor(iso, { NATS_URL: `nats://127.0.0.1:${proxy.port}` }), { waitReady: false })
    nodes.push(node)

    const down = await eventually(async () => {
      const r = await ready(node)
      if (r.body.checks?.postgres !== "up") throw new Error("database not ready yet")
      return r
    })
    expect(down.status).toBe(503)
    expect(down.body).toMatchObject({ code: "service_unavailable", checks: { nats: "down", postgres: "up" } })

    await proxy.up()
    await readyAnswers(node, 200)

    await proxy.down()
    await readyAnswers(node, 503, (body) => body.checks.nats === "down")
    await proxy.up()
    await readyAnswers(node, 200)
    expect(node.output()).toContain("NATS reconnected")
    await proxy.down()
  })
})

describe("NATS that cannot hold HERALD_NATS_REPLICAS", () => {
  const nodes: Array<HeraldProcess> = []
  afterAll(() => Promise.all(nodes.map((n) => n.kill())))

  it("a node asking for 3 replicas of a single server's streams is not ready, naming the setting and what NATS answered; its sends get 503 with Retry-After", async () => {
    // Its own prefix: the other nodes of this file created their streams with one replica.
    const node = await startHerald(envFor(iso, { HERALD_NATS_REPLICAS: "3", HERALD_NATS_PREFIX: `${iso.natsPrefix}r3`, HERALD_ROLE: "api" }), { waitReady: false })
    nodes.push(node)
    const r = await readyAnswers(node, 503, (body) => body.checks?.migrations === "up" && /HERALD_NATS_REPLICAS/.test(body.message))
    expect(r.body.checks).toMatchObject({ nats: "down", postgres: "up", migrations: "up" })
    expect(r.body.message).toMatch(/HERALD_NATS_REPLICAS=3: NATS cannot hold 3 replicas of .* \(it answered ".+"\)/)
    // Every 503 says when to come back.
    expect((await fetch(`${node.url}/health/ready`)).headers.get("retry-after")).toBe("2")
  })
})
