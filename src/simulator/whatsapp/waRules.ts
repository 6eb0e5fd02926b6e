/**
 * The WhatsApp half's behaviour per recipient, by the `to` number's last four digits: the same
 * digits as RBM's (../rules.ts), with the Cloud API's outcomes (design, "Inbound and the gateway").
 */
export type WaRule =
  /** 0001: 400 with code 131026 in the answer to the send. */
  | "undeliverable"
  /** 0002: the request is held open and never answered; nothing is sent. */
  | "no-answer"
  /** 0003: 500 with code 131000; nothing is sent. */
  | "server-error"
  /** 0004: accepted and delivered (statuses posted), then the connection is cut instead of answering. */
  | "cut-after-accept"
  /** 0005: sent and delivered, never read. */
  | "never-read"
  /** 0006: accepted, then a `failed` status with code 131049. */
  | "ecosystem-failure"
  /** Anything else: sent, delivered, read. */
  | "normal"

export const waRuleOf = (digits: string): WaRule => {
  switch (digits.slice(-4)) {
    case "0001":
      return "undeliverable"
    case "0002":
      return "no-answer"
    case "0003":
      return "server-error"
    case "0004":
      return "cut-after-accept"
    case "0005":
      return "never-read"
    case "0006":
      return "ecosystem-failure"
    default:
      return "normal"
  }
}

/** Digits with country code from a number written with or without `+` (or spaces, dashes). */
export const digitsOf = (phone: string): string => phone.replace(/\D/g, "")

/** E.164 allows up to 15 digits; anything under 7 is no phone number. */
export const isPhoneDigits = (digits: string): boolean => digits.length >= 7 && digits.length <= 15
