import type { CloudContent } from "../message/publicMessage.ts"

/**
 * Meta's send body for one message. `to` is digits without '+'. `callbackId` is Herald's message
 * id, carried as biz_opaque_callback_data: Meta echoes it in every status webhook of the message,
 * and the Cloud API has no idempotency key, so it is also how a send is recognised upstream.
 */
export const toCloudMessage = (to: string, content: CloudContent, callbackId: string): Record<string, unknown> => ({
  messaging_product: "whatsapp",
  recipient_type: "individual",
  to,
  type: content.type,
  [content.type]: content.object,
  biz_opaque_callback_data: callbackId
})
