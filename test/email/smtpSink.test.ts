import { createHmac, generateKeyPairSync, randomUUID } from "node:crypto"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import { type AddressInfo, createServer as createNetServer, type Server as NetServer } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { EmailRelay, SMTP_FEEDBACK_PATH, SMTP_FEEDBACK_SIGNATURE_HEADER, type SmtpFeedback } from "../../src/gateway/EmailRelay.ts"
import type { OutgoingMail } from "../../src/gateway/mail.ts"
import { makeNodemailerRelay } from "../../src/gateway/smtp/NodemailerRelay.ts"
import { makeGatewaySimulator } from "../../src/simulator/GatewaySimulator.ts"
import { makeSmtpSink, type SinkMessage } from "../../src/simulator/smtp/SmtpSink.ts"
import { gatewaysOn, heraldListens } from "../gateway/gateways.ts"
import { eventually, pause } from "../gateway/receiver.ts"

const SECRET = "smtp-sink-test-secret"

interface Posted {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: Buffer
}

/** Herald's feedback route stood in for: records every POST, answering what `answer` says (200 by default). */
const makeFeedbackReceiver = (answer: (n: number) => number = () => 200) =>
  Effect.acquireRelease(
    Effect.async<{ server: Server; posted: Array<Posted> }>((resume) => {
      const posted: Array<Posted> = []
      let n = 0
      const server = createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => {
          const status = answer(n++)
          if (status >= 200 && status < 300) posted.push({ path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks) })
          res.writeHead(status).end()
        })
      })
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ server, posted })))
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
        server.closeAllConnections()
      })
  ).pipe(Effect.map(({ server, posted }) => ({ origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, posted })))

const mailTo = (recipient: string, overrides: Partial<OutgoingMail> = {}): OutgoingMail => ({
  messageId: randomUUID(),
  from: "sender@acme.example",
  recipient,
  to: [recipient],
  cc: [],
  replyTo: [],
  subject: "Hello from Herald",
  text: "plain body",
  html: "<p>html body</p>",
  ...overrides
})

/** A sink on a free port and a relay to it; `feedbackUrl` as given. */
const sinkAndRelay = (feedbackUrl: () => string | undefined = () => undefined) =>
  Effect.gen(function*() {
    const sink = yield* makeSmtpSink({ port: 0, feedbackUrl, feedbackSecret: SECRET, complaintDelayMs: 20 })
    const relay = yield* makeNodemailerRelay(sink.url)
    return { sink, relay }
  })

const getJson = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url)
    return { status: response.status, body: response.status === 200 ? ((await response.json()) as unknown) : undefined }
  })

describe("SMTP sink through the nodemailer relay", () => {
  it.scoped("delivers: Accepted, recorded with its envelope, headers and X-Herald-Message-Id", () =>
    Effect.gen(function*() {
      const { sink, relay } = yield* sinkAndRelay()
      const mail = mailTo("alice@example.com", { to: ["alice@example.com", "bob@example.com"], cc: ["carol@example.com"], replyTo: ["help@acme.example"] })
      const outcome = yield* relay.send(mail)
      expect(outcome._tag).toBe("Accepted")
      if (outcome._tag === "Accepted") expect(outcome.response).toMatch(/^250 /)
      const [message, ...rest] = sink.messages("alice@example.com")
      expect(rest).toEqual([])
      expect(message).toMatchObject({ from: "sender@acme.example", to: ["alice@example.com"], subject: "Hello from Herald", html: "<p>html body</p>" })
      expect(message!.text?.trim()).toBe("plain body")
      expect(message!.headers["x-herald-message-id"]).toBe(mail.messageId)
      expect(message!.headers["message-id"]).toBe(`<${mail.messageId}@herald>`)
      expect(message!.headers["to"]).toBe("alice@example.com, bob@example.com")
      expect(message!.headers["cc"]).toBe("carol@example.com")
      expect(message!.headers["reply-to"]).toBe("help@acme.example")
      expect(Date.parse(message!.received_at)).not.toBeNaN()
      // Bob is in To but not this transaction's envelope: his copy is a transaction of its own.
      expect(sink.messages("bob@example.com")).toEqual([])
      expect(sink.stats()).toEqual({ accepted: 1, duplicates: 0, bounced: 0, deferred: 0, rejected: 0, complaints: 0 })
    }))

  it.scoped("bounce…@ is refused 550 at RCPT TO: Bounced", () =>
    Effect.gen(function*() {
      const { sink, relay } = yield* sinkAndRelay()
      const outcome = yield* relay.send(mailTo("bounce.someone@example.com"))
      expect(outcome).toMatchObject({ _tag: "Bounced", code: 550 })
      if (outcome._tag === "Bounced") expect(outcome.response).toContain("5.1.1")
      expect(sink.messages()).toEqual([])
      expect(sink.stats().bounced).toBe(1)
    }))

  it.scoped("soft…@ is refused 451 at RCPT TO: Deferred", () =>
    Effect.gen(function*() {
      const { sink, relay } = yield* sinkAndRelay()
      const outcome = yield* relay.send(mailTo("soft-fail@example.com"))
      expect(outcome).toMatchObject({ _tag: "Deferred", code: 451 })
      expect(sink.stats().deferred).toBe(1)
      // The pooled connection is still good for the next message.
      expect((yield* relay.send(mailTo("after-soft@example.com")))._tag).toBe("Accepted")
    }))

  it.scoped("a reject…@ sender is refused 554 at MAIL FROM: Rejected", () =>
    Effect.gen(function*() {
      const { sink, relay } = yield* sinkAndRelay()
      const outcome = yield* relay.send(mailTo("someone@example.com", { from: "reject-me@acme.example" }))
      expect(outcome).toMatchObject({ _tag: "Rejected", code: 554 })
      expect(sink.messages()).toEqual([])
      expect(sink.stats().rejected).toBe(1)
    }))

  it.scoped("no server listening: Deferred without a code", () =>
    Effect.gen(function*() {
      const { sink } = yield* Effect.scoped(sinkAndRelay())
      // The sink's scope has closed: its port now refuses connections.
      const relay = yield* makeNodemailerRelay(sink.url)
      expect(yield* relay.send(mailTo("someone@example.com"))).toMatchObject({ _tag: "Deferred", code: null })
    }))

  it.scoped("a server that never answers: Deferred without a code once the send deadline passes", () =>
    Effect.gen(function*() {
      const silent = yield* Effect.acquireRelease(
        Effect.async<NetServer>((resume) => {
          // Takes the connection and never greets.
          const server = createNetServer(() => undefined)
          server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
        }),
        (server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
      )
      const relay = yield* makeNodemailerRelay(`smtp://127.0.0.1:${(silent.address() as AddressInfo).port}`, { sendTimeoutMs: 300 })
      const outcome = yield* relay.send(mailTo("someone@example.com"))
      expect(outcome).toMatchObject({ _tag: "Deferred", code: null })
    }))

  it.scoped("the same Message-ID to the same recipient again is answered 250 but recorded once", () =>
    Effect.gen(function*() {
      const { sink, relay } = yield* sinkAndRelay()
      const mail = mailTo("dup@example.com")
      const first = yield* relay.send(mail)
      const again = yield* relay.send(mail)
      expect(first._tag).toBe("Accepted")
      expect(again).toMatchObject({ _tag: "Accepted" })
      if (again._tag === "Accepted") expect(again.response).toContain("already accepted")
      // Same Message-ID, another recipient: a transaction of its own.
      expect((yield* relay.send({ ...mail, recipient: "other@example.com" }))._tag).toBe("Accepted")
      expect(sink.messages("dup@example.com")).toHaveLength(1)
      expect(sink.messages("other@example.com")).toHaveLength(1)
      expect(sink.stats()).toMatchObject({ accepted: 2, duplicates: 1 })
    }))

  it.scoped("complaint…@ is accepted, then a signed complaint report reaches Herald (retried until it answers 2xx)", () =>
    Effect.gen(function*() {
      const receiver = yield* makeFeedbackReceiver((n) => (n === 0 ? 503 : 200))
      const { sink, relay } = yield* sinkAndRelay(() => receiver.origin)
      const mail = mailTo("complaint@example.com")
      expect((yield* relay.send(mail))._tag).toBe("Accepted")
      expect(sink.messages("complaint@example.com")).toHaveLength(1)
      yield* eventually(() => receiver.posted.length > 0, 5_000)
      const [posted] = receiver.posted
      expect(posted!.path).toBe(SMTP_FEEDBACK_PATH)
      const expected = `sha256=${createHmac("sha256", SECRET).update(posted!.body).digest("hex")}`
      expect(posted!.headers[SMTP_FEEDBACK_SIGNATURE_HEADER]).toBe(expected)
      const report = JSON.parse(posted!.body.toString("utf8")) as SmtpFeedback
      expect(report).toMatchObject({ type: "complaint", message_id: mail.messageId, recipient: "complaint@example.com", detail: "abuse" })
      expect(Date.parse(report.occurred_at)).not.toBeNaN()
      expect(sink.stats()).toMatchObject({ accepted: 1, complaints: 1 })
      // A repeat of the message is no second complaint.
      yield* relay.send(mail)
      yield* pause(300)
      expect(receiver.posted).toHaveLength(1)
    }))

  it.scoped("a DKIM key signs the message: the sink sees a DKIM-Signature header", () =>
    Effect.gen(function*() {
      const { sink, relay } = yield* sinkAndRelay()
      const { privateKey } = generateKeyPairSync("rsa", {
        modulusLength: 2048,
        publicKeyEncoding: { type: "spki", format: "pem" },
        privateKeyEncoding: { type: "pkcs8", format: "pem" }
      })
      const outcome = yield* relay.send(mailTo("signed@example.com", { from: "news@acme.example", dkim: { domainName: "acme.example", keySelector: "herald", privateKey } }))
      expect(outcome._tag).toBe("Accepted")
      const signature = sink.messages("signed@example.com")[0]?.headers["dkim-signature"]
      expect(signature).toContain("d=acme.example")
      expect(signature).toContain("s=herald")
    }))

  it.scoped("the control API on the gateway simulator's port lists messages by ?to= and the stats", () =>
    Effect.gen(function*() {
      const { sink, relay } = yield* sinkAndRelay()
      const simulator = yield* makeGatewaySimulator({ port: 0, callbackUrl: () => undefined, clientToken: "t", deliveredMs: 10_000, readMs: 10_000, smtp: sink })
      yield* relay.send(mailTo("alice@example.com", { subject: "first" }))
      yield* relay.send(mailTo("bob@example.com", { subject: "for bob" }))
      yield* relay.send(mailTo("Alice@Example.com", { subject: "second" }))
      const alice = yield* getJson(`${simulator.url}/simulate/smtp/messages?to=${encodeURIComponent("ALICE@example.com")}`)
      expect(alice.status).toBe(200)
      const listed = (alice.body as { messages: Array<SinkMessage> }).messages
      expect(listed.map((m) => m.subject)).toEqual(["first", "second"])
      const all = yield* getJson(`${simulator.url}/simulate/smtp/messages`)
      expect((all.body as { messages: Array<SinkMessage> }).messages).toHaveLength(3)
      const stats = yield* getJson(`${simulator.url}/simulate/smtp/stats`)
      expect(stats.body).toEqual({ accepted: 3, duplicates: 0, bounced: 0, deferred: 0, rejected: 0, complaints: 0 })
      expect((yield* getJson(`${simulator.url}/simulate/smtp/nothing`)).status).toBe(404)
    }))
})

/** A port free right now, for a setting that must be known before the layer starts. */
const freePort = Effect.async<number>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const port = (server.address() as AddressInfo).port
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** The gateways node.ts chooses, on settings from these environment variables. */
const live = (env: Record<string, string>) => gatewaysOn({ SMTP_FEEDBACK_SECRET: SECRET, ...env })

describe("the EmailRelay node.ts chooses", () => {
  it.scoped("role all without SMTP_URL: the sink in-process, its control API on the simulator's port, complaints to Herald's origin", () =>
    Effect.gen(function*() {
      const receiver = yield* makeFeedbackReceiver()
      const simPort = yield* freePort
      const context = yield* Layer.build(live({ GATEWAY_SIM_PORT: String(simPort), SMTP_SIM_PORT: "0" }))
      // Herald's address becomes known after the gateways are up, as in the composition root.
      yield* heraldListens(context, receiver.origin)
      const relay = Effect.provide(EmailRelay, context)
      const { url, send } = yield* relay
      expect(url).toMatch(/^smtp:\/\/127\.0\.0\.1:\d+/)
      const mail = mailTo("complaint-live@example.com")
      expect((yield* send(mail))._tag).toBe("Accepted")
      const listed = yield* getJson(`http://127.0.0.1:${simPort}/simulate/smtp/messages?to=complaint-live@example.com`)
      expect((listed.body as { messages: Array<SinkMessage> }).messages.map((m) => m.headers["x-herald-message-id"])).toEqual([mail.messageId])
      yield* eventually(() => receiver.posted.length > 0, 5_000)
      expect(receiver.posted[0]!.path).toBe(SMTP_FEEDBACK_PATH)
      expect(JSON.parse(receiver.posted[0]!.body.toString("utf8"))).toMatchObject({ type: "complaint", message_id: mail.messageId })
    }))

  it.scoped("with SMTP_URL: relays there and starts no sink", () =>
    Effect.gen(function*() {
      const external = yield* makeSmtpSink({ port: 0, feedbackUrl: () => undefined, feedbackSecret: SECRET })
      const context = yield* Layer.build(
        live({ SMTP_URL: external.url, GATEWAY_RBM_URL: "http://127.0.0.1:9", GATEWAY_WA_URL: "http://127.0.0.1:9", GATEWAY_CAPI_URL: "http://127.0.0.1:9" })
      )
      const { url, send } = yield* Effect.provide(EmailRelay, context)
      expect(url).toBe(external.url)
      expect((yield* send(mailTo("bob@example.com")))._tag).toBe("Accepted")
      expect(external.messages("bob@example.com")).toHaveLength(1)
    }))

  it.scoped("an api node without SMTP_URL: every mail Rejected 554 as a config error", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(live({ HERALD_ROLE: "api" }))
      const { send } = yield* Effect.provide(EmailRelay, context)
      const outcome = yield* send(mailTo("bob@example.com"))
      expect(outcome).toMatchObject({ _tag: "Rejected", code: 554 })
      if (outcome._tag === "Rejected") expect(outcome.response).toContain("SMTP_URL")
    }))
})
