/**
 * Opting out of marketing by keyword (docs/opt-outs.md). A customer's message that
 * is, as a whole, one of the opt-out keywords marks them opted out of marketing; one of the opt-in
 * keywords marks them back in. Case, spaces and punctuation are ignored ("Stop!", "stop all",
 * "opt-out" all count); a keyword inside a longer message does not ("please don't stop").
 *
 * The opt-out list is Twilio's Advanced Opt-Out list. For opting back in Twilio also takes YES;
 * Herald does not, since "yes" is the usual answer to an agent's question.
 */
export const OPT_OUT_KEYWORDS = ["STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "OPTOUT", "REVOKE"] as const
export const OPT_IN_KEYWORDS = ["START", "UNSTOP"] as const

/**
 * The customer trait that holds the state, `true` when opted out (a customer search filters on it:
 * `{"trait": "opted_out", "op": "eq", "value": true}`), beside `opted_out_at`, when it last changed.
 */
export const OPTED_OUT_TRAIT = "opted_out"
export const OPTED_OUT_AT_TRAIT = "opted_out_at"

/** A message's text as a keyword: letters and digits only, upper case. */
export const keywordOf = (text: string) => text.normalize("NFKC").replace(/[^\p{L}\p{N}]/gu, "").toUpperCase()

export interface OptChange {
  readonly optedOut: boolean
  /** The keyword as matched (upper case, without punctuation). */
  readonly keyword: string
}

/** What a customer's message says about their consent to marketing, if anything. */
export const optChangeOf = (text: string | null | undefined): OptChange | undefined => {
  if (text === null || text === undefined || text.length > 64) return undefined
  const keyword = keywordOf(text)
  if ((OPT_OUT_KEYWORDS as ReadonlyArray<string>).includes(keyword)) return { optedOut: true, keyword }
  if ((OPT_IN_KEYWORDS as ReadonlyArray<string>).includes(keyword)) return { optedOut: false, keyword }
  return undefined
}

/** Whether a customer's traits say they opted out of marketing. */
export const isOptedOut = (traits: Readonly<Record<string, unknown>> | null | undefined) => traits?.[OPTED_OUT_TRAIT] === true
