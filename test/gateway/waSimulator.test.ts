import { createHmac, randomUUID } from "node:crypto"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { CUT, HELD, makeGatewaySimulator } from "../../src/simulator/GatewaySimulator.ts"
import { resolveWaCallbackUrl, WA_EVENTS_PATH } from "../../src/simulator/whatsapp/WaSimulator.ts"
import { eventually, pause } from "./receiver.ts"

const APP_SECRET = "wa-app-secret-for-tests"
const DELIVERED_MS = 50
const READ_MS = 120
const REVIEW_MS = 100
const PHONE_NUMBER_ID = "106540352242922"
const WABA_ID = "102290129340398"

interface Webhook {
  readonly path: string
  readonly raw: string
  readonly signature: string | undefined
  /** Checked here with Meta's recipe, independently of the code under test. */
  readonly signed: boolean
  readonly json: any
}

/** A stand-in for Herald's Meta webhook: records every post and checks its signature. */
const makeWaReceiver = Effect.acquireRelease(
  Effect.async<{ server: Server; received: Array<Webhook> }>((resume) => {
    const received: Array<Webhook> = []
    const server = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const raw = Buffer.concat(chunks)
        const signature = req.headers["x-hub-signature-256"] as string | undefined
        const expected = `sha256=${createHmac("sha256", APP_SECRET).update(raw).digest("hex")}`
        received.push({ path: req.url ?? "", raw: raw.toString("utf8"), signature, signed: signature === expected, json: JSON.parse(raw.toString("utf8")) })
        res.writeHead(200).end()
      })
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ server, received })))
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.close(() => resume(Effect.void))
      server.closeAllConnections()
    })
).pipe(
  Effect.map(({ server, received }) => {
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const changes = (field: string) => received.flatMap((w) => w.json.entry.flatMap((e: any) => e.changes.filter((c: any) => c.field === field)))
    return {
      origin,
      received,
      changes,
      /** Status objects about one Herald message, in arrival order. */
      statusesOf: (messageId: string): Array<any> =>
        changes("messages").flatMap((c: any) => (c.value.statuses ?? []).filter((s: any) => s.biz_opaque_callback_data === messageId)),
      /** The webhooks carrying a status about one Herald message. */
      webhooksOf: (messageId: string) => received.filter((w) => w.raw.includes(`"biz_opaque_callback_data":"${messageId}"`))
    }
  })
)

const setup = (options: { whatsapp?: boolean; bareOrigin?: boolean } = {}) =>
  Effect.gen(function*() {
    const receiver = yield* makeWaReceiver
    const simulator = yield* makeGatewaySimulator({
      port: 0,
      callbackUrl: () => undefined,
      clientToken: "rbm-token",
      deliveredMs: DELIVERED_MS,
      readMs: READ_MS,
      ...(options.whatsapp === false ? {} : {
        whatsapp: {
          callbackUrl: () => (options.bareOrigin ? receiver.origin : `${receiver.origin}${WA_EVENTS_PATH}`),
          appSecret: APP_SECRET,
          templateReviewMs: REVIEW_MS
        }
      })
    })
    const http = (method: string, path: string, body?: unknown, headers: Record<string, string> = { authorization: "Bearer any-token" }) =>
      Effect.promise(async () => {
        const response = await fetch(`${simulator.url}${path}`, {
          method,
          headers: { "content-type": "application/json", ...headers },
          ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
        })
        return { status: response.status, body: (await response.json()) as any }
      })
    return { receiver, simulator, http }
  })

const templateSend = (to: string, id: string, name = "order_update") => ({
  messaging_product: "whatsapp",
  recipient_type: "individual",
  to,
  type: "template",
  template: { name, language: { code: "en" } },
  biz_opaque_callback_data: id
})

const textSend = (to: string, id: string) => ({
  messaging_product: "whatsapp",
  recipient_type: "individual",
  to,
  type: "text",
  text: { body: "hello" },
  biz_opaque_callback_data: id
})

const MESSAGES = `/v23.0/${PHONE_NUMBER_ID}/messages`
const TEMPLATES = `/v23.0/${WABA_ID}/message_templates`

const templateBody = (name: string, category = "UTILITY") => ({
  name,
  language: "en",
  category,
  components: [{ type: "BODY", text: "Your order {{1}} has shipped", example: { body_text: [["A-1"]] } }]
})

describe("WhatsApp simulator: recipient rules", () => {
  it.scoped("an ordinary number: the Cloud API's answer, then sent → delivered → read, signed, with pricing on sent and delivered", () =>
    Effect.gen(function*() {
      const { receiver, simulator, http } = yield* setup()
      const id = randomUUID()
      const { status, body } = yield* http("POST", MESSAGES, templateSend("+919812340042", id))
      expect(status).toBe(200)
      expect(body).toEqual({ messaging_product: "whatsapp", contacts: [{ input: "+919812340042", wa_id: "919812340042" }], messages: [{ id: expect.stringMatching(/^wamid\./) }] })
      yield* eventually(() => receiver.statusesOf(id).length >= 3)
      const statuses = receiver.statusesOf(id)
      expect(statuses.map((s) => s.status)).toEqual(["sent", "delivered", "read"])
      expect(statuses.every((s) => s.id === body.messages[0].id && s.recipient_id === "919812340042" && /^\d+$/.test(s.timestamp))).toBe(true)
      expect(statuses[0].conversation).toMatchObject({ id: expect.any(String), expiration_timestamp: expect.any(String), origin: { type: "utility" } })
      expect(statuses[0].pricing).toEqual({ billable: true, pricing_model: "PMP", category: "utility", type: "regular" })
      expect(statuses[1].pricing.category).toBe("utility")
      expect(statuses[2].pricing).toBeUndefined()
      expect(receiver.received.every((w) => w.signed && w.path === WA_EVENTS_PATH)).toBe(true)
      const webhook = receiver.webhooksOf(id)[0]!.json
      expect(webhook).toMatchObject({
        object: "whatsapp_business_account",
        entry: [{ id: "sim-waba", changes: [{ field: "messages", value: { messaging_product: "whatsapp", metadata: { display_phone_number: PHONE_NUMBER_ID, phone_number_id: PHONE_NUMBER_ID } } }] }]
      })
      expect(simulator.waLog(id)).toEqual({ sends: 1 })
    }))

  it.scoped("0001: 400 with 131026 at once, counted, no webhooks", () =>
    Effect.gen(function*() {
      const { receiver, simulator, http } = yield* setup()
      const id = randomUUID()
      const { status, body } = yield* http("POST", MESSAGES, templateSend("919812340001", id))
      expect(status).toBe(400)
      expect(body.error).toMatchObject({ code: 131026, type: "OAuthException", error_data: { messaging_product: "whatsapp", details: expect.any(String) }, fbtrace_id: expect.any(String) })
      expect(simulator.waLog(id)).toEqual({ sends: 1 })
      yield* pause(READ_MS + 100)
      expect(receiver.received).toHaveLength(0)
    }))

  it.scoped("0002: the request is held open, never answered, and counted while held", () =>
    Effect.gen(function*() {
      const { receiver, simulator } = yield* setup()
      const id = randomUUID()
      const outcome = yield* Effect.promise(() =>
        fetch(`${simulator.url}${MESSAGES}`, {
          method: "POST",
          headers: { authorization: "Bearer t", "content-type": "application/json" },
          body: JSON.stringify(templateSend("919812340002", id)),
          signal: AbortSignal.timeout(300)
        }).then(() => "answered", (error: Error) => error.name)
      )
      expect(outcome).toBe("TimeoutError")
      expect(simulator.waLog(id)).toEqual({ sends: 1 })
      yield* eventually(() => simulator.totals().whatsapp.held === 0)
      expect(simulator.totals().whatsapp.held).toBe(0)
      expect(receiver.received).toHaveLength(0)
    }))

  it.scoped("0002: held count while the request waits", () =>
    Effect.gen(function*() {
      const { simulator } = yield* setup()
      const controller = new AbortController()
      const pending = fetch(`${simulator.url}${MESSAGES}`, {
        method: "POST",
        headers: { authorization: "Bearer t" },
        body: JSON.stringify(templateSend("919812340002", randomUUID())),
        signal: controller.signal
      }).catch(() => undefined)
      yield* eventually(() => simulator.totals().whatsapp.held === 1)
      expect(simulator.totals().whatsapp.held).toBe(1)
      expect(simulator.totals().held).toBe(0)
      controller.abort()
      yield* Effect.promise(() => pending)
    }))

  it.scoped("0003: 500 with 131000, nothing sent", () =>
    Effect.gen(function*() {
      const { receiver, http } = yield* setup()
      const { status, body } = yield* http("POST", MESSAGES, templateSend("919812340003", randomUUID()))
      expect(status).toBe(500)
      expect(body.error).toMatchObject({ code: 131000, message: expect.stringContaining("Something went wrong") })
      yield* pause(READ_MS + 100)
      expect(receiver.received).toHaveLength(0)
    }))

  it.scoped("0004: the connection is cut instead of answering, yet the statuses come", () =>
    Effect.gen(function*() {
      const { receiver, simulator } = yield* setup()
      const id = randomUUID()
      const outcome = yield* Effect.promise(() =>
        fetch(`${simulator.url}${MESSAGES}`, { method: "POST", headers: { authorization: "Bearer t" }, body: JSON.stringify(templateSend("919812340004", id)) })
          .then(() => "answered", () => "cut")
      )
      expect(outcome).toBe("cut")
      expect(simulator.waLog(id)).toEqual({ sends: 1 })
      yield* eventually(() => receiver.statusesOf(id).length >= 3)
      expect(receiver.statusesOf(id).map((s) => s.status)).toEqual(["sent", "delivered", "read"])
    }))

  it.scoped("0005: sent and delivered, never read", () =>
    Effect.gen(function*() {
      const { receiver, http } = yield* setup()
      const id = randomUUID()
      expect((yield* http("POST", MESSAGES, templateSend("919812340005", id))).status).toBe(200)
      yield* eventually(() => receiver.statusesOf(id).length >= 2)
      yield* pause(READ_MS + 100)
      expect(receiver.statusesOf(id).map((s) => s.status)).toEqual(["sent", "delivered"])
    }))

  it.scoped("0006: accepted, then a failed status with 131049", () =>
    Effect.gen(function*() {
      const { receiver, http } = yield* setup()
      const id = randomUUID()
      expect((yield* http("POST", MESSAGES, templateSend("919812340006", id))).status).toBe(200)
      yield* eventually(() => receiver.statusesOf(id).length >= 2)
      yield* pause(READ_MS)
      const statuses = receiver.statusesOf(id)
      expect(statuses.map((s) => s.status)).toEqual(["sent", "failed"])
      expect(statuses[1].errors).toEqual([expect.objectContaining({ code: 131049, title: "This message was not delivered to maintain healthy ecosystem engagement." })])
      expect(statuses[1].pricing).toBeUndefined()
    }))
})

describe("WhatsApp simulator: requests Meta refuses", () => {
  it.scoped("a body Meta's schema refuses: 400 code 100 with the details, not counted", () =>
    Effect.gen(function*() {
      const { simulator, http } = yield* setup()
      const id = randomUUID()
      const { to: _, ...noRecipient } = templateSend("919812340042", id)
      const { status, body } = yield* http("POST", MESSAGES, noRecipient)
      expect(status).toBe(400)
      expect(body.error).toMatchObject({ type: "OAuthException", code: 100, error_data: { messaging_product: "whatsapp", details: expect.stringContaining("to") } })
      expect(simulator.waLog(id)).toEqual({ sends: 0 })
      expect((yield* http("POST", MESSAGES, "not json")).body.error.code).toBe(100)
    }))

  it.scoped("no Authorization header: 401 code 190; any Bearer token or access_token passes", () =>
    Effect.gen(function*() {
      const { http } = yield* setup()
      const missing = yield* http("POST", MESSAGES, templateSend("919812340042", randomUUID()), {})
      expect(missing.status).toBe(401)
      expect(missing.body.error).toMatchObject({ code: 190, type: "OAuthException" })
      expect((yield* http("POST", `${MESSAGES}?access_token=x`, templateSend("919812340042", randomUUID()), {})).status).toBe(200)
      expect((yield* http("POST", TEMPLATES, templateBody("x_template"), {})).status).toBe(401)
    }))

  it.scoped("the service window: free-form refused with 131047 until the customer writes, then sent as service", () =>
    Effect.gen(function*() {
      const { receiver, simulator, http } = yield* setup()
      const first = randomUUID()
      const refused = yield* http("POST", MESSAGES, textSend("919812340042", first))
      expect(refused.status).toBe(400)
      expect(refused.body.error).toMatchObject({ code: 131047, message: expect.stringContaining("Re-engagement message") })
      expect(simulator.waLog(first)).toEqual({ sends: 1 })

      const inbound = yield* http("POST", "/simulate/wa/inbound", { phone_number_id: PHONE_NUMBER_ID, from: "+91 98123 40042", text: "hi there", name: "Asha" })
      expect(inbound).toEqual({ status: 202, body: { id: expect.stringMatching(/^wamid\./) } })
      // Another business number has no window with that customer.
      expect((yield* http("POST", "/v23.0/999/messages", textSend("919812340042", randomUUID()))).body.error.code).toBe(131047)

      const second = randomUUID()
      expect((yield* http("POST", MESSAGES, textSend("+919812340042", second))).status).toBe(200)
      yield* eventually(() => receiver.statusesOf(second).length >= 2)
      expect(receiver.statusesOf(second)[0].pricing).toEqual({ billable: false, pricing_model: "PMP", category: "service", type: "free_customer_service" })

      const [message] = receiver.changes("messages").filter((c: any) => c.value.messages !== undefined)
      expect(message.value).toEqual({
        messaging_product: "whatsapp",
        metadata: { display_phone_number: PHONE_NUMBER_ID, phone_number_id: PHONE_NUMBER_ID },
        contacts: [{ profile: { name: "Asha" }, wa_id: "919812340042" }],
        messages: [{ from: "919812340042", id: inbound.body.id, timestamp: expect.stringMatching(/^\d+$/), type: "text", text: { body: "hi there" } }]
      })
      expect(receiver.received.every((w) => w.signed)).toBe(true)
    }))

  it.scoped("a read receipt for an inbound message is taken and not counted", () =>
    Effect.gen(function*() {
      const { simulator, http } = yield* setup()
      const answer = yield* http("POST", MESSAGES, { messaging_product: "whatsapp", status: "read", message_id: "wamid.abc" })
      expect(answer).toEqual({ status: 200, body: { success: true } })
      expect(simulator.totals().whatsapp.sends).toBe(0)
    }))
})

describe("WhatsApp simulator: re-sends and replays", () => {
  it.scoped("the same biz_opaque_callback_data twice is counted and sent twice, with two wamids", () =>
    Effect.gen(function*() {
      const { receiver, http } = yield* setup()
      const id = randomUUID()
      const a = yield* http("POST", MESSAGES, templateSend("919812340042", id))
      const b = yield* http("POST", MESSAGES, templateSend("919812340042", id))
      expect(a.body.messages[0].id).not.toBe(b.body.messages[0].id)
      expect((yield* http("GET", `/simulate/wa/log?id=${id}`)).body).toEqual({ id, sends: 2 })
      yield* eventually(() => receiver.statusesOf(id).length >= 6)
      expect(new Set(receiver.statusesOf(id).map((s) => s.id))).toEqual(new Set([a.body.messages[0].id, b.body.messages[0].id]))
      const totals = (yield* http("GET", "/simulate/wa/log")).body
      expect(totals).toMatchObject({ messages: 1, sends: 2, held: 0 })
    }))

  it.scoped("replay-status posts the last status webhook again, byte for byte and signed; 404 before any", () =>
    Effect.gen(function*() {
      const { receiver, http } = yield* setup()
      const id = randomUUID()
      expect((yield* http("POST", "/simulate/wa/replay-status", { id })).status).toBe(404)
      yield* http("POST", MESSAGES, templateSend("919812340042", id))
      yield* eventually(() => receiver.statusesOf(id).length >= 3)
      const last = receiver.webhooksOf(id).at(-1)!
      const replay = yield* http("POST", "/simulate/wa/replay-status", { id })
      expect(replay).toEqual({ status: 202, body: { id, wamid: expect.stringMatching(/^wamid\./), status: "read" } })
      yield* eventually(() => receiver.webhooksOf(id).length >= 4)
      const again = receiver.webhooksOf(id).at(-1)!
      expect(again.raw).toBe(last.raw)
      expect(again.signature).toBe(last.signature)
      expect(again.signed).toBe(true)
    }))
})

describe("WhatsApp simulator: templates", () => {
  it.scoped("created PENDING, then APPROVED by webhook; a name with `reject` is REJECTED; a template send is priced by its category", () =>
    Effect.gen(function*() {
      const { receiver, http } = yield* setup()
      const created = yield* http("POST", TEMPLATES, templateBody("spring_sale", "MARKETING"))
      expect(created).toEqual({ status: 200, body: { id: expect.stringMatching(/^\d{15,16}$/), status: "PENDING", category: "MARKETING" } })
      const rejected = yield* http("POST", TEMPLATES, templateBody("please_reject_me"))
      expect(receiver.changes("message_template_status_update")).toHaveLength(0)
      yield* eventually(() => receiver.changes("message_template_status_update").length >= 2)
      const updates = receiver.received.filter((w) => w.json.entry[0].changes[0].field === "message_template_status_update").map((w) => w.json)
      const approved = updates.find((u) => u.entry[0].changes[0].value.message_template_name === "spring_sale")
      expect(approved).toEqual({
        object: "whatsapp_business_account",
        entry: [{
          id: WABA_ID,
          time: expect.any(Number),
          changes: [{
            value: { event: "APPROVED", message_template_id: Number(created.body.id), message_template_name: "spring_sale", message_template_language: "en", reason: "NONE" },
            field: "message_template_status_update"
          }]
        }]
      })
      const rejection = updates.find((u) => u.entry[0].changes[0].value.message_template_name === "please_reject_me")
      expect(rejection.entry[0].changes[0].value).toMatchObject({ event: "REJECTED", reason: "INCORRECT_CATEGORY", message_template_id: Number(rejected.body.id) })

      const id = randomUUID()
      yield* http("POST", MESSAGES, templateSend("919812340042", id, "spring_sale"))
      yield* eventually(() => receiver.statusesOf(id).length >= 1)
      expect(receiver.statusesOf(id)[0].pricing.category).toBe("marketing")
    }))

  it.scoped("an invalid template is refused with code 100; delete answers success; a deleted template is not reviewed", () =>
    Effect.gen(function*() {
      const { receiver, http } = yield* setup()
      const invalid = yield* http("POST", TEMPLATES, { name: "x", language: "en" })
      expect(invalid.status).toBe(400)
      expect(invalid.body.error).toMatchObject({ code: 100, error_data: { details: expect.stringContaining("category") } })
      yield* http("POST", TEMPLATES, templateBody("gone_soon"))
      expect(yield* http("DELETE", `${TEMPLATES}?name=gone_soon`)).toEqual({ status: 200, body: { success: true } })
      expect((yield* http("DELETE", TEMPLATES)).status).toBe(400)
      yield* pause(REVIEW_MS + 150)
      expect(receiver.changes("message_template_status_update")).toHaveLength(0)
    }))
})

describe("WhatsApp simulator: calls and payments", () => {
  it.scoped("a call posts a `calls` terminate event, with a recording URL when recorded", () =>
    Effect.gen(function*() {
      const { receiver, http } = yield* setup()
      const call = yield* http("POST", "/simulate/wa/call", { phone_number_id: PHONE_NUMBER_ID, from: "919812340042", status: "completed", duration_sec: 75, recording: true })
      expect(call).toEqual({ status: 202, body: { id: expect.stringMatching(/^wacid\./) } })
      const missed = yield* http("POST", "/simulate/wa/call", { phone_number_id: PHONE_NUMBER_ID, from: "+919812340042", status: "missed", duration_sec: 0, recording: false })
      expect((yield* http("POST", "/simulate/wa/call", { phone_number_id: PHONE_NUMBER_ID, from: "919812340042", status: "busy", duration_sec: 0 })).status).toBe(400)
      yield* eventually(() => receiver.changes("calls").length >= 2)
      const [completed, notAnswered] = receiver.changes("calls")
      expect(completed.value).toEqual({
        messaging_product: "whatsapp",
        metadata: { display_phone_number: PHONE_NUMBER_ID, phone_number_id: PHONE_NUMBER_ID },
        contacts: [{ profile: { name: expect.any(String) }, wa_id: "919812340042" }],
        calls: [{
          id: call.body.id,
          from: "919812340042",
          to: PHONE_NUMBER_ID,
          event: "terminate",
          direction: "USER_INITIATED",
          timestamp: expect.stringMatching(/^\d+$/),
          status: "completed",
          start_time: expect.any(String),
          end_time: expect.any(String),
          duration: 75,
          recording_url: `https://sim.herald.local/recordings/${call.body.id}.ogg`
        }]
      })
      expect(notAnswered.value.calls[0]).toMatchObject({ id: missed.body.id, status: "missed", duration: 0 })
      expect(notAnswered.value.calls[0].recording_url).toBeUndefined()
      expect(receiver.received.every((w) => w.signed)).toBe(true)
    }))

  it.scoped("a payment posts a captured payment status; a control route may name the WABA and display number", () =>
    Effect.gen(function*() {
      const { receiver, http } = yield* setup()
      const payment = yield* http("POST", "/simulate/wa/payment", {
        phone_number_id: PHONE_NUMBER_ID,
        from: "919812340042",
        reference_id: "order-77",
        amount: 499.5,
        currency: "INR",
        waba_id: WABA_ID,
        display_phone_number: "15550001111"
      })
      expect(payment).toEqual({ status: 202, body: { id: expect.stringMatching(/^wamid\./) } })
      expect((yield* http("POST", "/simulate/wa/payment", { phone_number_id: PHONE_NUMBER_ID, from: "919812340042", reference_id: "r", amount: -1, currency: "INR" })).status).toBe(400)
      yield* eventually(() => receiver.received.length >= 1)
      const webhook = receiver.received[0]!.json
      expect(webhook.entry[0].id).toBe(WABA_ID)
      expect(webhook.entry[0].changes[0]).toEqual({
        value: {
          messaging_product: "whatsapp",
          metadata: { display_phone_number: "15550001111", phone_number_id: PHONE_NUMBER_ID },
          statuses: [{
            id: payment.body.id,
            status: "captured",
            type: "payment",
            recipient_id: "919812340042",
            timestamp: expect.stringMatching(/^\d+$/),
            payment: {
              reference_id: "order-77",
              amount: { value: 49_950, offset: 100 },
              currency: "INR",
              transaction: { id: expect.any(String), type: "upi", status: "success", created_timestamp: expect.any(Number), updated_timestamp: expect.any(Number) }
            }
          }]
        },
        field: "messages"
      })
      // Later webhooks about that number carry what the control route said.
      const id = randomUUID()
      yield* http("POST", MESSAGES, templateSend("919812340042", id))
      yield* eventually(() => receiver.webhooksOf(id).length >= 1)
      expect(receiver.webhooksOf(id)[0]!.json.entry[0].id).toBe(WABA_ID)
    }))
})

describe("WhatsApp simulator: Conversions API", () => {
  const hash = "a".repeat(64)
  const now = () => Math.floor(Date.now() / 1_000)
  const event = (overrides: Record<string, unknown> = {}) => ({
    event_name: "Purchase",
    event_time: now(),
    action_source: "business_messaging",
    messaging_channel: "whatsapp",
    user_data: { ph: [hash], ctwa_clid: "clid" },
    custom_data: { currency: "INR", value: 10 },
    ...overrides
  })

  it.scoped("takes valid batches, refuses bad hashes, old events and oversized batches, and logs per dataset", () =>
    Effect.gen(function*() {
      const { http } = yield* setup()
      const ok = yield* http("POST", "/v23.0/ds-1/events", { data: [event(), event({ event_name: "Lead" })] })
      expect(ok).toEqual({ status: 200, body: { events_received: 2, messages: [], fbtrace_id: expect.any(String) } })
      const badHash = yield* http("POST", "/v23.0/ds-1/events", { data: [event({ user_data: { ph: ["+919812340042"] } })] })
      expect(badHash.status).toBe(400)
      expect(badHash.body.error).toMatchObject({ code: 100, type: "OAuthException", error_user_msg: expect.stringContaining("data[0].user_data.ph") })
      expect((yield* http("POST", "/v23.0/ds-1/events", { data: [event({ user_data: { em: hash.toUpperCase() } })] })).status).toBe(400)
      const old = yield* http("POST", "/v23.0/ds-1/events", { data: [event({ event_time: now() - 8 * 86_400 })] })
      expect(old.body.error.error_user_msg).toContain("7 days")
      expect((yield* http("POST", "/v23.0/ds-1/events", { data: Array.from({ length: 1_001 }, () => event()) })).status).toBe(400)
      expect((yield* http("POST", "/v23.0/ds-1/events", { data: [event({ action_source: "carrier_pigeon" })] })).status).toBe(400)
      expect((yield* http("POST", "/v23.0/ds-2/events", { data: [event()] }, {})).status).toBe(401)
      expect((yield* http("POST", "/v23.0/ds-2/events", { data: [event()], access_token: "tok" }, {})).status).toBe(200)

      const log = (yield* http("GET", "/simulate/capi/log?dataset_id=ds-1")).body
      expect(log.requests).toHaveLength(6)
      expect(log.requests[0]).toEqual({ path: "/v23.0/ds-1/events", body: { data: [event(), event({ event_name: "Lead" })].map((e) => ({ ...e, event_time: expect.any(Number) })) }, received_at: expect.any(String), status: 200 })
      expect(log.requests.map((r: any) => r.status)).toEqual([200, 400, 400, 400, 400, 400])
      expect((yield* http("GET", "/simulate/capi/log?dataset_id=ds-2")).body.requests).toHaveLength(1)
      expect((yield* http("GET", "/simulate/capi/log?dataset_id=none")).body).toEqual({ requests: [] })
    }))
})

describe("WhatsApp simulator: in-process and configuration", () => {
  it.scoped("waDirect gives HTTP's answers: accepted, refused, held, cut, and counts them", () =>
    Effect.gen(function*() {
      const { receiver, simulator } = yield* setup()
      const direct = (to: string, id: string, body: object = templateSend(to, id)) => simulator.waDirect("POST", MESSAGES, JSON.stringify(body))
      const id = randomUUID()
      const accepted = direct("919812340042", id)
      expect(accepted).toEqual({ status: 200, body: { messaging_product: "whatsapp", contacts: [{ input: "919812340042", wa_id: "919812340042" }], messages: [{ id: expect.stringMatching(/^wamid\./) }] } })
      expect(direct("919812340001", randomUUID())).toMatchObject({ status: 400, body: { error: { code: 131026 } } })
      expect(direct("919812340002", randomUUID())).toBe(HELD)
      expect(direct("919812340003", randomUUID())).toMatchObject({ status: 500, body: { error: { code: 131000 } } })
      const cut = randomUUID()
      expect(direct("919812340004", cut)).toBe(CUT)
      expect(direct("919812340042", randomUUID(), textSend("919812340042", "x"))).toMatchObject({ status: 400, body: { error: { code: 131047 } } })
      expect(simulator.waDirect("POST", MESSAGES, "{}")).toMatchObject({ status: 400, body: { error: { code: 100 } } })
      expect(simulator.waDirect("POST", TEMPLATES, JSON.stringify(templateBody("direct_one")))).toMatchObject({ status: 200, body: { status: "PENDING" } })
      expect(simulator.waDirect("DELETE", `${TEMPLATES}?name=direct_one`, "")).toEqual({ status: 200, body: { success: true } })
      expect(simulator.waDirect("GET", `/simulate/wa/log?id=${id}`, "")).toEqual({ status: 200, body: { id, sends: 1 } })
      expect(simulator.waDirect("GET", "/v23.0/x/unknown", "")).toMatchObject({ status: 404 })
      expect(simulator.waLog(id)).toEqual({ sends: 1 })
      expect(simulator.totals().whatsapp).toMatchObject({ sends: 6, templates: 0 })
      yield* eventually(() => receiver.statusesOf(id).length >= 3 && receiver.statusesOf(cut).length >= 3)
      expect(receiver.statusesOf(cut).map((s) => s.status)).toEqual(["sent", "delivered", "read"])
    }))

  it.scoped("without whatsapp options the routes answer but nothing is posted", () =>
    Effect.gen(function*() {
      const { receiver, simulator, http } = yield* setup({ whatsapp: false })
      const id = randomUUID()
      expect((yield* http("POST", MESSAGES, templateSend("919812340042", id))).status).toBe(200)
      expect((yield* http("POST", "/simulate/wa/inbound", { phone_number_id: PHONE_NUMBER_ID, from: "919812340042", text: "hi" })).status).toBe(202)
      yield* pause(READ_MS + 100)
      expect(receiver.received).toHaveLength(0)
      expect(simulator.totals().whatsapp).toMatchObject({ sends: 1, inbound: 1, callbacks: { sent: 0, pending: 0 } })
      // The RBM half is untouched: its totals keep their own fields.
      expect(simulator.totals()).toMatchObject({ messages: 0, sends: 0, held: 0 })
    }))

  it.scoped("a bare origin gets Herald's Meta webhook path appended", () =>
    Effect.gen(function*() {
      const { receiver, http } = yield* setup({ bareOrigin: true })
      yield* http("POST", "/simulate/wa/inbound", { phone_number_id: PHONE_NUMBER_ID, from: "919812340042", text: "hi" })
      yield* eventually(() => receiver.received.length >= 1)
      expect(receiver.received[0]!.path).toBe("/api/v1/public/gateway/whatsapp")
      expect(resolveWaCallbackUrl("http://herald:8080")).toBe("http://herald:8080/api/v1/public/gateway/whatsapp")
      expect(resolveWaCallbackUrl("https://herald.example/custom/hook")).toBe("https://herald.example/custom/hook")
      expect(resolveWaCallbackUrl("ftp://x")).toBeUndefined()
    }))
})
