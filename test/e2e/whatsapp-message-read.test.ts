import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { eventually, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor, ownerSession } from "../support/http.ts"
import { freePort } from "../support/TcpProxy.ts"

// GET /api/v1/public/message/{id} end to end (issue 34, item 4): a WhatsApp message sent with POST
// /api/v1/public/message read back by its id, as GET /api/v1/rcs/messages/{id} reads an RCS one:
// its status, every status it went through, its callbackData and, when it failed, the Gateway error
// record. Another account's message is 404; the route takes the public API's credential and plan
// like its other routes. Recipients pick the simulator's behaviour by their last four digits
// (docs/gateway.md): 0006 is accepted, then failed by Meta (131049); 0001 is refused at once (131026).

const iso = useIsolation()
let node: HeraldProcess
let simUrl: string
const accounts: Record<string, string> = {}
const keys: Record<string, string> = {}
const numbers: Record<string, string> = {}

type Json = Record<string, any>

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

const pub = (method: string, path: string, body?: unknown, key = keys.a!) => callJson(node.url, method, `/api/v1/public${path}`, key === "" ? undefined : `Basic ${key}`, body)
const readMessage = (id: string, key?: string) => pub("GET", `/message/${id}`, undefined, key)

const send = async (body: Json, key?: string) => {
  const r = await pub("POST", "/message", body, key)
  expect(r.status, JSON.stringify(r.body)).toBe(202)
  return r.body.id as string
}

/** The customer writes to the number (the simulator posts Meta's webhook to Herald): both 24-hour windows open. */
const openWindow = async (from: string, phoneNumberId: string) => {
  const r = await fetch(`${simUrl}/simulate/wa/inbound`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ phone_number_id: phoneNumberId, from, text: "hello" })
  })
  expect(r.status).toBe(202)
  // Herald has the window once a Text is accepted to that number (422 outside_service_window before).
  await eventually(async () => {
    const probe = await pub("POST", "/message", { fullPhoneNumber: from, type: "Text", data: { message: "probe" }, fromPhoneNumberId: phoneNumberId },
      phoneNumberId === numbers.a ? keys.a : keys.b)
    expect(probe.status, JSON.stringify(probe.body)).toBe(202)
  })
}

const withoutAccepted = (history: Array<Json>) => history.filter((h) => h.status !== "accepted")
const acceptedSecondIfAny = (history: Array<Json>) => {
  const at = history.findIndex((h) => h.status === "accepted")
  if (at !== -1) expect(history[at]).toEqual({ status: "accepted", at: expect.stringMatching(ISO_MS), error: null })
  expect([-1, 1]).toContain(at)
}

beforeAll(async () => {
  const simPort = await freePort()
  simUrl = `http://127.0.0.1:${simPort}`
  const env = envFor(iso, { GATEWAY_SIM_PORT: String(simPort), GATEWAY_SIM_DELIVERED_MS: "100", GATEWAY_SIM_READ_MS: "250", LOG_LEVEL: "warning" })
  const cli = cliFor(env)
  node = await startHerald(env)
  const made = await Promise.all(
    [["a", "growth"], ["b", "growth"], ["starter", "starter"]].map(([name, plan]) =>
      cli("admin", "create-account", "--email", `${name}@waread.io`, "--password", `${name} password`, "--label", name!, "--plan", plan!)
    )
  )
  ;["a", "b", "starter"].forEach((name, i) => (accounts[name] = made[i].account_id))
  const [a, b] = await Promise.all([
    cli("admin", "create-wa-number", accounts.a!, "--phone", "+919800000401"),
    cli("admin", "create-wa-number", accounts.b!, "--phone", "+919800000402")
  ])
  numbers.a = a.phone_number_id
  numbers.b = b.phone_number_id
  await Promise.all(["a", "b", "starter"].map(async (name) => {
    keys[name] = (await ownerSession(node.url, `${name}@waread.io`, `${name} password`)).key
  }))
}, 300_000)
afterAll(async () => {
  await node?.kill()
})

describe("GET /api/v1/public/message/{id}", () => {
  it("reads a Text by its id: status read, callbackData, no error, and every status it went through, oldest first", async () => {
    const to = "919876540011"
    await openWindow(to, numbers.a!)
    const id = await send({ fullPhoneNumber: `+${to}`, callbackData: "order-77", type: "Text", data: { message: "Your order shipped" } })
    const read = await eventually(async () => {
      const r = await readMessage(id)
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      expect(r.body.message.status).toBe("read")
      return r.body
    })
    expect(read).toEqual({
      result: true,
      success: true,
      message: {
        id,
        callbackData: "order-77",
        channel: "whatsapp",
        fullPhoneNumber: to,
        type: "Text",
        status: "read",
        error: null,
        phone_number_id: numbers.a,
        template_id: null,
        price: 0,
        attempts: 1,
        created_at: expect.stringMatching(ISO_MS),
        sent_at: expect.stringMatching(ISO_MS),
        delivered_at: expect.stringMatching(ISO_MS),
        read_at: expect.stringMatching(ISO_MS),
        failed_at: null
      },
      history: expect.any(Array)
    })
    // accepted (Meta's answer to the send) is there when that answer was recorded before Meta's
    // first status webhook, which the simulator posts right after it: either may come first.
    expect(withoutAccepted(read.history)).toEqual([
      { status: "queued", at: read.message.created_at, error: null },
      { status: "sent", at: read.message.sent_at, error: null },
      { status: "delivered", at: read.message.delivered_at, error: null },
      { status: "read", at: read.message.read_at, error: null }
    ])
    acceptedSecondIfAny(read.history)
  })

  it("a message Meta failed after accepting it: status failed, the Gateway error record (Meta's code kept) in the message and its history", async () => {
    const to = "919876540006"
    await openWindow(to, numbers.a!)
    const id = await send({ fullPhoneNumber: to, callbackData: "cb-6", type: "Text", data: { message: "hello" } })
    const read = await eventually(async () => {
      const r = await readMessage(id)
      expect(r.body.message?.status).toBe("failed")
      return r.body
    })
    expect(read.message).toMatchObject({
      id,
      callbackData: "cb-6",
      status: "failed",
      failed_at: expect.stringMatching(ISO_MS),
      error: { success: false, category: "recipient", retryable: false, upstream_code: 131049, message: expect.any(String), detail: expect.any(String) }
    })
    expect(withoutAccepted(read.history).map((h: Json) => h.status)).toEqual(["queued", "sent", "failed"])
    acceptedSecondIfAny(read.history)
    expect(read.history.at(-1)).toEqual({ status: "failed", at: read.message.failed_at, error: read.message.error })
  })

  it("a send Meta refused at once: failed with its error, never accepted", async () => {
    const to = "919876540001"
    await openWindow(to, numbers.a!)
    const id = await send({ fullPhoneNumber: to, type: "Text", data: { message: "hello" } })
    const read = await eventually(async () => {
      const r = await readMessage(id)
      expect(r.body.message?.status).toBe("failed")
      return r.body
    })
    expect(read.message).toMatchObject({ callbackData: null, error: { success: false, category: "recipient", upstream_code: 131026 } })
    expect(read.history.map((h: Json) => h.status)).toEqual(["queued", "failed"])
  })

  it("another account's message is 404 not_found, and so is an id that is not one; the owner still reads it", async () => {
    const to = "919876540012"
    await openWindow(to, numbers.b!)
    const theirs = await send({ fullPhoneNumber: to, type: "Text", data: { message: "b's" } }, keys.b)
    await eventually(async () => expect((await readMessage(theirs, keys.b)).status).toBe(200))
    for (const id of [theirs, "0c9e7a52-4f1d-4b8e-9a3c-2d5e6f7a8b9c", "not-an-id"]) {
      const r = await readMessage(id, keys.a)
      expect(r.status, id).toBe(404)
      expect(r.body).toMatchObject({ result: false, success: false, code: "not_found" })
    }
  })

  it("takes the public API's credential and plan: no key, a wrong one or a user token is 401, a Starter plan's key 403 feature_locked", async () => {
    const id = "0c9e7a52-4f1d-4b8e-9a3c-2d5e6f7a8b9c"
    const none = await readMessage(id, "")
    expect(none.status).toBe(401)
    expect(none.body).toMatchObject({ result: false, success: false, code: "invalid_api_key" })
    const wrong = await readMessage(id, "sk_live_0000000000000000000000000000000000000000")
    expect(wrong.status).toBe(401)
    // The secret key as Bearer is the same key (docs/errors.md, authentication): it gets as far as the
    // read, which finds no such message; a user token as Bearer is refused.
    const bearer = await callJson(node.url, "GET", `/api/v1/public/message/${id}`, `Bearer ${keys.a}`)
    expect(bearer.status).toBe(404)
    const token = await callJson(node.url, "GET", `/api/v1/public/message/${id}`, "Bearer eyJhbGciOiJIUzI1NiJ9.e30.x")
    expect(token.status).toBe(401)
    expect(token.body).toMatchObject({ result: false, success: false, code: "invalid_api_key" })
    const starter = await readMessage(id, keys.starter)
    expect(starter.status).toBe(403)
    expect(starter.body).toMatchObject({ result: false, success: false, code: "feature_locked" })
  })
})
