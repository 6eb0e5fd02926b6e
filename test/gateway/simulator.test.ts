import { randomUUID } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Exit, Scope } from "effect"
import type { MessageContent } from "../../src/domain/content.ts"
import { makeRbmGateway } from "../../src/gateway/rbm/RbmGateway.ts"
import type { SendOutcome } from "../../src/gateway/rcs.ts"
import { directTransport } from "../../src/simulator/directTransport.ts"
import { makeGatewaySimulator } from "../../src/simulator/GatewaySimulator.ts"
import { freePort } from "../support/TcpProxy.ts"
import { eventually, makeReceiver, pause } from "./receiver.ts"

const TOKEN = "sim-test-token"
const DELIVERED_MS = 50
const READ_MS = 120
const TIMEOUT_MS = 300
const BOT = "bot-under-test"
const hello: MessageContent = { type: "text", text: "hello", suggestions: [] }

/** Receiver, simulator on port 0 calling it back, and the RBM adapter pointed at the simulator. */
const setup = (options: { answer?: (n: number) => number; callbackUrl?: () => string | undefined } = {}) =>
  Effect.gen(function*() {
    const receiver = yield* makeReceiver(TOKEN, options.answer)
    const simulator = yield* makeGatewaySimulator({
      port: 0,
      callbackUrl: options.callbackUrl ?? (() => receiver.url),
      clientToken: TOKEN,
      deliveredMs: DELIVERED_MS,
      readMs: READ_MS
    })
    const gateway = yield* makeRbmGateway({ baseUrl: simulator.url, timeoutMs: TIMEOUT_MS })
    const send = (to: string, messageId = randomUUID(), content: MessageContent = hello) =>
      Effect.gen(function*() {
        const started = Date.now()
        const outcome = yield* gateway.send({ messageId, agentId: BOT, to, content })
        return { outcome, messageId, tookMs: Date.now() - started }
      })
    const http = (path: string, body?: unknown) =>
      Effect.promise(async () => {
        const response = await fetch(`${simulator.url}${path}`, body === undefined ? {} : { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } })
        return { status: response.status, body: (await response.json()) as any }
      })
    return { receiver, simulator, gateway, send, http }
  })

const errorOf = (outcome: SendOutcome) => (outcome._tag === "Accepted" ? undefined : outcome.error)

describe("RBM adapter against the gateway simulator", () => {
  it.scoped("an ordinary number: accepted, delivered once, DELIVERED then READ callbacks, signed", () =>
    Effect.gen(function*() {
      const { receiver, simulator, send } = yield* setup()
      const { outcome, messageId } = yield* send("+919812340042")
      expect(outcome._tag).toBe("Accepted")
      expect(simulator.log(messageId)).toEqual({ sends: 1, deliveries: 1 })
      yield* eventually(() => receiver.statusesOf(messageId).length >= 2)
      const statuses = receiver.statusesOf(messageId)
      expect(statuses.map((s) => s.status)).toEqual(["delivered", "read"])
      expect(statuses.every((s) => s.phone === "+919812340042" && s.agentId === BOT)).toBe(true)
      expect(new Set(statuses.map((s) => s.eventId)).size).toBe(2)
      // Every callback verified against the token (a bad signature would not be a Report).
      expect(receiver.received.every((r) => r.read._tag === "Report")).toBe(true)
    }))

  it.scoped("0001: rejected synchronously as recipient, not retryable, no message_id, no callbacks", () =>
    Effect.gen(function*() {
      const { receiver, simulator, send } = yield* setup()
      const { outcome, messageId } = yield* send("+919812340001")
      expect(outcome._tag).toBe("Rejected")
      expect(errorOf(outcome)).toMatchObject({ success: false, category: "recipient", retryable: false })
      expect(errorOf(outcome)?.message_id).toBeUndefined()
      expect(simulator.log(messageId)).toEqual({ sends: 1, deliveries: 0 })
      yield* pause(READ_MS + 150)
      expect(receiver.received).toHaveLength(0)
    }))

  it.scoped("0002: no answer, unconfirmed after the timeout with the message_id; never delivered, no callbacks", () =>
    Effect.gen(function*() {
      const { receiver, simulator, send } = yield* setup()
      const { outcome, messageId, tookMs } = yield* send("+919812340002")
      expect(outcome._tag).toBe("Unconfirmed")
      expect(errorOf(outcome)).toMatchObject({ category: "unknown", retryable: false, message_id: messageId, message: "send not confirmed" })
      expect(tookMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 20)
      expect(tookMs).toBeLessThan(TIMEOUT_MS + 1_500)
      expect(simulator.log(messageId)).toEqual({ sends: 1, deliveries: 0 })
      // The adapter gave up on the held request and closed it.
      yield* eventually(() => simulator.totals().held === 0)
      expect(simulator.totals().held).toBe(0)
      yield* pause(READ_MS + 100)
      expect(receiver.received).toHaveLength(0)
    }))

  it.scoped("0003: 503, rejected as gateway and retryable, nothing delivered", () =>
    Effect.gen(function*() {
      const { receiver, simulator, send } = yield* setup()
      const { outcome, messageId } = yield* send("+919812340003")
      expect(outcome._tag).toBe("Rejected")
      expect(errorOf(outcome)).toMatchObject({ category: "gateway", retryable: true })
      expect(errorOf(outcome)?.message_id).toBeUndefined()
      expect(simulator.log(messageId)).toEqual({ sends: 1, deliveries: 0 })
      yield* pause(READ_MS + 150)
      expect(receiver.received).toHaveLength(0)
    }))

  it.scoped("0004: connection cut after the message was taken: unconfirmed at once, yet delivered and reported", () =>
    Effect.gen(function*() {
      const { receiver, simulator } = yield* setup()
      // A long timeout, so that an answer inside it can only come from the broken connection.
      const patient = yield* makeRbmGateway({ baseUrl: simulator.url, timeoutMs: 5_000 })
      const messageId = randomUUID()
      const started = Date.now()
      const outcome = yield* patient.send({ messageId, agentId: BOT, to: "+919812340004", content: hello })
      expect(outcome._tag).toBe("Unconfirmed")
      expect(errorOf(outcome)).toMatchObject({ category: "unknown", retryable: false, message_id: messageId, message: "send not confirmed" })
      expect(errorOf(outcome)?.detail).toContain("connection to the gateway broke")
      expect(Date.now() - started).toBeLessThan(2_500)
      expect(simulator.log(messageId)).toEqual({ sends: 1, deliveries: 1 })
      yield* eventually(() => receiver.statusesOf(messageId).length >= 2)
      expect(receiver.statusesOf(messageId).map((s) => s.status)).toEqual(["delivered", "read"])
    }))

  it.scoped("0005: delivered but never read", () =>
    Effect.gen(function*() {
      const { receiver, simulator, send } = yield* setup()
      const { outcome, messageId } = yield* send("+919812340005")
      expect(outcome._tag).toBe("Accepted")
      yield* eventually(() => receiver.statusesOf(messageId).length >= 1)
      yield* pause(READ_MS + 150)
      expect(receiver.statusesOf(messageId).map((s) => s.status)).toEqual(["delivered"])
      expect(simulator.log(messageId)).toEqual({ sends: 1, deliveries: 1 })
    }))

  it.scoped("0006: accepted, then rejected asynchronously (TTL_EXPIRATION_REVOKED) as a failed report", () =>
    Effect.gen(function*() {
      const { receiver, simulator, send } = yield* setup()
      const { outcome, messageId } = yield* send("+919812340006")
      expect(outcome._tag).toBe("Accepted")
      yield* eventually(() => receiver.statusesOf(messageId).length >= 1)
      yield* pause(READ_MS + 100)
      const statuses = receiver.statusesOf(messageId)
      expect(statuses).toHaveLength(1)
      expect(statuses[0]).toMatchObject({ status: "failed", phone: "+919812340006", agentId: BOT, error: { success: false, category: "recipient", retryable: false } })
      expect(JSON.parse(Buffer.from(JSON.parse(receiver.received[0]!.body).message.data, "base64").toString()).eventType).toBe("TTL_EXPIRATION_REVOKED")
      expect(simulator.log(messageId)).toEqual({ sends: 1, deliveries: 0 })
    }))

  it.scoped("a reused messageId is answered 200 again but not delivered again, and calls back only once", () =>
    Effect.gen(function*() {
      const { receiver, simulator, send } = yield* setup()
      const messageId = randomUUID()
      const first = yield* send("+919812340077", messageId)
      const second = yield* send("+919812340077", messageId)
      expect(first.outcome._tag).toBe("Accepted")
      expect(second.outcome._tag).toBe("Accepted")
      expect(simulator.log(messageId)).toEqual({ sends: 2, deliveries: 1 })
      yield* eventually(() => receiver.statusesOf(messageId).length >= 2)
      yield* pause(READ_MS + 150)
      expect(receiver.statusesOf(messageId).map((s) => s.status)).toEqual(["delivered", "read"])
    }))

  it.scoped("a reused messageId gets the same AgentMessage resource", () =>
    Effect.gen(function*() {
      const { simulator } = yield* setup()
      const post = () =>
        Effect.promise(async () => {
          const response = await fetch(`${simulator.url}/v1/phones/+919812340078/agentMessages?messageId=fixed-id&agentId=${BOT}`, {
            method: "POST",
            body: JSON.stringify({ contentMessage: { text: "hi" } })
          })
          return { status: response.status, body: await response.json() }
        })
      const first = yield* post()
      yield* pause(5)
      const second = yield* post()
      expect(first.status).toBe(200)
      expect(first.body).toMatchObject({ name: "phones/+919812340078/agentMessages/fixed-id" })
      expect(second).toEqual(first)
    }))

  it.scoped("a callback Herald answers 503 is retried until it gets through", () =>
    Effect.gen(function*() {
      const { receiver, simulator, send } = yield* setup({ answer: (n) => (n === 0 ? 503 : 200) })
      const { messageId } = yield* send("+919812340088")
      yield* eventually(() => receiver.statusesOf(messageId).length >= 2 && simulator.totals().callbacks.pending === 0, 5_000)
      const statuses = receiver.statusesOf(messageId)
      expect(statuses.map((s) => s.status).sort()).toEqual(["delivered", "read"])
      expect(simulator.totals().callbacks).toMatchObject({ sent: 2, failed_attempts: 1, failed: 0, pending: 0 })
    }))

  it.scoped("with no callback URL yet, callbacks wait and go out once there is one", () =>
    Effect.gen(function*() {
      let url: string | undefined
      const { receiver, send } = yield* setup({ callbackUrl: () => url })
      const { messageId } = yield* send("+919812340099")
      yield* pause(READ_MS + 100)
      expect(receiver.received).toHaveLength(0)
      url = receiver.url
      yield* eventually(() => receiver.statusesOf(messageId).length >= 2, 5_000)
      expect(receiver.statusesOf(messageId).map((s) => s.status).sort()).toEqual(["delivered", "read"])
    }))

  it.scoped("media and content problems come back as media and content rejections", () =>
    Effect.gen(function*() {
      const { send } = yield* setup()
      const badMedia = yield* send("+919812340010", randomUUID(), {
        type: "rich_card",
        rich_card: { title: "t", media: { url: "ftp://files.example/a.png", height: "medium" } },
        suggestions: []
      })
      expect(errorOf(badMedia.outcome)).toMatchObject({ category: "media", retryable: false })
      const empty = yield* send("+919812340011", randomUUID(), { type: "text", text: "", suggestions: [] })
      expect(errorOf(empty.outcome)).toMatchObject({ category: "content", retryable: false })
    }))

  it.scoped("nothing listening: rejected as gateway, retryable (nothing was sent)", () =>
    Effect.gen(function*() {
      const port = yield* Effect.promise(() => freePort())
      const gateway = yield* makeRbmGateway({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: TIMEOUT_MS })
      const outcome = yield* gateway.send({ messageId: randomUUID(), agentId: BOT, to: "+919812340042", content: hello })
      expect(outcome._tag).toBe("Rejected")
      expect(errorOf(outcome)).toMatchObject({ category: "gateway", retryable: true })
      expect(errorOf(outcome)?.message_id).toBeUndefined()
      expect(errorOf(outcome)?.detail).toContain("ECONNREFUSED")
    }))

  it.scoped("capability: reachable with features, unreachable for 0001, unavailable for 0003", () =>
    Effect.gen(function*() {
      const { gateway } = yield* setup()
      const capable = yield* gateway.capability(BOT, "+919812340042")
      expect(capable.reachable).toBe(true)
      expect(capable.features).toContain("RICHCARD_STANDALONE")
      expect(yield* gateway.capability(BOT, "+919812340001")).toEqual({ phone: "+919812340001", reachable: false, features: [] })
      const down = yield* Effect.either(gateway.capability(BOT, "+919812340003"))
      expect(Either.isLeft(down) && down.left._tag).toBe("GatewayUnavailable")
    }))
})

describe("the direct transport (GATEWAY_SIM_TRANSPORT=direct)", () => {
  // Live clock: a held send (0002) waits out the timeout with Effect.sleep.
  it.scopedLive("gives every recipient rule the outcome the HTTP path gives, in the same ledger", () =>
    Effect.gen(function*() {
      const { simulator, gateway: overHttp } = yield* setup()
      const direct = yield* makeRbmGateway({ baseUrl: simulator.url, timeoutMs: TIMEOUT_MS, transport: directTransport(simulator, TIMEOUT_MS) })
      const shape = (outcome: SendOutcome, messageId: string) => {
        const error = errorOf(outcome)
        return error === undefined
          ? { tag: outcome._tag }
          : { tag: outcome._tag, category: error.category, retryable: error.retryable, message: error.message, withId: error.message_id === messageId }
      }
      for (const suffix of ["0042", "0001", "0002", "0003", "0004", "0005"]) {
        const to = `+91981234${suffix}`
        const viaHttp = randomUUID()
        const viaCall = randomUUID()
        const a = yield* overHttp.send({ messageId: viaHttp, agentId: BOT, to, content: hello })
        const b = yield* direct.send({ messageId: viaCall, agentId: BOT, to, content: hello })
        expect(shape(b, viaCall), suffix).toEqual(shape(a, viaHttp))
        expect(simulator.log(viaCall), suffix).toEqual(simulator.log(viaHttp))
      }
      // A reused messageId is taken again and never delivered twice, as over HTTP.
      const id = randomUUID()
      expect((yield* direct.send({ messageId: id, agentId: BOT, to: "+919812340077", content: hello }))._tag).toBe("Accepted")
      expect((yield* direct.send({ messageId: id, agentId: BOT, to: "+919812340077", content: hello }))._tag).toBe("Accepted")
      expect(simulator.log(id)).toEqual({ sends: 2, deliveries: 1 })
    }))

  it.scoped("with callbacks off, the simulator calls nobody back", () =>
    Effect.gen(function*() {
      const receiver = yield* makeReceiver(TOKEN)
      const simulator = yield* makeGatewaySimulator({
        port: 0,
        callbackUrl: () => receiver.url,
        clientToken: TOKEN,
        deliveredMs: 0,
        readMs: 0,
        callbacks: false
      })
      const direct = yield* makeRbmGateway({ baseUrl: simulator.url, timeoutMs: TIMEOUT_MS, transport: directTransport(simulator, TIMEOUT_MS) })
      const messageId = randomUUID()
      expect((yield* direct.send({ messageId, agentId: BOT, to: "+919812340042", content: hello }))._tag).toBe("Accepted")
      expect(simulator.log(messageId)).toEqual({ sends: 1, deliveries: 1 })
      yield* pause(200)
      expect(receiver.received).toHaveLength(0)
    }))
})

describe("gateway simulator endpoints", () => {
  it.scoped("/simulate/inbound delivers a signed user message; a postback makes it a tapped suggestion", () =>
    Effect.gen(function*() {
      const { receiver, http } = yield* setup()
      const plain = yield* http("/simulate/inbound", { bot_id: BOT, from: "+919800000001", text: "hi there" })
      expect(plain.status).toBe(202)
      const tapped = yield* http("/simulate/inbound", { bot_id: BOT, from: "+919800000001", text: "Yes", postback_data: "yes_1" })
      yield* eventually(() => receiver.received.length >= 2)
      const reports = receiver.received.map((r) => (r.read._tag === "Report" ? r.read.report : undefined))
      expect(reports).toContainEqual(expect.objectContaining({ _tag: "Inbound", messageId: plain.body.message_id, agentId: BOT, phone: "+919800000001", text: "hi there" }))
      expect(reports).toContainEqual(expect.objectContaining({ _tag: "Inbound", messageId: tapped.body.message_id, text: "Yes", postbackData: "yes_1" }))
      expect((yield* http("/simulate/inbound", { from: "+1" })).status).toBe(400)
    }))

  it.scoped("/simulate/replay-callback sends the last callback again, byte for byte", () =>
    Effect.gen(function*() {
      const { receiver, send, http } = yield* setup()
      const { messageId } = yield* send("+919812340042")
      yield* eventually(() => receiver.statusesOf(messageId).length >= 2)
      const last = receiver.received[receiver.received.length - 1]!
      const replay = yield* http("/simulate/replay-callback", { message_id: messageId })
      expect(replay.status).toBe(202)
      expect(replay.body).toMatchObject({ message_id: messageId, event_type: "READ" })
      yield* eventually(() => receiver.received.length >= 3)
      const again = receiver.received[2]!
      expect(again.body).toBe(last.body)
      expect(again.signature).toBe(last.signature)
      expect(receiver.statusesOf(messageId).map((s) => s.eventId)).toEqual([
        receiver.statusesOf(messageId)[0]!.eventId,
        replay.body.event_id,
        replay.body.event_id
      ])
      expect((yield* http("/simulate/replay-callback", { message_id: "never-sent" })).status).toBe(404)
    }))

  it.scoped("/simulate/log answers per message and in total", () =>
    Effect.gen(function*() {
      const { send, http } = yield* setup()
      const ok = yield* send("+919812340042")
      yield* send("+919812340001")
      expect((yield* http(`/simulate/log?message_id=${ok.messageId}`)).body).toEqual({ message_id: ok.messageId, sends: 1, deliveries: 1 })
      expect((yield* http("/simulate/log?message_id=unknown")).body).toMatchObject({ sends: 0, deliveries: 0 })
      expect((yield* http("/simulate/log")).body).toMatchObject({ messages: 2, sends: 2, deliveries: 1, held: 0 })
    }))

  it.effect("closing its scope closes the simulator, held requests included", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const simulator = yield* makeGatewaySimulator({ port: 0, callbackUrl: () => undefined, clientToken: TOKEN, deliveredMs: 10, readMs: 20 }).pipe(Scope.extend(scope))
      const held = fetch(`${simulator.url}/v1/phones/+919812340002/agentMessages?messageId=h&agentId=${BOT}`, {
        method: "POST",
        body: JSON.stringify({ contentMessage: { text: "hi" } })
      }).then(() => "answered", () => "cut")
      yield* eventually(() => simulator.totals().held === 1)
      yield* Scope.close(scope, Exit.void)
      expect(yield* Effect.promise(() => held)).toBe("cut")
      const after = yield* Effect.promise(() => fetch(`${simulator.url}/simulate/log`).then(() => "answered", () => "refused"))
      expect(after).toBe("refused")
    }))
})
