import type { GatewayErrorCategory, GatewayErrorRecord } from "../../domain/gatewayError.ts"

/**
 * Meta's error answers as the contract's Gateway error record. Meta advises building on `code`
 * (titles are being deprecated, subcodes dropped since v16), so the category comes from the code,
 * and only from the HTTP status when the code is unknown or the body is not Meta's envelope.
 * `message` is a short sentence fit to be a broadcast target's failure_reason; `detail` is what
 * Meta itself said; `upstream_code` keeps Meta's code for support.
 *
 * Sources: Meta's "Error codes" page of the WhatsApp Business Platform (titles quoted in
 * `title`), the Graph API error-handling page for 0–368. docs/whatsapp-error-codes.md is this
 * table as prose; keep them together.
 */

export interface MetaErrorMapping {
  readonly code: number
  /** Meta's title for the code. */
  readonly title: string
  readonly category: GatewayErrorCategory
  /** The record's `message`. */
  readonly message: string
  /** What happened, in a sentence (for the docs). */
  readonly meaning: string
  /** What the caller should do (for the docs). */
  readonly action: string
}

const entry = (
  code: number,
  category: GatewayErrorCategory,
  title: string,
  message: string,
  meaning: string,
  action: string
): MetaErrorMapping => ({ code, title, category, message, meaning, action })

/** Every Meta code Herald maps; any other code falls back to the HTTP status (`categoryOfStatus`). */
export const META_ERROR_CODES: ReadonlyArray<MetaErrorMapping> = [
  // Authorization and account: an operator must act; resending changes nothing.
  entry(0, "config", "AuthException", "WhatsApp credentials were rejected.",
    "Meta could not authenticate the access token (typically expired or invalidated).",
    "An operator renews the number's access token; then send again."),
  entry(3, "config", "API Method", "The WhatsApp app lacks a capability or permission.",
    "The app is not allowed to call this API method.",
    "An operator checks the app's permissions (whatsapp_business_messaging) in Meta's app dashboard."),
  entry(10, "config", "Permission Denied", "The WhatsApp app lacks a permission.",
    "A permission is not granted to the app, or has been removed.",
    "An operator grants the app the WhatsApp permissions again."),
  entry(190, "config", "Access token has expired", "WhatsApp credentials have expired.",
    "The access token has expired.",
    "An operator renews the number's access token; then send again."),
  entry(200, "config", "API Permission (200-299)", "The WhatsApp app lacks a permission on this number.",
    "A permission on the business asset is not granted, or has been removed (Meta uses the whole 200-299 range for this).",
    "An operator assigns the app to the WhatsApp Business Account and number again."),
  entry(368, "config", "Temporarily blocked for policies violations", "The WhatsApp Business Account is blocked for a policy violation.",
    "Meta restricted or disabled the business account for violating a platform policy.",
    "Stop sending; the account owner reviews the violation in Business Support Home and appeals."),
  entry(131031, "config", "Account has been locked", "The WhatsApp Business Account is locked.",
    "Meta locked the business account (policy violation, or data that could not be verified such as a two-step PIN mismatch).",
    "Stop sending; the account owner resolves the lock in Meta Business Manager."),
  entry(131042, "config", "Business eligibility payment issue", "The WhatsApp Business Account has a payment problem.",
    "Meta refuses sends because of the business account's payment settings or credit line.",
    "The account owner fixes the payment method in Meta Business Manager; then send again."),
  entry(131037, "config", "WhatsApp provided number needs display name approval", "The sending number's display name is not approved yet.",
    "The number cannot send until Meta approves its display name.",
    "Wait for display name approval (WhatsApp Manager), then send again."),
  entry(130497, "config", "Business account is restricted from messaging users in this country", "The business cannot message recipients in this country.",
    "Meta restricts this business account from messaging users in the recipient's country.",
    "Do not send to this country from this account."),
  // Throttling: the sender or the pair sent too fast; later, slower, it goes through.
  entry(4, "quota", "Too many API calls", "The WhatsApp app reached its API call limit.",
    "The app reached Graph API's call rate limit.",
    "Send again later, more slowly."),
  entry(80007, "quota", "Rate limit issues", "The WhatsApp Business Account reached its rate limit.",
    "The business account reached its API rate limit.",
    "Send again later, more slowly."),
  entry(130429, "quota", "Rate limit hit", "The sending number's throughput limit was reached.",
    "Cloud API's message throughput for the number was reached.",
    "Send again later; lower the number's configured throughput if it keeps happening."),
  entry(131048, "quota", "Spam rate limit hit", "The sending number is limited for spam.",
    "Meta limits how many messages the number may send because too many earlier ones were blocked or flagged as spam.",
    "Send less; check the number's quality rating in WhatsApp Manager."),
  entry(131056, "quota", "(Business Account, Consumer Account) pair rate limit hit", "Too many messages to this recipient in a short time.",
    "The number sent too many messages to the same recipient in a short period.",
    "Wait before sending to this recipient again."),
  // The recipient: this number cannot be reached now; another number or channel can.
  entry(131026, "recipient", "Message Undeliverable", "The recipient cannot receive this message.",
    "The number is not on WhatsApp, has not accepted WhatsApp's current terms, or runs a version too old for the message.",
    "Check the number; reach this recipient another way."),
  entry(131049, "recipient", "Meta chose not to deliver", "Meta did not deliver this marketing message.",
    "Meta held the message back to keep the recipient's marketing experience healthy (per-user marketing limit).",
    "Do not resend at once; try much later (a day or more), or send a utility template if the content is one."),
  entry(131050, "recipient", "User has stopped marketing messages", "The recipient stopped marketing messages from this business.",
    "The recipient chose to stop receiving marketing messages from this business.",
    "Do not send marketing to this recipient; record the opt-out."),
  entry(130472, "recipient", "User's number is part of an experiment", "The recipient is in Meta's marketing message experiment.",
    "The recipient is in a group that receives no marketing templates unless a service window is open (Meta's experiment, not a rate limit).",
    "Resending fails the same way; ask the recipient to message first, or reach them another way."),
  entry(131021, "recipient", "Recipient cannot be sender", "The recipient is the sending number itself.",
    "The message was addressed to the number that sends it.",
    "Send to a different number."),
  // Content: the request itself is wrong for Meta; the same request fails again.
  entry(100, "content", "Invalid parameter", "WhatsApp refused a parameter of the message.",
    "The request held an unsupported, misspelt or invalid parameter.",
    "Read the detail, fix the message, send again."),
  entry(131008, "content", "Required parameter is missing", "The message lacks a required parameter.",
    "A parameter Meta requires is missing.",
    "Read the detail, fix the message, send again."),
  entry(131009, "content", "Parameter value is not valid", "A parameter of the message has an invalid value.",
    "One or more parameter values are invalid.",
    "Read the detail, fix the message, send again."),
  entry(131051, "content", "Unsupported message type", "WhatsApp does not support this message type.",
    "The message type is not supported (for this recipient or this number).",
    "Send another type of message."),
  entry(131047, "content", "Re-engagement message", "Outside the customer service window: only a template can be sent.",
    "More than 24 hours have passed since the recipient last wrote to this number, so free-form messages are refused.",
    "Send an approved template (type Template) instead; free-form messages work again after the recipient replies."),
  entry(132000, "content", "Template Param Count Mismatch", "The template's values do not match its placeholders.",
    "The number of values sent does not match the number of placeholders in the approved template.",
    "Send exactly the values the template's placeholders ask for."),
  entry(132005, "content", "Template Hydrated Text Too Long", "The template's text is too long once filled in.",
    "The template's text with the values filled in exceeds Meta's length limit.",
    "Send shorter values."),
  entry(132007, "content", "Template Format Character Policy Violated", "A template value breaks WhatsApp's formatting rules.",
    "A value contains characters or formatting the template policy forbids (e.g. newlines, tabs or more than four spaces in a row).",
    "Remove line breaks, tabs and runs of spaces from the values."),
  entry(132012, "content", "Template Parameter Format Mismatch", "A template value has the wrong format.",
    "A value does not have the format the template defines (e.g. a header image where the template has a document).",
    "Send each value in the type the template's component expects."),
  entry(132001, "config", "Template does not exist", "The template does not exist in this language or is not approved.",
    "Meta has no approved template of this name in this language for the business account (deleted or never approved upstream).",
    "Check the template's name, language and status in WhatsApp Manager; create or resubmit it."),
  entry(132015, "config", "Template is Paused", "The template is paused for low quality.",
    "Meta paused the template because of low quality ratings.",
    "Edit the template (or wait for the pause to end), or send another template."),
  entry(132016, "config", "Template is Disabled", "The template is disabled for low quality.",
    "The template was paused too many times for low quality and is permanently disabled.",
    "Create a new template with different content."),
  // Media: the file behind the link.
  entry(131052, "media", "Media download error", "WhatsApp could not download the media.",
    "Meta could not download a media file (Meta's reference words it for media a user sent; on a send, the file behind the link).",
    "Check that the media URL is public and answers with the file; send again."),
  entry(131053, "media", "Media upload error", "WhatsApp could not process the media.",
    "Meta could not upload the media used in the message (unreachable link, unsupported type or size).",
    "Use a publicly reachable https file of a supported type and size; send again."),
  // Meta's own trouble: nothing was accepted, sending again is safe and may work.
  entry(1, "gateway", "API Unknown", "WhatsApp answered with an unknown error.",
    "Invalid request or possible server error on Meta's side.",
    "Herald sends it again automatically; if it persists, check Meta's platform status."),
  entry(2, "gateway", "API Service", "WhatsApp is temporarily unavailable.",
    "Temporary downtime or overload at Meta.",
    "Herald sends it again automatically."),
  entry(131000, "gateway", "Something went wrong", "WhatsApp failed to send the message.",
    "The message failed because of an unknown error at Meta.",
    "Herald sends it again automatically."),
  entry(131016, "gateway", "Service unavailable", "A WhatsApp service is temporarily unavailable.",
    "A Meta service is temporarily unavailable.",
    "Herald sends it again automatically."),
  entry(131057, "gateway", "Account in maintenance mode", "The WhatsApp Business Account is in maintenance.",
    "The business account is in maintenance mode, typically while its throughput is being upgraded.",
    "Herald sends it again automatically; it clears within minutes.")
]

const BY_CODE: ReadonlyMap<number, MetaErrorMapping> = new Map(META_ERROR_CODES.map((m) => [m.code, m]))

/** Meta uses the whole 200–299 range for "API Permission". */
const mappingOf = (code: number): MetaErrorMapping | undefined =>
  BY_CODE.get(code) ?? (code > 200 && code <= 299 ? BY_CODE.get(200) : undefined)

/** For a code Herald does not map, or no code at all. */
export const categoryOfStatus = (status: number): GatewayErrorCategory =>
  status >= 500 ? "gateway" : status === 429 ? "quota" : status === 401 || status === 403 ? "config" : "unknown"

const FALLBACK_MESSAGES: Record<GatewayErrorCategory, string> = {
  content: "WhatsApp refused the message.",
  media: "WhatsApp refused the media.",
  recipient: "WhatsApp cannot deliver to this recipient.",
  config: "WhatsApp refused the sending account's credentials or settings.",
  quota: "A WhatsApp rate limit was reached.",
  gateway: "WhatsApp is unavailable.",
  unknown: "WhatsApp answered with an unexpected error."
}

// ---------------------------------------------------------------------------------------------
// Reading Meta's bodies, which may be anything
// ---------------------------------------------------------------------------------------------

type Json = Record<string, unknown>

const isRecord = (value: unknown): value is Json => value !== null && typeof value === "object" && !Array.isArray(value)

const MAX_QUOTED = 300

/** Upstream text goes into one-line fields: no line breaks, bounded length. */
const oneLine = (text: string) => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > MAX_QUOTED ? `${flat.slice(0, MAX_QUOTED - 1)}…` : flat
}

const asJson = (body: unknown): unknown => {
  if (typeof body !== "string") return body
  try {
    return JSON.parse(body)
  } catch {
    return body
  }
}

const textOf = (value: unknown) => (typeof value === "string" ? value.trim() : "")
const codeOf = (value: unknown) => (typeof value === "number" && Number.isInteger(value) ? value : undefined)

interface MetaError {
  readonly code: number | undefined
  /** Meta's own words: its message (or title) and its details, as one line. */
  readonly said: string
}

/**
 * A statement of Meta's as compared with another: without the `(#code) ` prefix its messages
 * carry, closing punctuation, case and runs of spaces.
 */
const gist = (text: string) => text.replace(/^\(#\d+\)\s*/, "").replace(/[\s.!:;,]+$/, "").replace(/\s+/g, " ").toLowerCase()

/**
 * Meta's statements, each once: its title, message and details often say the same thing (the
 * message with "(#code) " before it, the details with another case or a full stop), and one that
 * holds another replaces it.
 */
const distinct = (statements: ReadonlyArray<string>): Array<string> => {
  const kept: Array<string> = []
  for (const statement of statements) {
    const said = gist(statement)
    if (said === "" || kept.some((k) => gist(k).includes(said))) continue
    const held = kept.findIndex((k) => said.includes(gist(k)))
    if (held >= 0) kept[held] = statement
    else kept.push(statement)
  }
  return kept
}

/** An item of Meta's errors (envelope `error`, or webhook `errors[]`). */
const readMetaError = (error: Json): MetaError => {
  const message = textOf(error.message) || textOf(error.title)
  const details = isRecord(error.error_data) ? textOf(error.error_data.details) : ""
  const trace = textOf(error.fbtrace_id)
  const said = `${distinct([message, details]).join(": ")}${trace !== "" ? ` (fbtrace_id ${trace})` : ""}`
  return { code: codeOf(error.code), said: oneLine(said) }
}

const record = (
  category: GatewayErrorCategory,
  message: string,
  detail: string,
  code: number | undefined,
  messageId: string | undefined
): GatewayErrorRecord => ({
  success: false,
  message,
  detail,
  category,
  // The contract: only gateway trouble is re-queued; with a message_id a resend could double.
  retryable: category === "gateway" && messageId === undefined,
  ...(messageId !== undefined ? { message_id: messageId } : {}),
  ...(code !== undefined ? { upstream_code: code } : {})
})

const fromCode = (error: MetaError, fallback: GatewayErrorCategory, detail: string, messageId: string | undefined) => {
  const mapping = error.code === undefined ? undefined : mappingOf(error.code)
  return mapping !== undefined
    ? record(mapping.category, mapping.message, detail, error.code, messageId)
    : record(fallback, FALLBACK_MESSAGES[fallback], detail, error.code, messageId)
}

/** The error record of a send Meta answered with a non-2xx status, from that status and its body. */
export const fromMetaError = (status: number, body: unknown, messageId?: string): GatewayErrorRecord => {
  const parsed = asJson(body)
  const envelope = isRecord(parsed) && isRecord(parsed.error) ? parsed.error : undefined
  if (envelope === undefined) {
    const raw = typeof body === "string" ? body : body === undefined ? "" : JSON.stringify(body) ?? ""
    const category = categoryOfStatus(status)
    const detail = `Meta answered HTTP ${status}${raw.trim() !== "" ? `: ${oneLine(raw)}` : ""}`
    return record(category, FALLBACK_MESSAGES[category], detail, undefined, messageId)
  }
  const error = readMetaError(envelope)
  const detail = error.said !== "" ? error.said : `Meta answered HTTP ${status} with code ${error.code ?? "none"}`
  return fromCode(error, categoryOfStatus(status), detail, messageId)
}

/**
 * The error record of a `failed` status webhook (an asynchronous rejection), from its `errors`
 * array (`[{code, title, message, error_data: {details}}]`; the first item decides). Meta had
 * accepted the message, so pass `messageId` when the record should name it: retryable is then
 * false whatever the category.
 */
export const fromMetaStatusError = (errors: unknown, messageId?: string): GatewayErrorRecord => {
  const first = Array.isArray(errors) ? errors.find(isRecord) : undefined
  if (first === undefined) {
    return record("unknown", "WhatsApp reported the message failed without a reason.", "The failed status carried no errors.", undefined, messageId)
  }
  const error = readMetaError(first)
  const detail = error.said !== "" ? error.said : `Meta reported code ${error.code ?? "none"}`
  return fromCode(error, "unknown", detail, messageId)
}
