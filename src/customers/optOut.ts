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

/** An account's keywords, as keywords (`keywordOf`): its own list, or the defaults above. */
export interface OptKeywords {
  readonly optOut: ReadonlyArray<string>
  readonly optIn: ReadonlyArray<string>
}

export const DEFAULT_OPT_KEYWORDS: OptKeywords = { optOut: OPT_OUT_KEYWORDS, optIn: OPT_IN_KEYWORDS }

/** Most keywords an account may set in each list, and a keyword's longest form. */
export const MAX_OPT_KEYWORDS = 50
export const MAX_OPT_KEYWORD_LENGTH = 32

/** Whether a message's text is short enough to be a keyword at all (no list need be read otherwise). */
export const mayBeKeyword = (text: string | null | undefined): text is string => text !== null && text !== undefined && text.length <= 64

/** What a customer's message says about their consent to marketing, if anything, by the account's keywords. */
export const optChangeOf = (text: string | null | undefined, keywords: OptKeywords = DEFAULT_OPT_KEYWORDS): OptChange | undefined => {
  if (!mayBeKeyword(text)) return undefined
  const keyword = keywordOf(text)
  if (keyword.length === 0) return undefined
  if (keywords.optOut.includes(keyword)) return { optedOut: true, keyword }
  if (keywords.optIn.includes(keyword)) return { optedOut: false, keyword }
  return undefined
}

/** A list as given, each entry as a keyword; a problem per entry that is not one, and duplicates dropped. */
export const keywordListOf = (given: ReadonlyArray<string>, path: string) => {
  const problems: Array<{ readonly path: string; readonly message: string }> = []
  const keywords: Array<string> = []
  given.forEach((entry, i) => {
    const keyword = keywordOf(entry)
    if (keyword.length === 0) problems.push({ path: `${path}[${i}]`, message: "must hold a letter or a digit (case, spaces and punctuation are ignored)" })
    else if (keyword.length > MAX_OPT_KEYWORD_LENGTH) problems.push({ path: `${path}[${i}]`, message: `must be at most ${MAX_OPT_KEYWORD_LENGTH} letters and digits` })
    else if (!keywords.includes(keyword)) keywords.push(keyword)
  })
  if (given.length > MAX_OPT_KEYWORDS) problems.push({ path, message: `must hold at most ${MAX_OPT_KEYWORDS} keywords` })
  return { keywords, problems }
}

/**
 * An account's lists checked: opt-out must hold at least one keyword (a customer must always have
 * a word that stops marketing), and no keyword may be in both.
 */
export const checkOptKeywords = (input: { readonly opt_out: ReadonlyArray<string>; readonly opt_in: ReadonlyArray<string> }) => {
  const optOut = keywordListOf(input.opt_out, "opt_out")
  const optIn = keywordListOf(input.opt_in, "opt_in")
  const problems = [...optOut.problems, ...optIn.problems]
  if (input.opt_out.length === 0) problems.push({ path: "opt_out", message: "must hold at least one keyword: a customer must always be able to opt out" })
  const both = optOut.keywords.filter((k) => optIn.keywords.includes(k))
  if (both.length > 0) problems.push({ path: "opt_in", message: `must not repeat an opt-out keyword (${both.join(", ")})` })
  return { keywords: { optOut: optOut.keywords, optIn: optIn.keywords } satisfies OptKeywords, problems }
}

/** Whether a customer's traits say they opted out of marketing. */
export const isOptedOut = (traits: Readonly<Record<string, unknown>> | null | undefined) => traits?.[OPTED_OUT_TRAIT] === true
