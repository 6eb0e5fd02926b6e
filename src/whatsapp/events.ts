import type { GatewayErrorRecord } from "../domain/gatewayError.ts"

/** The public surface shows numbers as digits with the country code, no '+' (Interakt's form). */
export const digitsOf = (e164: string) => (e164.startsWith("+") ? e164.slice(1) : e164)

export type WaStatus = "sent" | "delivered" | "read" | "failed"

/** What a message.* event of a public send carries (docs/whatsapp.md, Webhooks). */
export const statusEventData = (
  message: { readonly messageId: string; readonly callbackData: string | null; readonly recipient: string; readonly type: string },
  status: WaStatus,
  error?: GatewayErrorRecord | null
) => ({
  id: message.messageId,
  callbackData: message.callbackData,
  channel: "whatsapp" as const,
  fullPhoneNumber: digitsOf(message.recipient),
  type: message.type,
  status,
  ...(error ? { error } : {})
})
