import type { Conversation } from "../../conversations/ConversationsRepo.ts"
import { presentCustomerRef } from "../../customers/customerShape.ts"
import { isoOrNull } from "../../storage/isoTimestamp.ts"
import { digitsOf } from "../../whatsapp/events.ts"
import type { WaMessage, WaMessageStatusEntry } from "../../whatsapp/message/WaMessagesRepo.ts"
import type { WaTemplateRow } from "../../whatsapp/templates/WaTemplatesRepo.ts"

/**
 * A message of POST /api/v1/public/message as GET /api/v1/public/message/{id} shows it: the fields
 * of its message.* events (id, callbackData, channel, fullPhoneNumber as digits, type, status,
 * error) with the number it left from and the times of its statuses (ISO 8601, milliseconds).
 */
export const presentWaMessage = (row: WaMessage) => ({
  id: row.messageId,
  callbackData: row.callbackData,
  channel: "whatsapp" as const,
  fullPhoneNumber: digitsOf(row.recipient),
  type: row.type,
  status: row.status,
  error: row.error,
  phone_number_id: row.phoneNumberId,
  template_id: row.templateId,
  price: Number(row.price),
  attempts: row.attempts,
  created_at: row.createdAt.toISOString(),
  sent_at: isoOrNull(row.sentAt),
  delivered_at: isoOrNull(row.deliveredAt),
  read_at: isoOrNull(row.readAt),
  failed_at: isoOrNull(row.failedAt)
})

export const presentWaStatus = (row: WaMessageStatusEntry) => ({ status: row.status, at: row.at.toISOString(), error: row.error })

export const presentWaTemplate = (row: WaTemplateRow) => ({
  id: row.templateId,
  name: row.name,
  language: row.language,
  category: row.category,
  kind: row.kind,
  status: row.status,
  rejected_reason: row.rejectedReason,
  components: row.definition.components,
  warnings: [...row.warnings],
  created_at: new Date(row.createdAt).toISOString(),
  updated_at: new Date(row.updatedAt).toISOString()
})

/** A conversation as the public API shows it (docs/whatsapp.md, Conversations). */
export const presentConversation = (row: Conversation) => ({
  id: row.conversationId,
  phone_number_id: row.phoneNumberId,
  customer: presentCustomerRef({ id: row.customerId, phone: row.customerPhone, name: row.customerName }),
  status: row.status,
  assignee_email: row.assigneeEmail,
  last_message: row.lastMessage ?? null,
  updated_at: row.updatedAt.toISOString()
})
