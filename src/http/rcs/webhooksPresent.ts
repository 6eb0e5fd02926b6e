import type { AttemptRow, DeadLetterRow } from "../../webhooks/DeliveriesRepo.ts"
import type { DeveloperWebhookSet, EndpointStats, NewEndpoint, RotatedSecret, WebhookStats } from "../../webhooks/Webhooks.ts"
import type { WebhookRow } from "../../webhooks/WebhooksRepo.ts"

/**
 * Webhooks' answers as /api/v1/rcs/webhooks and /api/v1/app/developer/webhook give them
 * (WebhooksApi, DeveloperApi): the service's values, presented once here.
 */

export const presentWebhook = (row: WebhookRow) => ({
  webhook_id: row.webhookId,
  url: row.url,
  active: row.active,
  events: [...row.events],
  bot_id: row.botId,
  channel: row.channel,
  include_broadcast_messages: row.includeBroadcastMessages,
  created_at: new Date(row.createdAt).toISOString()
})

export const presentAttempt = (row: AttemptRow) => ({
  attempt_id: row.attemptId,
  delivery_id: row.deliveryId,
  event_type: row.eventType,
  url: row.url,
  attempt: row.attempt,
  status_code: row.statusCode,
  took_ms: row.tookMs,
  response_snippet: row.responseSnippet,
  sent_at: new Date(row.sentAt).toISOString()
})

export const presentDeadLetter = (row: DeadLetterRow) => ({
  delivery_id: row.deliveryId,
  webhook_id: row.webhookId,
  event_type: row.eventType,
  url: row.url,
  reason: row.reason,
  first_attempt_at: new Date(row.firstAttemptAt).toISOString(),
  permanent_failure_at: new Date(row.permanentFailureAt).toISOString(),
  envelope: row.envelope
})

const presentEndpointStats = (row: EndpointStats) => ({
  webhook_id: row.webhookId,
  attempts: row.attempts,
  succeeded: row.succeeded,
  failed: row.attempts - row.succeeded,
  success_rate: row.attempts === 0 ? null : row.succeeded / row.attempts,
  latency_ms: { p50: row.p50 === null ? null : Math.round(row.p50), p95: row.p95 === null ? null : Math.round(row.p95) },
  last_attempt_at: row.lastAttemptAt === null ? null : new Date(row.lastAttemptAt).toISOString(),
  last_status_code: row.lastStatusCode,
  health: row.health
})

export const presentList = (rows: ReadonlyArray<WebhookRow>) => ({ success: true as const, webhooks: rows.map(presentWebhook) })

/** POST /: the endpoint at the top and again as `webhook` (as PATCH answers it), with its secret. */
export const presentCreated = ({ secret, webhook }: NewEndpoint) => {
  const presented = presentWebhook(webhook)
  return { success: true as const, ...presented, secret, webhook: presented }
}

export const presentUpdated = (row: WebhookRow) => ({ success: true as const, webhook: presentWebhook(row) })

export const presentStats = (stats: WebhookStats) => ({
  success: true as const,
  since: stats.since.toISOString(),
  endpoints: stats.endpoints.map(presentEndpointStats)
})

export const presentRotated = (rotated: RotatedSecret) => ({
  success: true as const,
  webhook_id: rotated.webhookId,
  secret: rotated.secret,
  previous_secret_expires_at: new Date(rotated.previousSecretExpiresAt).toISOString()
})

export const presentDone = () => ({ success: true as const })

export const presentTest = (deliveryId: string) => ({ success: true as const, delivery_id: deliveryId })

export const presentAttempts = (rows: ReadonlyArray<AttemptRow>) => ({ success: true as const, deliveries: rows.map(presentAttempt) })

export const presentDeadLetters = (rows: ReadonlyArray<DeadLetterRow>) => ({ success: true as const, items: rows.map(presentDeadLetter) })

export const presentReplayed = (newDeliveryId: string) => ({ success: true as const, new_delivery_id: newDeliveryId })

/** The developer webhook as /api/v1/app/developer/webhook shows it. */
const presentDeveloper = (row: WebhookRow) => ({
  webhook_id: row.webhookId,
  url: row.url,
  events: [...row.events],
  created_at: new Date(row.createdAt).toISOString()
})

export const presentDeveloperWebhook = (row: WebhookRow) => ({ success: true as const, ...presentDeveloper(row) })

/** PUT: `created`, the endpoint, and its secret when this request made it. */
export const presentDeveloperSet = ({ created, secret, webhook }: DeveloperWebhookSet) =>
  secret === undefined
    ? { success: true as const, created, ...presentDeveloper(webhook) }
    : { success: true as const, created, ...presentDeveloper(webhook), secret }
