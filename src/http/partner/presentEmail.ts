import type { AccessRequest } from "../../email/ProductionAccessRepo.ts"
import type { ConfigurationSet, ConfigurationSetDestination } from "../../email/ConfigurationSets.ts"
import type { CursorPage } from "../../email/cursorPage.ts"
import type { EmailEvent, EmailMessage } from "../../email/EmailMessagesRepo.ts"
import type { EmailTemplate } from "../../email/EmailTemplatesRepo.ts"
import type { Identity } from "../../email/IdentitiesRepo.ts"
import { EVENT_TYPES, type EventType, toMillis } from "../../email/model.ts"
import type { Counts, Quotas, Reputation, SendingCounts } from "../../email/SendingStats.ts"
import type { Suppressed } from "../../email/SuppressionRepo.ts"

// The partner e-mail API's answers (PartnerEmailApi.ts) from the services' domain values: each
// presented here once, in the contract's snake_case and field order.

export const ok = { success: true as const }

/** A page of a partner list: the rows under the list's name, their count, and a next_cursor unless it is the last page. */
export const presentPartnerPage = <A, B, const Name extends string>(name: Name, value: CursorPage<A>, present: (row: A) => B) =>
  ({ success: true, [name]: value.rows.map(present), count: value.rows.length, ...(value.nextCursor === undefined ? {} : { next_cursor: value.nextCursor }) }) as
    & { readonly success: true; readonly count: number; readonly next_cursor?: string }
    & { readonly [K in Name]: ReadonlyArray<B> }

export const presentIdentity = (row: Identity) => ({
  id: row.identityId,
  identity: row.identity,
  type: row.type,
  status: row.status,
  ...(row.dkimTokens === null ? {} : { dkim_tokens: row.dkimTokens }),
  created_at: toMillis(row.createdAt)
})

/** The API's event type of a stored webhook type (`email.delivery` → DELIVERY). */
const apiTypeOf = (stored: string): EventType | undefined => {
  const type = stored.startsWith("email.") ? stored.slice("email.".length).toUpperCase() : ""
  return (EVENT_TYPES as ReadonlyArray<string>).includes(type) ? (type as EventType) : undefined
}

const presentDestination = (row: ConfigurationSetDestination, secrets: ReadonlyMap<string, string>) => {
  const secret = secrets.get(row.destination_id)
  return {
    destination_id: row.destination_id,
    url: row.url,
    events: row.events.flatMap((stored) => apiTypeOf(stored) ?? []),
    ...(secret === undefined ? {} : { secret })
  }
}

/** A set; a destination created by this request carries its secret (shown this once). */
export const presentConfigurationSet = (row: ConfigurationSet, secrets: ReadonlyMap<string, string> = new Map()) => ({
  name: row.name,
  event_destinations: row.destinations.map((d) => presentDestination(d, secrets)),
  created_at: new Date(row.createdAt).toISOString()
})

export const presentTemplate = (row: EmailTemplate) => ({
  name: row.name,
  subject: row.subject,
  ...(row.html === null ? {} : { html: row.html }),
  ...(row.text === null ? {} : { text: row.text }),
  created_at: new Date(row.createdAt).toISOString()
})

export const presentSuppressed = (row: Suppressed) => ({ email: row.email, reason: row.reason, created_at: new Date(row.createdAt).toISOString() })

/** An event row, every field present (a SEND's recipient is null), created_at to the millisecond as every answer's times. */
export const presentEvent = (row: EmailEvent) => ({
  event_id: row.eventId,
  message_id: row.messageId,
  type: row.type,
  recipient: row.recipient,
  detail: row.detail,
  created_at: toMillis(row.createdAt)
})

export const presentMessage = (message: EmailMessage, events: ReadonlyArray<EmailEvent>) => ({
  success: true as const,
  message_id: message.messageId,
  from: message.fromAddress,
  to: message.toAddresses,
  subject: message.subject,
  status: message.status,
  events: events.map(presentEvent),
  created_at: new Date(message.createdAt).toISOString()
})

export const presentAccessRequest = (row: AccessRequest) => ({
  id: row.requestId,
  mail_type: row.mailType,
  website_url: row.websiteUrl,
  use_case_description: row.useCaseDescription,
  status: row.status,
  ...(row.reason === null ? {} : { reason: row.reason }),
  created_at: new Date(row.createdAt).toISOString()
})

export const presentQuotas = (quotas: Quotas) => ({
  success: true as const,
  max_24_hour_send: quotas.max24HourSend,
  max_send_rate: quotas.maxSendRate,
  sent_last_24_hours: quotas.sentLast24Hours,
  production_access_enabled: quotas.productionAccess
})

const presentCounts = (counts: Counts) => ({
  sent: counts.sent,
  delivered: counts.delivered,
  bounced: counts.bounced,
  complained: counts.complained,
  rejected: counts.rejected
})

export const presentStats = (stats: SendingCounts) => ({
  success: true as const,
  stats: { last_24_hours: presentCounts(stats.last24Hours), last_14_days: presentCounts(stats.last14Days) }
})

export const presentReputation = (reputation: Reputation) => ({
  success: true as const,
  bounce_rate: reputation.bounceRate,
  complaint_rate: reputation.complaintRate,
  status: reputation.status
})
