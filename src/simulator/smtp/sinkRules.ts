/**
 * The SMTP sink's rules: an address's local part chooses its fate, as the gateway simulator's
 * number suffixes do (simulator/rules.ts), so a test or a demo picks an outcome by the address
 * it writes.
 */

/** What happens to mail for one envelope recipient. */
export type RecipientFate = "deliver" | "bounce" | "soft" | "complaint"

/** An SMTP reply the sink gives; the text starts with its enhanced status code (RFC 3463). */
export interface SinkReply {
  readonly code: number
  readonly message: string
}

const localPart = (address: string): string => {
  const at = address.lastIndexOf("@")
  return (at === -1 ? address : address.slice(0, at)).toLowerCase()
}

export const recipientFate = (address: string): RecipientFate => {
  const local = localPart(address)
  if (local.startsWith("bounce")) return "bounce"
  if (local.startsWith("soft")) return "soft"
  if (local.startsWith("complaint")) return "complaint"
  return "deliver"
}

/** A sender the sink refuses, and so the whole message with it. */
export const senderRefused = (address: string): boolean => localPart(address).startsWith("reject")

export const hardBounceReply = (recipient: string): SinkReply => ({
  code: 550,
  message: `5.1.1 <${recipient}>: Recipient address rejected: User unknown in virtual mailbox table`
})

export const softBounceReply = (recipient: string): SinkReply => ({
  code: 451,
  message: `4.2.0 <${recipient}>: Recipient address deferred: mailbox temporarily unavailable, try again later`
})

export const senderRefusedReply = (sender: string): SinkReply => ({
  code: 554,
  message: `5.7.1 <${sender}>: Sender address rejected: Access denied`
})

export const ACCEPTED_MESSAGE = "2.0.0 Ok: queued"

/** A repeat of a message already taken: accepted again so the sender stops retrying, nothing redone. */
export const DUPLICATE_MESSAGE = "2.0.0 already accepted"
