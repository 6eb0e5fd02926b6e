import type { Effect } from "effect"

/** A domain identity's signing key: nodemailer signs the message with it (RFC 6376). */
export interface DkimKey {
  readonly domainName: string
  readonly keySelector: string
  /** PEM (PKCS#8) RSA private key. */
  readonly privateKey: string
}

/**
 * One SMTP transaction of a partner's e-mail: the message as its recipients see it (To, Cc,
 * Reply-To headers), handed over for one envelope recipient. Herald relays each recipient on its
 * own so that every recipient has its own outcome, retries and events, as SES reports them.
 */
export interface OutgoingMail {
  /** Herald's message_id: the `Message-ID` header is `<message_id@herald>` and `X-Herald-Message-Id` carries it bare. */
  readonly messageId: string
  readonly from: string
  /** The envelope recipient (RCPT TO) of this transaction. */
  readonly recipient: string
  readonly to: ReadonlyArray<string>
  readonly cc: ReadonlyArray<string>
  readonly replyTo: ReadonlyArray<string>
  readonly subject: string
  readonly text?: string | undefined
  readonly html?: string | undefined
  readonly dkim?: DkimKey | undefined
}

/**
 * What the relay answered:
 * - Accepted: 250 after DATA;
 * - Bounced: a 5xx for this recipient (RCPT TO): a hard bounce;
 * - Deferred: a 4xx, no answer, a dropped connection: worth trying again later;
 * - Rejected: a 5xx for the message itself (MAIL FROM or DATA): refused whole, never retried.
 */
export type RelayOutcome =
  | { readonly _tag: "Accepted"; readonly response: string }
  | { readonly _tag: "Bounced"; readonly code: number; readonly response: string }
  | { readonly _tag: "Deferred"; readonly code: number | null; readonly response: string }
  | { readonly _tag: "Rejected"; readonly code: number; readonly response: string }

/** The EmailRelay service (EmailRelay.ts). Never fails: every outcome is an answer. */
export interface EmailRelayApi {
  readonly send: (mail: OutgoingMail) => Effect.Effect<RelayOutcome>
  /** The SMTP URL mail goes to (for logs and the bench). */
  readonly url: string
}
