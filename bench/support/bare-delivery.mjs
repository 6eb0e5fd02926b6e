// The design's floor for a webhook delivery, with nothing of Herald: a durable JetStream pull
// consumer whose every message is POSTed with undici (256 connections) and acknowledged once
// answered. No Postgres, no Effect, no signature. A process of its own, like a worker.
// Run: node bare-delivery.mjs NATS_URL STREAM DURABLE URL
import { connect } from "nats"
import { Agent, request } from "undici"

const [servers, stream, durable, url] = process.argv.slice(2)
const nc = await connect({ servers, noAsyncTraces: true })
const consumer = await nc.jetstream().consumers.get(stream, durable)
const agent = new Agent({ connections: 256 })
await consumer.consume({
  max_messages: 512,
  callback: (m) => {
    request(url, { method: "POST", body: m.data, dispatcher: agent, headers: { "content-type": "application/json" } })
      .then((r) => r.body.dump())
      .then(() => m.ack(), () => m.nak())
  }
})
