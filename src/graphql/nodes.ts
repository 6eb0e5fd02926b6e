import type { CustomerRow } from "../customers/CustomersRepo.ts"
import type { BroadcastRow, TargetRow, TargetStatus } from "../broadcasts/BroadcastsRepo.ts"
import type { CloudContent } from "../whatsapp/message/publicMessage.ts"
import type { WaTemplateRow } from "../whatsapp/templates/WaTemplatesRepo.ts"
import type { LedgerRow } from "../wallet/Wallet.ts"
import { callDirectionOf, type CallRow, callStatusOf, type ConversationRow, type LastMessage, type MessageRow } from "./reads.ts"
import { inboundContent, outboundContent } from "./messageContent.ts"
import type { Loaders } from "./context.ts"

/** How GraphQL shows each stored row: one mapper per node type, shared by queries and subscriptions. */
export const iso = (value: Date | string) => new Date(value).toISOString()
export const upper = (value: string) => value.toUpperCase()

/** A send's status as GraphQL shows it: Meta took it (accepted) or may have (unconfirmed) reads QUEUED until Meta says sent. */
export const messageStatus = (status: string | null | undefined) =>
  status === null || status === undefined ? null : status === "accepted" || status === "unconfirmed" ? "QUEUED" : upper(status)

export const contactNode = (row: CustomerRow) => ({ __kind: "Contact" as const, row })
export const conversationNode = (row: ConversationRow) => ({ __kind: "Conversation" as const, row })
export type ContactNode = ReturnType<typeof contactNode>
export type ConversationNode = ReturnType<typeof conversationNode>

/** A message; a conversation's last message lacks what its own row holds (status, content), loaded when asked. */
export interface MessageNode {
  readonly id: string
  readonly conversation_id: string
  readonly direction: "INBOUND" | "OUTBOUND"
  readonly type: string
  readonly text?: string | null
  readonly content?: Record<string, unknown> | null
  readonly status?: string | null
  readonly callback_data?: string | null
  readonly created_at: string
}

export const messageNode = (conversationId: string, row: MessageRow): MessageNode => ({
  id: row.id,
  conversation_id: conversationId,
  direction: row.direction === "inbound" ? "INBOUND" : "OUTBOUND",
  type: row.type,
  ...(row.direction === "inbound"
    ? { text: row.text, content: inboundContent(row.content) }
    : outboundContent(row.content as CloudContent, { body: row.templateBody, category: row.templateCategory })),
  status: messageStatus(row.status),
  callback_data: row.callbackData,
  created_at: row.at
})

/** The stored last message: an inbound one's text is the one its row has; an outbound one's is read from its send. */
export const lastMessageNode = (conversationId: string, last: LastMessage): MessageNode => ({
  id: last.id,
  conversation_id: conversationId,
  direction: last.direction === "inbound" ? "INBOUND" : "OUTBOUND",
  type: last.type,
  ...(last.direction === "inbound" ? { text: last.text } : {}),
  created_at: iso(last.at)
})

/** A last message's send read as a Message's text and content (undefined: no such send of the account). */
export const sentContent = async (node: MessageNode, loaders: Loaders) => {
  const send = await loaders.send.load(node.id)
  return send === undefined ? undefined : outboundContent(send.content, { body: send.templateBody, category: send.templateCategory })
}

export const templateNode = (row: WaTemplateRow) => ({
  id: row.templateId,
  name: row.name,
  language: row.language,
  category: row.category,
  status: row.status,
  rejected_reason: row.rejectedReason,
  components: row.definition.components,
  created_at: iso(row.createdAt)
})

/** An admin credit's reference as GraphQL shows it (shared/design/graphql.md). */
export const ADMIN_CREDIT_REFERENCE = "admin"

export const ledgerNode = (row: LedgerRow) => ({
  id: row.txnId,
  kind: upper(row.kind),
  amount: row.kind === "charge" ? -Number(row.amount) : Number(row.amount),
  balance_after: row.balanceAfter === null ? null : Number(row.balanceAfter),
  // Every credit but an admin's names what it was for; `herald admin wallet-credit` books none (the
  // ledger's unique reference would refuse a second one), and the design names it `admin`.
  reference: row.reference ?? (row.kind === "credit" ? ADMIN_CREDIT_REFERENCE : null),
  created_at: iso(row.createdAt)
})

/** A broadcast as GraphQL shows it: plain fields (REST's counters), so any producer of a BroadcastRow can answer a Broadcast. */
export const broadcastNode = (row: BroadcastRow) => ({
  id: row.broadcastId,
  name: row.name,
  status: upper(row.status),
  total_count: row.totalCount,
  sent_count: row.sentCount,
  delivered_count: row.deliveredCount,
  read_count: row.readCount,
  failed_count: row.failedCount,
  created_at: iso(row.createdAt)
})

/**
 * A broadcast target's status as a MessageStatus (docs/graphql.md, Broadcasts): not yet taken by the
 * gateway, or taken without confirmation, is QUEUED; a target the cancellation stopped is FAILED
 * (failure_reason "cancelled"). The status filter maps back through the same table.
 */
export const TARGET_STATUS: Readonly<Record<TargetStatus, string>> = {
  pending: "QUEUED",
  unconfirmed: "QUEUED",
  sent: "SENT",
  delivered: "DELIVERED",
  read: "READ",
  failed: "FAILED",
  cancelled: "FAILED",
  // A campaign's customer who had opted out (no RCS broadcast has such a target).
  skipped: "FAILED"
}
export const MESSAGE_STATUSES = ["QUEUED", "SENT", "DELIVERED", "READ", "FAILED"] as const
export const targetStatusesOf = (status: string) => (Object.keys(TARGET_STATUS) as Array<TargetStatus>).filter((stored) => TARGET_STATUS[stored] === status)

export const targetNode = (row: TargetRow) => ({
  phone: row.phone,
  status: TARGET_STATUS[row.status],
  failure_reason: row.status === "cancelled" ? (row.failureReason ?? "cancelled") : row.failureReason,
  message_id: row.messageId
})

/**
 * Recipients per current status, from the broadcast's counters alone (no scan of its targets): the
 * counters are cumulative (sent includes delivered, delivered includes read), so each status is a
 * difference; cancelled ones (targets and contacts a cancelled expansion never wrote) are FAILED,
 * and QUEUED is what is left of total_count. The counts add up to total_count.
 */
export const byStatusOf = (row: BroadcastRow) => {
  const failed = row.failedCount + row.cancelledCount
  const counts: Record<(typeof MESSAGE_STATUSES)[number], number> = {
    QUEUED: row.totalCount - row.sentCount - failed,
    SENT: row.sentCount - row.deliveredCount,
    DELIVERED: row.deliveredCount - row.readCount,
    READ: row.readCount,
    FAILED: failed
  }
  return MESSAGE_STATUSES.map((status) => ({ status, count: Math.max(0, counts[status]) }))
}

export interface CallNode {
  readonly id: string
  readonly conversationId: string
  readonly direction: string
  readonly status: string
  readonly duration_sec: number
  readonly recording_url: string | null
  readonly started_at: string
}

/** A stored call: Meta's direction and status onto the enums (reads.ts), started_at = its end less its duration. */
export const callNode = (row: CallRow): CallNode => ({
  id: row.callId,
  conversationId: row.conversationId,
  direction: callDirectionOf(row.direction),
  status: callStatusOf(row.status),
  duration_sec: row.durationSec,
  recording_url: row.recordingUrl,
  started_at: new Date(new Date(row.occurredAt).getTime() - row.durationSec * 1000).toISOString()
})
