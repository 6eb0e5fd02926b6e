import http from "node:http"
import { Either, ParseResult, Schema } from "effect"
import { WEBHOOK_EVENTS, type WebhookEvent } from "../../src/http/webhookEvents.ts"

export interface Received {
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
  readonly at: number
}

/** Who an envelope was meant for, from its shape: partner events carry no account_id; WhatsApp's data say channel whatsapp. */
const receiverOf = (envelope: any): WebhookEvent["receiver"] =>
  envelope?.account_id === undefined
    ? "partner"
    : envelope.type === "webhook.test"
    ? "any"
    : envelope.type === "conversation.handoff" || envelope.data?.channel === "whatsapp"
    ? "whatsapp"
    : "rcs"

/**
 * Why an envelope does not match the OpenAPI document's `webhooks` (src/http/webhookEvents.ts),
 * decoded strictly; undefined when it does.
 */
export const undocumentedEvent = (body: string): string | undefined => {
  let envelope: any
  try {
    envelope = JSON.parse(body)
  } catch {
    return `not JSON: ${body.slice(0, 200)}`
  }
  const receiver = receiverOf(envelope)
  const event = WEBHOOK_EVENTS.find((e) => e.type === envelope?.type && e.receiver === receiver)
  if (event === undefined) return `no documented ${receiver} event of type ${String(envelope?.type)}`
  const decoded = Schema.decodeUnknownEither(event.body, { onExcessProperty: "error", errors: "all" })(envelope)
  return Either.isLeft(decoded) ? `${envelope.type} (${receiver}): ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}\n${body.slice(0, 2000)}` : undefined
}

/**
 * A local webhook consumer. The path decides the answer: /ok → 200, /status/<code> → that code
 * (3xx with a Location), /hang → never answers. Every request is recorded, and checked against the
 * reference's webhooks: `undocumented` lists every body that does not match (a test file asserts
 * it is empty once its events have come).
 */
export const startConsumer = async () => {
  const received: Array<Received> = []
  const undocumented: Array<string> = []
  const server = http.createServer((req, res) => {
    let body = ""
    req.on("data", (chunk) => (body += chunk))
    req.on("end", () => {
      const path = req.url ?? "/"
      received.push({ path, headers: req.headers, body, at: Date.now() })
      const problem = undocumentedEvent(body)
      if (problem !== undefined) undocumented.push(problem)
      if (path.startsWith("/hang")) return
      const status = path.startsWith("/status/") ? Number(path.split("/")[2]) : 200
      res.writeHead(status, status >= 300 && status < 400 ? { location: "http://127.0.0.1:1/elsewhere" } : { "content-type": "text/plain" })
      res.end(status === 200 ? "ok" : `answer ${status}`)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    received,
    undocumented,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
