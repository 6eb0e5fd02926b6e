import { Schema } from "effect"
import { EVENT_TYPES as EMAIL_EVENT_TYPES } from "../email/model.ts"
import { PUBLIC_MESSAGE_TYPES } from "../whatsapp/message/publicMessage.ts"

/**
 * What Herald delivers to webhook endpoints, declared for the OpenAPI document's `webhooks`
 * (src/http/openApiDocument.ts): the envelope and each event's `data`. The payloads are built by
 * the services that emit them (src/messaging/SenderKind.ts and GatewayReports.ts for RCS messages,
 * src/whatsapp/events.ts and inbound/WaReports.ts for WhatsApp, src/broadcasts/progress.ts,
 * src/aiAgents/AgentTurns.ts, src/webhooks/Webhooks.ts `test`, src/webhooks/MessageBatches.ts,
 * src/email/MailLedger.ts); the end-to-end tests that receive events decode each one with these
 * schemas, strictly (test/support/consumer.ts, undocumentedEvent).
 */

const text = (description: string) => Schema.String.annotations({ description })

const GATEWAY_CATEGORIES = ["content", "media", "recipient", "config", "quota", "gateway", "unknown"] as const

/** The Gateway error record (contract), as a failed message's event carries it. */
export const EventError = Schema.Struct({
  success: Schema.Literal(false).annotations({ description: "Always false: the record of a failure." }),
  message: text("What went wrong, for a person (the gateway's or Meta's title)."),
  detail: text("More about the failure, as the upstream gave it."),
  category: Schema.Literal(...GATEWAY_CATEGORIES).annotations({
    description: "What kind of problem: the content, its media, the recipient, the bot's or number's configuration, a quota, the gateway itself, or unknown."
  }),
  retryable: Schema.Boolean.annotations({ description: "Whether sending the same message again later may succeed." }),
  message_id: Schema.optional(text("The message the failure is about.")),
  upstream_code: Schema.optional(Schema.Int.annotations({ description: "The upstream's own error code (Meta's for WhatsApp), for support and debugging." }))
}).annotations({ identifier: "EventError", description: "The Gateway error record of a failed message." })

const rcsAbout = {
  message_id: text("Herald's id of the message (the message_id a send answered)."),
  bot_id: text("The bot that sent it."),
  to: text("The recipient, E.164 with its '+'.")
}

const occurredAt = Schema.optional(text("When the gateway reported the status (ISO 8601, UTC); absent on message.sent and on a failure at send time."))

/** RCS message.sent, message.delivered, message.read: a message of the account moved to `status`. */
export const RcsStatusData = (status: "sent" | "delivered" | "read") =>
  Schema.Struct({
    ...rcsAbout,
    status: Schema.Literal(status).annotations({ description: "The status the message reached." }),
    occurred_at: occurredAt
  }).annotations({ description: `An RCS message reached ${status}.` })

/** RCS message.failed: the Gateway error record's fields beside the message's. */
export const RcsFailedData = Schema.Struct({
  ...EventError.fields,
  ...rcsAbout,
  status: Schema.Literal("failed").annotations({ description: "Always failed." }),
  occurred_at: occurredAt
}).annotations({ description: "An RCS message failed: the Gateway error record's fields (success, message, detail, category, retryable, upstream_code) beside the message's." })

/** RCS message.received: a user's message to a bot (src/messaging/GatewayReports.ts, receivedData). */
export const RcsReceivedData = Schema.Struct({
  message_id: text("The gateway's id of the user's message: a retried callback carries the same id, and Herald emits the event once."),
  channel: Schema.Literal("rcs").annotations({ description: "Always rcs." }),
  bot_id: text("The bot the user wrote to."),
  from: text("The user's number, E.164 with its '+'."),
  type: Schema.Literal("text", "suggestion_response").annotations({ description: "text, or suggestion_response when the user tapped a suggestion (see postback_data)." }),
  text: text("What the user wrote, or the text of the suggestion tapped."),
  postback_data: Schema.NullOr(Schema.String).annotations({ description: "The tapped suggestion's postback_data; null for typed text." }),
  received_at: text("When the gateway received it (ISO 8601, UTC).")
}).annotations({ description: "A user's message to one of the account's bots." })

/** broadcast.completed (src/broadcasts/progress.ts, progressOf). */
export const BroadcastCompletedData = Schema.Struct({
  broadcast_id: text("The broadcast."),
  status: Schema.Literal("completed").annotations({ description: "Always completed: every target has an outcome." }),
  total_count: Schema.Int.annotations({ description: "Contacts of the list when the broadcast started." }),
  sent_count: Schema.Int.annotations({ description: "Targets the gateway took (those later delivered or read included)." }),
  delivered_count: Schema.Int.annotations({ description: "Targets delivered (read included)." }),
  read_count: Schema.Int.annotations({ description: "Targets read." }),
  failed_count: Schema.Int.annotations({ description: "Targets that failed." }),
  cancelled_count: Schema.Int.annotations({ description: "Targets never sent because the broadcast was cancelled." })
}).annotations({ description: "A broadcast's final counts." })

/** broadcast.completed of a WhatsApp campaign, to the developer webhook (progressOf with channel whatsapp). */
export const CampaignCompletedData = Schema.Struct({
  ...BroadcastCompletedData.fields,
  total_count: Schema.Int.annotations({ description: "Customers of the audience when the campaign started." }),
  sent_count: Schema.Int.annotations({ description: "Targets Meta took (those later delivered or read included)." }),
  delivered_count: Schema.Int.annotations({ description: "Targets delivered (read included): each charged once at its category's price." }),
  channel: Schema.Literal("whatsapp").annotations({ description: "Always whatsapp: a campaign (docs/campaigns.md)." }),
  skipped_count: Schema.Int.annotations({ description: "Customers skipped because they had opted out: never sent, never charged." })
}).annotations({ description: "A WhatsApp campaign's final counts." })

const broadcastOf = { broadcast_id: text("The broadcast the message belongs to.") }

/** One event inside a message.batch (src/webhooks/MessageBatches.ts): a single send's event of its type, plus broadcast_id. */
const batchedEvent = <A, I>(type: string, data: Schema.Schema<A, I>) =>
  Schema.Struct({
    event_id: text("The event's own id: the same event in a batch delivered again keeps it. Deduplicate on it."),
    type: Schema.Literal(type).annotations({ description: "The event's type." }),
    occurred_at: text("When the event was recorded (ISO 8601, UTC)."),
    data
  })

/** message.batch: a broadcast's per-recipient message.* events for an endpoint that opted in (docs/webhooks.md, Broadcast messages). */
export const MessageBatchData = Schema.Struct({
  broadcast_id: text("The broadcast whose messages these are: a batch holds one broadcast's events."),
  bot_id: text("The broadcast's bot."),
  count: Schema.Int.annotations({ description: "How many events the batch holds (events.length)." }),
  events: Schema.Array(Schema.Union(
    ...(["sent", "delivered", "read"] as const).map((status) =>
      batchedEvent(`message.${status}`, Schema.Struct({ ...RcsStatusData(status).fields, ...broadcastOf }).annotations({ description: `A broadcast's message reached ${status}.` }))
    ),
    batchedEvent("message.failed", Schema.Struct({ ...RcsFailedData.fields, ...broadcastOf }).annotations({ description: "A broadcast's message failed, with the Gateway error record's fields." }))
  )).annotations({ description: "The events, in the order they were recorded (at most HERALD_WEBHOOK_BATCH_MAX_EVENTS, 500 by default, and 256 KB)." })
}).annotations({ description: "A batch of one broadcast's per-recipient message events." })

const waAbout = {
  id: text("Herald's id of the message (the id POST /api/v1/public/message answered)."),
  callbackData: Schema.NullOr(Schema.String).annotations({ description: "The send's callbackData, echoed; null when the send had none." }),
  channel: Schema.Literal("whatsapp").annotations({ description: "Always whatsapp." }),
  fullPhoneNumber: text("The recipient: digits with the country code, no '+'."),
  type: Schema.Literal(...PUBLIC_MESSAGE_TYPES).annotations({ description: "The send's type." })
}

/** WhatsApp message.sent, message.delivered, message.read (src/whatsapp/events.ts, statusEventData). */
export const WaStatusData = (status: "sent" | "delivered" | "read") =>
  Schema.Struct({
    ...waAbout,
    status: Schema.Literal(status).annotations({ description: "The status the message reached." })
  }).annotations({ description: `A WhatsApp message of the public API reached ${status}.` })

/** WhatsApp message.failed: the same, with the Gateway error record. */
export const WaFailedData = Schema.Struct({
  ...waAbout,
  status: Schema.Literal("failed").annotations({ description: "Always failed." }),
  error: Schema.optional(EventError.annotations({ description: "Why it failed; upstream_code is Meta's error code." }))
}).annotations({ description: "A WhatsApp message of the public API failed." })

/** WhatsApp message.received (src/whatsapp/inbound/WaReports.ts). */
export const WaReceivedData = Schema.Struct({
  id: text("Meta's id of the message (wamid)."),
  channel: Schema.Literal("whatsapp").annotations({ description: "Always whatsapp." }),
  fullPhoneNumber: text("The customer: digits with the country code, no '+'."),
  name: Schema.NullOr(Schema.String).annotations({ description: "The customer's WhatsApp profile name; null when Meta gave none." }),
  type: text(
    "What the customer sent: Text, Image, Video, Audio, Document, Sticker, Location, Contacts, Reaction, ButtonReply, InteractiveButtonReply, InteractiveListReply or Unsupported."
  ),
  text: Schema.optional(text("The text a person would read: the message's body, a button's or list item's title, a media caption; absent when there is none.")),
  conversation_id: text("The conversation the message belongs to (opened by it when none was open)."),
  received_at: text("When Meta received it (ISO 8601, UTC).")
}).annotations({ description: "A customer's message to one of the account's WhatsApp numbers." })

/** conversation.handoff (src/aiAgents/AgentTurns.ts). */
export const HandoffData = Schema.Struct({
  conversation_id: text("The conversation, now unassigned."),
  ai_agent_id: text("The AI agent that handed it over."),
  reason: Schema.Literal("keyword", "no_match").annotations({
    description: "keyword: the customer's text contained one of the agent's handoff_keywords; no_match: no FAQ question matched."
  }),
  text: text("The customer's text that caused the handoff.")
}).annotations({ description: "An AI agent handed a conversation to a person." })

/** customer.opted_out and customer.opted_in (src/whatsapp/inbound/WaReports.ts, src/customers/optOut.ts). */
export const OptChangeData = Schema.Struct({
  customer_id: text("The customer whose consent to marketing changed."),
  channel: Schema.Literal("whatsapp").annotations({ description: "Where the keyword came from." }),
  fullPhoneNumber: text("The customer's number, digits only, as the public API's events give it."),
  phone_number_id: text("The account's WhatsApp number the customer wrote to."),
  keyword: text("The keyword the message was, upper case without spaces or punctuation (STOP, UNSUBSCRIBE, START, …)."),
  message_id: text("Meta's id of the customer's message (the id of its message.received)."),
  occurred_at: text("When the customer sent it (ISO 8601, UTC).")
}).annotations({ description: "A customer opted out of marketing, or back in, by keyword." })

/** webhook.test (POST /api/v1/rcs/webhooks/{webhook_id}/test). */
export const TestData = Schema.Struct({
  webhook_id: text("The endpoint tested."),
  message: text("Always \"This is a test event from Herald.\"")
}).annotations({ description: "A test event, sent to one endpoint on request." })

/** A partner e-mail event (src/email/MailLedger.ts): the row GET /api/v1/partner/email/events lists. */
export const EmailEventData = (type: (typeof EMAIL_EVENT_TYPES)[number]) =>
  Schema.Struct({
    event_id: text("The event's id, derived from its message, recipient and type: the same outcome recorded twice is one event."),
    message_id: text("The message (the message_id POST /emails answered)."),
    type: Schema.Literal(type).annotations({ description: "The event's type, in SES's words." }),
    recipient: Schema.NullOr(Schema.String).annotations({
      description: "The recipient the event is about; null on SEND, which is about the whole message (every row has every field)."
    }),
    detail: text("What happened, for a person: the relay's answer on DELIVERY and REJECT, `hard: <the server's answer>` or `soft` on BOUNCE, the report's text on COMPLAINT, the number of recipients on SEND."),
    created_at: text("When it happened (ISO 8601, UTC, to the millisecond).")
  }).annotations({ description: `A partner e-mail ${type} event.` })

const envelopeFields = (type: string) => ({
  event_id: Schema.UUID.annotations({ description: "The event's id: one per event, the same in every delivery of it (to several endpoints, or replayed)." }),
  type: Schema.Literal(type).annotations({ description: "The event type." }),
  occurred_at: text("When the event was recorded (ISO 8601, UTC)."),
  delivery_id: text("This delivery's id (wd_<uuid>), also the webhook-id header: the same on every attempt, a new one on a replay. Deliveries are at least once: deduplicate on it.")
})

/** The body of a delivery to an account's endpoint: `{event_id, type, occurred_at, delivery_id, account_id, data}`. */
export const AccountEnvelope = <A, I>(type: string, data: Schema.Schema<A, I>) =>
  Schema.Struct({
    ...envelopeFields(type),
    account_id: Schema.UUID.annotations({ description: "The account the event belongs to." }),
    data: data.annotations({ description: "What happened; shaped by the type." })
  })

/** The body of a delivery to a partner's event destination: no account_id. */
export const PartnerEnvelope = <A, I>(type: string, data: Schema.Schema<A, I>) =>
  Schema.Struct({
    ...envelopeFields(type),
    data: data.annotations({ description: "The e-mail event, as GET /api/v1/partner/email/events lists it." })
  })

export interface WebhookEvent {
  /** The event type (the envelope's `type`). */
  readonly type: string
  /** Who receives it. */
  readonly receiver: "rcs" | "whatsapp" | "any" | "partner"
  readonly summary: string
  readonly description: string
  readonly body: Schema.Schema<any, any>
  readonly example: unknown
}

const ACCOUNT = "6f1c2a9e-3b4d-4e5f-8a7b-9c0d1e2f3a4b"
const BOT = "1b2c3d4e-5f60-4718-89ab-cdef01234567"
const MESSAGE = "0c9e7a52-4f1d-4b8e-9a3c-2d5e6f7a8b9c"
const envelope = (type: string, data: unknown, account = true) => ({
  event_id: "3f6b1c2d-8e9a-4b7c-9d0e-1f2a3b4c5d6e",
  type,
  occurred_at: "2026-03-02T10:15:30.123Z",
  delivery_id: "wd_5a8c2e4f-1b3d-4f6a-8c9e-0b1d2f3a4c5e",
  ...(account ? { account_id: ACCOUNT } : {}),
  data
})

const rcsStatus = (status: "sent" | "delivered" | "read"): WebhookEvent => ({
  type: `message.${status}`,
  receiver: "rcs",
  summary: `An RCS message was ${status === "sent" ? "taken by the gateway" : status}`,
  description: status === "sent"
    ? "Sent to RCS endpoints subscribed to message.sent (and covering the message's bot) when the gateway accepted a message of a single send. A broadcast's messages come in message.batch, to endpoints that opted in."
    : `Sent to RCS endpoints subscribed to message.${status} (and covering the message's bot) when the gateway reported the message ${status}. Statuses only move forward: a late report never emits an event twice.`,
  body: AccountEnvelope(`message.${status}`, RcsStatusData(status)),
  example: envelope(`message.${status}`, {
    message_id: MESSAGE,
    bot_id: BOT,
    to: "+919876543210",
    status,
    ...(status === "sent" ? {} : { occurred_at: "2026-03-02T10:15:29.870Z" })
  })
})

const waStatus = (status: "sent" | "delivered" | "read"): WebhookEvent => ({
  type: `message.${status}`,
  receiver: "whatsapp",
  summary: `A WhatsApp message was ${status}`,
  description: `Sent to the developer webhook (PUT /api/v1/app/developer/webhook) when Meta reported a message of the public API ${status}. Statuses only move forward (Meta may skip delivered).`,
  body: AccountEnvelope(`message.${status}`, WaStatusData(status)),
  example: envelope(`message.${status}`, { id: MESSAGE, callbackData: "order-1042", channel: "whatsapp", fullPhoneNumber: "919876543210", type: "Template", status })
})

/** Every event Herald delivers, by receiver, in the order the reference lists them. */
export const WEBHOOK_EVENTS: ReadonlyArray<WebhookEvent> = [
  rcsStatus("sent"),
  rcsStatus("delivered"),
  rcsStatus("read"),
  {
    type: "message.failed",
    receiver: "rcs",
    summary: "An RCS message failed",
    description: "Sent to RCS endpoints subscribed to message.failed when the gateway refused a message at send time or reported it failed later. The Gateway error record's fields sit beside the message's.",
    body: AccountEnvelope("message.failed", RcsFailedData),
    example: envelope("message.failed", {
      success: false,
      message: "Recipient is not RCS-capable",
      detail: "The number is not reachable over RCS",
      category: "recipient",
      retryable: false,
      message_id: MESSAGE,
      bot_id: BOT,
      to: "+919876543210",
      status: "failed",
      occurred_at: "2026-03-02T10:15:29.870Z"
    })
  },
  {
    type: "message.received",
    receiver: "rcs",
    summary: "A user wrote to an RCS bot",
    description: "Sent to RCS endpoints subscribed to message.received (and covering the bot) once per user message, however often the gateway retries its callback.",
    body: AccountEnvelope("message.received", RcsReceivedData),
    example: envelope("message.received", {
      message_id: "MxAbC123",
      channel: "rcs",
      bot_id: BOT,
      from: "+919876543210",
      type: "suggestion_response",
      text: "Track my order",
      postback_data: "track_order",
      received_at: "2026-03-02T10:15:29.870Z"
    })
  },
  {
    type: "broadcast.completed",
    receiver: "rcs",
    summary: "A broadcast finished",
    description: "Sent to RCS endpoints subscribed to broadcast.completed (and covering the broadcast's bot) once every target has an outcome.",
    body: AccountEnvelope("broadcast.completed", BroadcastCompletedData),
    example: envelope("broadcast.completed", {
      broadcast_id: "8d7c6b5a-4f3e-4d2c-9b1a-0f9e8d7c6b5a",
      status: "completed",
      total_count: 1200,
      sent_count: 1188,
      delivered_count: 1150,
      read_count: 640,
      failed_count: 12,
      cancelled_count: 0
    })
  },
  {
    type: "message.batch",
    receiver: "rcs",
    summary: "A batch of a broadcast's message events",
    description: "Sent only to RCS endpoints with include_broadcast_messages true (and covering the broadcast's bot): the message.sent, " +
      "message.delivered, message.read and message.failed events of one broadcast's messages, of the types in the endpoint's events, up to 500 " +
      "(HERALD_WEBHOOK_BATCH_MAX_EVENTS) or 256 KB per request, sent once full or one second (HERALD_WEBHOOK_BATCH_WINDOW_MS) after its oldest event. " +
      "Retried and dead-lettered like any event; deduplicate on each inner event_id.",
    body: AccountEnvelope("message.batch", MessageBatchData),
    example: envelope("message.batch", {
      broadcast_id: "8d7c6b5a-4f3e-4d2c-9b1a-0f9e8d7c6b5a",
      bot_id: BOT,
      count: 2,
      events: [
        {
          event_id: "b7a6c5d4-e3f2-4a1b-8c9d-0e1f2a3b4c5d",
          type: "message.sent",
          occurred_at: "2026-03-02T10:15:28.004Z",
          data: { message_id: MESSAGE, bot_id: BOT, to: "+919876543210", status: "sent", broadcast_id: "8d7c6b5a-4f3e-4d2c-9b1a-0f9e8d7c6b5a" }
        },
        {
          event_id: "c8b7d6e5-f4a3-4b2c-9d0e-1f2a3b4c5d6e",
          type: "message.delivered",
          occurred_at: "2026-03-02T10:15:29.870Z",
          data: {
            message_id: "1d0f8b63-5a2e-4c9f-8b4d-3e6f7a8b9c0d",
            bot_id: BOT,
            to: "+919876543211",
            status: "delivered",
            occurred_at: "2026-03-02T10:15:29.870Z",
            broadcast_id: "8d7c6b5a-4f3e-4d2c-9b1a-0f9e8d7c6b5a"
          }
        }
      ]
    })
  },
  waStatus("sent"),
  waStatus("delivered"),
  waStatus("read"),
  {
    type: "message.failed",
    receiver: "whatsapp",
    summary: "A WhatsApp message failed",
    description: "Sent to the developer webhook when a message of the public API failed: refused by Meta, reported failed, or never confirmed.",
    body: AccountEnvelope("message.failed", WaFailedData),
    example: envelope("message.failed", {
      id: MESSAGE,
      callbackData: "order-1042",
      channel: "whatsapp",
      fullPhoneNumber: "919876543210",
      type: "Text",
      status: "failed",
      error: {
        success: false,
        message: "Re-engagement message",
        detail: "More than 24 hours have passed since the customer last replied to this number.",
        category: "recipient",
        retryable: false,
        upstream_code: 131047
      }
    })
  },
  {
    type: "message.received",
    receiver: "whatsapp",
    summary: "A customer wrote to a WhatsApp number",
    description: "Sent to the developer webhook for each customer message to one of the account's numbers (duplicated or reordered webhooks from Meta emit nothing twice).",
    body: AccountEnvelope("message.received", WaReceivedData),
    example: envelope("message.received", {
      id: "wamid.HBgMOTE5ODc2NTQzMjEwFQIAEhgg",
      channel: "whatsapp",
      fullPhoneNumber: "919876543210",
      name: "Asha",
      type: "Text",
      text: "Where is my order?",
      conversation_id: "5e4d3c2b-1a09-4f8e-9d7c-6b5a4f3e2d1c",
      received_at: "2026-03-02T10:15:29Z"
    })
  },
  {
    type: "conversation.handoff",
    receiver: "whatsapp",
    summary: "An AI agent handed a conversation to a person",
    description: "Sent to the developer webhook when an AI agent (/api/v1/app/ai-agents) unassigned a conversation for a person: a handoff keyword, or a question it has no answer for. Follows the message.received of the customer's text.",
    body: AccountEnvelope("conversation.handoff", HandoffData),
    example: envelope("conversation.handoff", {
      conversation_id: "5e4d3c2b-1a09-4f8e-9d7c-6b5a4f3e2d1c",
      ai_agent_id: "7a6b5c4d-3e2f-4a1b-8c9d-0e1f2a3b4c5d",
      reason: "keyword",
      text: "I want to talk to a person"
    })
  },
  {
    type: "broadcast.completed",
    receiver: "whatsapp",
    summary: "A WhatsApp campaign finished",
    description: "Sent to the developer webhook once every target of a campaign (POST /api/v1/public/campaigns) has an outcome; not for a " +
      "cancelled one. broadcast_id is the campaign's id.",
    body: AccountEnvelope("broadcast.completed", CampaignCompletedData),
    example: envelope("broadcast.completed", {
      broadcast_id: "4b7f0f6e-4b61-4a57-9a37-0d1a1f0c2a11",
      status: "completed",
      total_count: 12000,
      sent_count: 11948,
      delivered_count: 11900,
      read_count: 6400,
      failed_count: 12,
      cancelled_count: 0,
      channel: "whatsapp",
      skipped_count: 40
    })
  },
  ...(["opted_out", "opted_in"] as const).map((change) => ({
    type: `customer.${change}`,
    receiver: "whatsapp" as const,
    summary: change === "opted_out" ? "A customer opted out of marketing" : "A customer opted back in to marketing",
    description: change === "opted_out"
      ? "Sent to the developer webhook when a customer's WhatsApp message is an opt-out keyword (STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT, OPTOUT, REVOKE; case, spaces and punctuation ignored) and they were not opted out already. From then on the customer's `opted_out` trait is true and a MARKETING template to them is 422 `recipient_opted_out`. Follows the message's message.received."
      : "Sent to the developer webhook when an opted-out customer's WhatsApp message is START or UNSTOP: their `opted_out` trait is false again and marketing templates reach them. Follows the message's message.received.",
    body: AccountEnvelope(`customer.${change}`, OptChangeData),
    example: envelope(`customer.${change}`, {
      customer_id: "3c2b1a09-8f7e-4d6c-9b5a-4f3e2d1c0b9a",
      channel: "whatsapp",
      fullPhoneNumber: "919876543210",
      phone_number_id: "106540352242922",
      keyword: change === "opted_out" ? "STOP" : "START",
      message_id: "wamid.HBgMOTE5ODc2NTQzMjEwFQIAEhggQTVCMjY5RDQ4QjU3",
      occurred_at: "2026-03-02T10:15:29Z"
    })
  })),
  {
    type: "webhook.test",
    receiver: "any",
    summary: "A test event",
    description: "Sent to one endpoint, whatever its events, by POST /api/v1/rcs/webhooks/{webhook_id}/test.",
    body: AccountEnvelope("webhook.test", TestData),
    example: envelope("webhook.test", { webhook_id: "2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f", message: "This is a test event from Herald." })
  },
  ...EMAIL_EVENT_TYPES.map((type): WebhookEvent => ({
    type: `email.${type.toLowerCase()}`,
    receiver: "partner",
    summary: `A partner e-mail ${type} event`,
    description: `Sent to the event destinations of a configuration set (POST /api/v1/partner/email/configuration-sets) that asked for ${type}, ` +
      "for messages sent with that configuration_set. The envelope has no account_id.",
    body: PartnerEnvelope(`email.${type.toLowerCase()}`, EmailEventData(type)),
    example: envelope(`email.${type.toLowerCase()}`, {
      event_id: "c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f",
      message_id: "2b1d7e4a-9c3f-4e8b-a1d6-5f0c2e7b9a34",
      type,
      recipient: type === "SEND" ? null : "customer@example.com",
      detail: type === "BOUNCE" ? "hard: 550 5.1.1 mailbox unavailable" : type === "DELIVERY" ? "250 2.0.0 OK" : type === "SEND" ? "1 recipient(s)" : `${type.toLowerCase()}`,
      created_at: "2026-03-02T10:15:30.123Z"
    }, false)
  }))
]
