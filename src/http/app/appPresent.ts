import type { CapiConfig } from "../../conversions/CapiConfigs.ts"
import type { CapiEventRow } from "../../conversions/CapiEventsRepo.ts"
import type { IntegrationLogRow } from "../../integrations/IntegrationLogsRepo.ts"
import type { Segment } from "../../segments/Segments.ts"

/**
 * The app API's answers (docs/app-api.md, docs/conversions.md) presented from the services' domain
 * values: snake_case names, ISO 8601 UTC times. A contact is the customer shape every surface
 * shares (../customerPresent.ts).
 */

export const presentSegment = (segment: Segment) => ({
  id: segment.segmentId,
  name: segment.name,
  filters: segment.filters,
  tags: segment.tags,
  customer_count: segment.customerCount,
  created_at: segment.createdAt.toISOString(),
  updated_at: segment.updatedAt.toISOString()
})

/** The Conversions API configuration: the token shown only by its last four characters. */
export const presentCapiConfig = (config: CapiConfig) => ({
  success: true as const,
  dataset_id: config.datasetId,
  access_token: `…${config.tokenLast4}`,
  test_event_code: config.testEventCode,
  updated_at: config.updatedAt.toISOString()
})

export const presentCapiEvent = (event: CapiEventRow) => ({
  id: event.eventUid,
  event_name: event.eventName,
  event_id: event.eventId,
  status: event.status,
  attempts: event.attempts,
  error: event.error,
  created_at: event.createdAt.toISOString(),
  sent_at: event.sentAt?.toISOString() ?? null
})

export const presentIntegrationLog = (log: IntegrationLogRow) => ({
  id: log.logId,
  integration: log.integration,
  status_code: log.statusCode,
  outcome: log.outcome,
  attempt: log.attempt,
  took_ms: log.tookMs,
  events: log.events,
  response_snippet: log.responseSnippet,
  created_at: log.createdAt.toISOString()
})
