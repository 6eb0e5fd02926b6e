import { Schema } from "effect"

/** The event types of the partner e-mail API (SES's names): one SEND per message, the others per recipient. */
export const EVENT_TYPES = ["SEND", "DELIVERY", "BOUNCE", "COMPLAINT", "REJECT", "SUPPRESSED"] as const
export type EventType = (typeof EVENT_TYPES)[number]

export const MESSAGE_STATUSES = ["QUEUED", "SENT", "DELIVERED", "BOUNCED", "COMPLAINED", "REJECTED", "SUPPRESSED"] as const
export type MessageStatus = (typeof MESSAGE_STATUSES)[number]

/** A send that would cross the partner's 24-hour quota: refused whole (429 `quota_exceeded`). */
export class QuotaExceeded extends Schema.TaggedError<QuotaExceeded>()("QuotaExceeded", {
  message: Schema.String
}) {}

/** The sandbox and production quotas of SES, which a partner starts with and is granted. */
export const SANDBOX_QUOTA = { max24HourSend: 200, maxSendRate: 1 } as const
export const PRODUCTION_QUOTA = { max24HourSend: 50_000, maxSendRate: 14 } as const

/** The webhook event type of an e-mail event (`email.delivery`, …). */
export const webhookTypeOf = (type: EventType): `email.${string}` => `email.${type.toLowerCase()}`

/**
 * A time of a row as the API answers it: ISO 8601 UTC to the millisecond, as every Herald answer
 * (docs/partner-email.md). Rows keep microseconds in Postgres and in their cursors' positions
 * (`YYYY-MM-DDTHH:MM:SS.ffffffZ`), which order the lists; an answer cuts them to milliseconds.
 */
export const toMillis = (microseconds: string): string => new Date(microseconds).toISOString()
