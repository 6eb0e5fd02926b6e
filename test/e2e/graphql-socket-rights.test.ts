import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import WebSocket from "ws"
import { useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor, ownerSession } from "../support/http.ts"

// A GraphQL socket is not authorized once for good (issue 33): two API nodes, the socket on node B,
// the change made where B cannot see it (the key regenerated through node A's HTTP, the plan
// changed by `herald admin set-plan`, a process of its own). B hears of it through the change feed
// and closes the socket (a regenerated key: 4403) or ends its subscriptions (a plan without API:
// FEATURE_LOCKED). Node A runs with a short idle limit: a socket running nothing is closed.

const iso = useIsolation()
const IDLE_MS = 1_500
const base = envFor(iso, { LOG_LEVEL: "warning" })
const cli = cliFor(base)
let apiA: HeraldProcess
let apiB: HeraldProcess
const accounts: Record<string, string> = {}
const sessions: Record<string, { jwt: string; key: string }> = {}
const open: Array<WebSocket> = []

type Json = Record<string, any>

/** A promise that fails after `ms` with `what` (a wait that must end, not a timing assertion). */
const within = <A>(promise: Promise<A>, ms: number, what: string) =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms))])

/**
 * A raw graphql-transport-ws socket on `node`, acknowledged with `key`: every message it receives,
 * operations by id, and how it closed.
 */
const socketOn = async (node: HeraldProcess, key: string) => {
  const socket = new WebSocket(`${node.url.replace(/^http/, "ws")}/api/v1/graphql`, "graphql-transport-ws")
  open.push(socket)
  const messages: Array<Json> = []
  const waiters = new Set<() => void>()
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.once("close", (code, reason) => resolve({ code, reason: String(reason) })))
  socket.on("message", (data) => {
    messages.push(JSON.parse(String(data)))
    for (const wake of waiters) wake()
  })
  /** The first message that `match` accepts, waiting for it. */
  const until = (match: (m: Json) => boolean, what: string) =>
    within(new Promise<Json>((resolve) => {
      const look = () => {
        const found = messages.find(match)
        if (found === undefined) return
        waiters.delete(look)
        resolve(found)
      }
      waiters.add(look)
      look()
    }), 10_000, what)
  await new Promise((resolve, reject) => {
    socket.once("open", resolve)
    socket.once("error", reject)
  })
  socket.send(JSON.stringify({ type: "connection_init", payload: { Authorization: `Bearer ${key}` } }))
  await until((m) => m.type === "connection_ack", "connection_ack")
  let next = 0
  const start = (query: string) => {
    const id = String(++next)
    socket.send(JSON.stringify({ id, type: "subscribe", payload: { query } }))
    return id
  }
  /** A query or mutation: its result (`next`) or its errors (`error`). */
  const run = async (query: string) => {
    const id = start(query)
    const answer = await until((m) => m.id === id && (m.type === "next" || m.type === "error"), `an answer to ${query}`)
    return answer.type === "next" ? answer.payload : { errors: answer.payload }
  }
  return { socket, messages, closed, start, run, until }
}

const me = "{ me { label plan } }"
const statuses = "subscription { messageStatusUpdated { message_id status } }"

beforeAll(async () => {
  ;[apiA, apiB] = await Promise.all([
    startHerald({ ...base, HERALD_ROLE: "api", HERALD_GRAPHQL_IDLE_MS: String(IDLE_MS) }),
    startHerald({ ...base, HERALD_ROLE: "api" })
  ])
  for (const name of ["key", "plan", "idle"]) {
    const made = await cli("admin", "create-account", "--email", `${name}@rights.io`, "--password", `${name} password`, "--label", name, "--plan", "enterprise")
    accounts[name] = made.account_id
    sessions[name] = await ownerSession(apiA.url, `${name}@rights.io`, `${name} password`)
  }
})
afterAll(async () => {
  for (const socket of open) socket.terminate()
  await Promise.all([apiA, apiB].map((n) => n?.kill()))
})

describe("a socket's rights are checked again", () => {
  it("a key regenerated on node A closes node B's socket opened with the old key (4403); the new key works", async () => {
    const old = sessions.key!.key
    const client = await socketOn(apiB, old)
    expect(await client.run(me)).toEqual({ data: { me: { label: "key", plan: "ENTERPRISE" } } })
    client.start(statuses)

    const regenerated = await callJson(apiA.url, "POST", "/api/v1/app/developer/secret-key", sessions.key!.jwt)
    expect(regenerated.status).toBe(200)
    const fresh = regenerated.body.secret_key as string
    expect((await callJson(apiA.url, "POST", "/api/v1/graphql", old, { query: me })).status).toBe(401)

    // Node B did not see the regeneration: it hears of it through the change feed.
    const closed = await within(client.closed, 10_000, "node B's socket closing")
    expect(closed.code).toBe(4403)
    expect(closed.reason).toContain("regenerated")

    // The old key cannot connect again; the new one can, on either node.
    const again = new WebSocket(`${apiB.url.replace(/^http/, "ws")}/api/v1/graphql`, "graphql-transport-ws")
    open.push(again)
    await new Promise((resolve) => again.once("open", resolve))
    again.send(JSON.stringify({ type: "connection_init", payload: { Authorization: `Bearer ${old}` } }))
    expect(await new Promise((resolve) => again.once("close", (code) => resolve(code)))).toBe(4403)
    const renewed = await socketOn(apiB, fresh)
    expect(await renewed.run(me)).toEqual({ data: { me: { label: "key", plan: "ENTERPRISE" } } })
  }, 60_000)

  it("a plan moved to Starter by another process ends node B's subscriptions with FEATURE_LOCKED, and each later operation", async () => {
    const client = await socketOn(apiB, sessions.plan!.key)
    expect(await client.run(me)).toEqual({ data: { me: { label: "plan", plan: "ENTERPRISE" } } })
    const subscription = client.start(statuses)

    await cli("admin", "set-plan", accounts.plan!, "starter")
    expect((await callJson(apiA.url, "POST", "/api/v1/graphql", sessions.plan!.key, { query: me })).body.errors[0].extensions.code).toBe("FEATURE_LOCKED")

    const ended = await client.until((m) => m.id === subscription && (m.type === "error" || m.type === "complete"), "the subscription ending")
    expect(ended.type).toBe("error")
    expect(ended.payload[0].extensions.code).toBe("FEATURE_LOCKED")
    const later = await client.run(me)
    expect(later.errors[0].extensions.code).toBe("FEATURE_LOCKED")
    // The key is still the account's: the socket stays, as a Starter account's socket does.
    expect(client.socket.readyState).toBe(WebSocket.OPEN)

    // Back on a plan with API access, the same socket works again.
    await cli("admin", "set-plan", accounts.plan!, "growth")
    await within((async () => {
      for (;;) {
        const result = await client.run(me)
        if (result.data !== undefined) return result
        await new Promise((r) => setTimeout(r, 100))
      }
    })(), 10_000, "the socket answering again")
  }, 60_000)
})

describe("idle sockets", () => {
  it("a socket running no operation is closed after HERALD_GRAPHQL_IDLE_MS; one holding a subscription is not", async () => {
    const busy = await socketOn(apiA, sessions.idle!.key)
    busy.start(statuses)
    const idle = await socketOn(apiA, sessions.idle!.key)
    expect(await idle.run(me)).toEqual({ data: { me: { label: "idle", plan: "ENTERPRISE" } } })
    const closed = await within(idle.closed, 10_000, "the idle socket closing")
    expect(closed.code).toBe(1000)
    expect(closed.reason).toContain("idle")
    // Another idle limit later, the socket holding a subscription still answers.
    await new Promise((r) => setTimeout(r, IDLE_MS + 500))
    expect(await busy.run(me)).toEqual({ data: { me: { label: "idle", plan: "ENTERPRISE" } } })
  }, 30_000)
})
