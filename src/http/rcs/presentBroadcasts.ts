import type { BroadcastRow, RcsTargetStatus, TargetRow } from "../../broadcasts/BroadcastsRepo.ts"
import { isoOrNull } from "../../storage/isoTimestamp.ts"
import type { CursorPage } from "../../storage/ListCursors.ts"
import { presentListPage } from "./listPage.ts"

// How /api/v1/rcs/broadcasts presents the Broadcasts service's domain values (BroadcastsApi.ts
// declares the shapes); GraphQL presents the same rows in graphql/nodes.ts.

/** A broadcast as every read shows it (the contract names id, name, status and the counters). */
export const broadcastView = (row: BroadcastRow) => ({
  id: row.broadcastId,
  name: row.name,
  bot_id: row.botId,
  template_id: row.templateId,
  contact_list_id: row.listId,
  status: row.status,
  scheduled_at: isoOrNull(row.scheduledAt),
  total_count: row.totalCount,
  sent_count: row.sentCount,
  delivered_count: row.deliveredCount,
  read_count: row.readCount,
  failed_count: row.failedCount,
  cancelled_count: row.cancelledCount,
  created_at: row.createdAt.toISOString(),
  started_at: isoOrNull(row.startedAt),
  completed_at: isoOrNull(row.completedAt),
  cancelled_at: isoOrNull(row.cancelledAt),
  variables: row.variables ?? {}
})

/** A target's Gateway error record as a field, without the envelope's `success`. */
const withoutEnvelope = ({ success: _success, ...record }: NonNullable<TargetRow["error"]>) => record

const targetView = (row: TargetRow) => ({
  target_no: row.targetNo,
  phone: row.phone,
  message_id: row.messageId,
  status: row.status as RcsTargetStatus,
  failure_reason: row.failureReason,
  error: row.error === null ? null : withoutEnvelope(row.error),
  sent_at: isoOrNull(row.sentAt),
  delivered_at: isoOrNull(row.deliveredAt),
  read_at: isoOrNull(row.readAt),
  failed_at: isoOrNull(row.failedAt)
})

export const presentBroadcast = (row: BroadcastRow) => ({ success: true as const, broadcast: broadcastView(row) })
export const presentBroadcasts = (page: CursorPage<BroadcastRow>) => presentListPage("broadcasts", page, broadcastView)
export const presentTargets = (page: CursorPage<TargetRow>) => presentListPage("targets", page, targetView)
