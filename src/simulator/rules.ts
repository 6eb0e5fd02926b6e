/**
 * The simulator's behaviour per recipient, chosen by the number's last four digits
 * (DESIGN.md, "Gateway simulator"), so tests and demos pick an outcome by picking a number.
 */
export type RecipientRule =
  /** 0001: RBM's answer for a number without RCS, 404 NOT_FOUND, in the answer to the send. */
  | "not-rcs"
  /** 0002: the request is held open and never answered; nothing is delivered. */
  | "no-answer"
  /** 0003: 503 UNAVAILABLE; nothing is delivered. */
  | "unavailable"
  /** 0004: taken and delivered, then the connection is cut instead of answering. */
  | "cut-after-accept"
  /** 0005: delivered, never read. */
  | "never-read"
  /** 0006 (Herald's addition): accepted, then rejected asynchronously (RBM's TTL_EXPIRATION_REVOKED). */
  | "expires"
  /** Anything else: accepted, delivered, read. */
  | "normal"

export const ruleOf = (phone: string): RecipientRule => {
  switch (phone.slice(-4)) {
    case "0001":
      return "not-rcs"
    case "0002":
      return "no-answer"
    case "0003":
      return "unavailable"
    case "0004":
      return "cut-after-accept"
    case "0005":
      return "never-read"
    case "0006":
      return "expires"
    default:
      return "normal"
  }
}

/** Whether a send to this number reaches the recipient's device. */
export const reachesRecipient = (rule: RecipientRule) => rule === "normal" || rule === "never-read" || rule === "cut-after-accept"

/** RBM's feature names, as a capable device reports them. */
export const SIMULATED_FEATURES: ReadonlyArray<string> = [
  "RICHCARD_STANDALONE",
  "RICHCARD_CAROUSEL",
  "ACTION_CREATE_CALENDAR_EVENT",
  "ACTION_DIAL",
  "ACTION_OPEN_URL",
  "ACTION_SHARE_LOCATION",
  "ACTION_VIEW_LOCATION",
  "REVOCATION"
]
