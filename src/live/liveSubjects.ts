/**
 * Live events: what an account's GraphQL subscriptions (and later the console) are told as it
 * happens. They travel on core NATS, one subject per account and kind, so an API node listens only
 * for the accounts its own sockets belong to, and an account never sees another's. Best effort by
 * design: a node that is down misses them; the durable record is the database and the webhooks.
 */
export type LiveKind = "message_received" | "message_status" | "broadcast_progress" | "payment_received"

export const LIVE_KINDS: ReadonlyArray<LiveKind> = ["message_received", "message_status", "broadcast_progress", "payment_received"]

export const liveSubject = (prefix: string, accountId: string, kind: LiveKind) => `${prefix}.live.${accountId}.${kind}`

/** Every kind of one account. */
export const accountLiveSubjects = (prefix: string, accountId: string) => `${prefix}.live.${accountId}.*`

/** An inbound WhatsApp message, as messageReceived shows it. */
export interface MessageReceivedEvent {
  readonly id: string
  readonly conversation_id: string
  readonly type: string
  readonly text: string | null
  readonly received_at: string
}

/** A public send's status moved (sent, delivered, read, failed). */
export interface MessageStatusEvent {
  readonly message_id: string
  readonly status: "sent" | "delivered" | "read" | "failed"
  readonly callback_data: string | null
  readonly occurred_at: string
}

/** A payment recorded from Meta's webhook. */
export interface PaymentReceivedEvent {
  readonly id: string
  readonly reference_id: string
  readonly amount: number
  readonly currency: string
  readonly customer_id: string
  readonly created_at: string
}

/** A broadcast's counters (broadcasts/progress.ts). */
export interface BroadcastProgressEvent {
  readonly broadcast_id: string
  readonly status: string
  readonly total_count: number
  readonly sent_count: number
  readonly delivered_count: number
  readonly read_count: number
  readonly failed_count: number
  readonly cancelled_count: number
}

export interface LiveEventOf {
  readonly message_received: MessageReceivedEvent
  readonly message_status: MessageStatusEvent
  readonly broadcast_progress: BroadcastProgressEvent
  readonly payment_received: PaymentReceivedEvent
}
