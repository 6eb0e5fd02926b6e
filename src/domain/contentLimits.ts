import type { Media, MessageContent, RichCard, Suggestion } from "./content.ts"

/**
 * The RBM content limits (shared/reference/UPSTREAMS.md; the sources of each are in
 * docs/templates.md). Checked before anything is stored or sent, so a client learns every problem
 * at once instead of from an upstream rejection one message at a time. Pure and cheap: the
 * single-send path runs it on every message.
 */

export const TEXT_MAX = 3072
export const CARD_TITLE_MAX = 200
export const CARD_DESCRIPTION_MAX = 2000
export const CAROUSEL_CARDS_MIN = 2
export const CAROUSEL_CARDS_MAX = 10
export const MESSAGE_SUGGESTIONS_MAX = 11
export const CARD_SUGGESTIONS_MAX = 4
export const SUGGESTION_TEXT_MAX = 25
export const POSTBACK_DATA_MAX = 2048
export const SUGGESTION_URL_MAX = 2048
export const MEDIA_URL_MAX = 2000
/** RBM's "100 MB", read as decimal megabytes: the stricter reading never lets through a file upstream refuses. */
export const MEDIA_SIZE_MAX_BYTES = 100_000_000

/** What RBM accepts as card media: JPEG/PNG/GIF images; H.263 (3GP), M4V, MP4, MPEG, WebM videos. */
export const IMAGE_EXTENSIONS: ReadonlyArray<string> = ["jpg", "jpeg", "png", "gif"]
export const VIDEO_EXTENSIONS: ReadonlyArray<string> = ["mp4", "m4v", "mpeg", "mpg", "webm", "3gp"]
/** RBM delivers PDF only in India: allowed, with a warning. */
export const INDIA_ONLY_EXTENSIONS: ReadonlyArray<string> = ["pdf"]
/**
 * Extensions that name a media or document format RBM does not take. Anything else (no extension,
 * `.php`, `.aspx`…) may still serve an accepted type, so it is only a warning.
 */
export const UNSUPPORTED_EXTENSIONS: ReadonlyArray<string> = [
  "bmp", "dib", "tif", "tiff", "svg", "svgz", "webp", "heic", "heif", "avif", "ico", "jxl", "psd", "raw",
  "avi", "mov", "qt", "mkv", "wmv", "flv", "f4v", "ogv", "3g2", "m2ts", "mts", "vob",
  "mp3", "wav", "aac", "m4a", "ogg", "oga", "opus", "flac", "amr", "wma",
  "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "txt", "csv", "rtf", "zip", "rar", "7z", "gz"
]

export const IMAGE_CONTENT_TYPES: ReadonlyArray<string> = ["image/jpeg", "image/jpg", "image/pjpeg", "image/png", "image/gif"]
export const VIDEO_CONTENT_TYPES: ReadonlyArray<string> = [
  "video/mp4", "video/x-m4v", "video/m4v", "video/mpeg", "video/mpeg4", "video/webm", "video/3gpp", "video/h263"
]

export type MediaKind = "image" | "video" | "pdf" | "unsupported" | "unknown"

/** For messages: what RBM accepts as media. */
export const ACCEPTED_MEDIA = "JPEG, PNG or GIF images; MP4, M4V, MPEG, WebM or 3GP videos"

export interface ContentCheck {
  readonly errors: Array<string>
  readonly warnings: Array<string>
}

/** Every RBM limit `content` breaks (errors block; warnings inform), each named by its place. */
export const checkContent = (content: MessageContent): ContentCheck => {
  const out: ContentCheck = { errors: [], warnings: [] }
  switch (content.type) {
    case "text":
      checkText(out, "text", content.text, TEXT_MAX)
      break
    case "rich_card":
      checkCard(out, "rich_card", content.rich_card)
      break
    case "carousel":
      checkCarousel(out, content.carousel.cards)
      break
  }
  checkSuggestions(out, "suggestions", content.suggestions, MESSAGE_SUGGESTIONS_MAX, "per message")
  return out
}

/** The media URLs of a content, with the place each is named by (as `checkContent` names it). */
export const mediaOf = (content: MessageContent): Array<{ readonly path: string; readonly url: string }> => {
  const cards = content.type === "rich_card"
    ? [["rich_card", content.rich_card] as const]
    : content.type === "carousel"
    ? content.carousel.cards.map((card, i) => [`carousel.cards[${i}]`, card] as const)
    : []
  return cards.flatMap(([path, card]) => card.media ? [{ path: `${path}.media.url`, url: card.media.url }] : [])
}

/** The warning for a media URL whose type cannot be told from it (so a check that learnt the type may drop it). */
export const mediaTypeUnknownWarning = (path: string) =>
  `${path}: the media type cannot be told from the URL; it is checked only when sent`

/** The lower-cased file extension of a URL's last path segment (query and fragment aside), if any. */
export const urlExtension = (url: string): string | undefined => {
  let pathname: string
  try {
    pathname = new URL(url).pathname
  } catch {
    return undefined
  }
  const name = pathname.slice(pathname.lastIndexOf("/") + 1)
  const dot = name.lastIndexOf(".")
  return dot < 0 || dot === name.length - 1 ? undefined : name.slice(dot + 1).toLowerCase()
}

/** The media kind a URL's file extension names. */
export const mediaKindOfUrl = (url: string): MediaKind => {
  const extension = urlExtension(url)
  if (extension === undefined) return "unknown"
  if (IMAGE_EXTENSIONS.includes(extension)) return "image"
  if (VIDEO_EXTENSIONS.includes(extension)) return "video"
  if (INDIA_ONLY_EXTENSIONS.includes(extension)) return "pdf"
  if (UNSUPPORTED_EXTENSIONS.includes(extension)) return "unsupported"
  return "unknown"
}

/**
 * The media kind a Content-Type names. Absent or generic binary types tell nothing (servers such
 * as object stores answer `application/octet-stream` for files uploaded without a type).
 */
export const mediaKindOfContentType = (contentType: string | undefined): MediaKind => {
  const type = contentType?.split(";")[0]?.trim().toLowerCase() ?? ""
  if (type === "" || type === "application/octet-stream" || type === "binary/octet-stream") return "unknown"
  if (IMAGE_CONTENT_TYPES.includes(type)) return "image"
  if (VIDEO_CONTENT_TYPES.includes(type)) return "video"
  if (type === "application/pdf") return "pdf"
  return "unsupported"
}

export const PDF_WARNING = "PDF media is delivered by RBM only in India"

/** `+` then 8 to 15 digits, the first not 0 (E.164 without a full numbering-plan check). */
const E164 = /^\+[1-9]\d{7,14}$/

/**
 * Length in characters (code points, so an emoji is one). Code points never outnumber UTF-16
 * units, so strings within the limit in units need no counting.
 */
const characters = (value: string, max: number): number => (value.length <= max ? value.length : [...value].length)

const checkMax = (out: ContentCheck, path: string, value: string, max: number) => {
  const length = characters(value, max)
  if (length > max) out.errors.push(`${path}: at most ${max} characters (got ${length})`)
}

/** Required text: 1..max characters, not only spaces. */
const checkText = (out: ContentCheck, path: string, value: string, max: number) => {
  if (value.trim() === "") out.errors.push(`${path}: must not be empty`)
  else checkMax(out, path, value, max)
}

const httpUrlProblem = (value: string): string | undefined => {
  try {
    const url = new URL(value)
    return url.protocol === "http:" || url.protocol === "https:" ? undefined : "must be an http or https URL"
  } catch {
    return "must be an absolute http or https URL"
  }
}

const checkUrl = (out: ContentCheck, path: string, value: string, max: number): boolean => {
  const problem = httpUrlProblem(value)
  if (problem !== undefined) out.errors.push(`${path}: ${problem}`)
  else if (value.length > max) out.errors.push(`${path}: at most ${max} characters (got ${value.length})`)
  return problem === undefined
}

const checkMedia = (out: ContentCheck, path: string, media: Media) => {
  if (!checkUrl(out, `${path}.url`, media.url, MEDIA_URL_MAX)) return
  switch (mediaKindOfUrl(media.url)) {
    case "pdf":
      out.warnings.push(`${path}.url: ${PDF_WARNING}`)
      break
    case "unsupported":
      out.errors.push(`${path}.url: .${urlExtension(media.url)} files are not accepted (RBM takes ${ACCEPTED_MEDIA})`)
      break
    case "unknown":
      out.warnings.push(mediaTypeUnknownWarning(`${path}.url`))
      break
  }
}

const present = (value: string | undefined): boolean => value !== undefined && value.trim() !== ""

const checkCard = (out: ContentCheck, path: string, card: RichCard) => {
  if (!present(card.title) && !present(card.description) && card.media === undefined) {
    out.errors.push(`${path}: needs a title, a description or media`)
  }
  if (card.title !== undefined) checkMax(out, `${path}.title`, card.title, CARD_TITLE_MAX)
  if (card.description !== undefined) checkMax(out, `${path}.description`, card.description, CARD_DESCRIPTION_MAX)
  if (card.media !== undefined) checkMedia(out, `${path}.media`, card.media)
  checkSuggestions(out, `${path}.suggestions`, card.suggestions ?? [], CARD_SUGGESTIONS_MAX, "per card")
}

const checkCarousel = (out: ContentCheck, cards: ReadonlyArray<RichCard>) => {
  if (cards.length < CAROUSEL_CARDS_MIN || cards.length > CAROUSEL_CARDS_MAX) {
    out.errors.push(`carousel.cards: ${CAROUSEL_CARDS_MIN} to ${CAROUSEL_CARDS_MAX} cards (got ${cards.length})`)
  }
  cards.forEach((card, i) => checkCard(out, `carousel.cards[${i}]`, card))
}

const checkSuggestions = (out: ContentCheck, path: string, suggestions: ReadonlyArray<Suggestion>, max: number, per: string) => {
  if (suggestions.length > max) out.errors.push(`${path}: at most ${max} suggestions ${per} (got ${suggestions.length})`)
  suggestions.forEach((suggestion, i) => checkSuggestion(out, `${path}[${i}]`, suggestion))
}

const checkSuggestion = (out: ContentCheck, path: string, suggestion: Suggestion) => {
  checkText(out, `${path}.text`, suggestion.text, SUGGESTION_TEXT_MAX)
  if (suggestion.postback_data !== undefined) checkMax(out, `${path}.postback_data`, suggestion.postback_data, POSTBACK_DATA_MAX)
  // A field another type would use is not sent: say so rather than refuse the message.
  const ignored = (field: "url" | "phone") => {
    if (suggestion[field] !== undefined) out.warnings.push(`${path}.${field}: ignored on a ${suggestion.type} suggestion`)
  }
  switch (suggestion.type) {
    case "reply":
      ignored("url")
      ignored("phone")
      break
    case "url":
      if (suggestion.url === undefined) out.errors.push(`${path}.url: a url suggestion needs a url`)
      else checkUrl(out, `${path}.url`, suggestion.url, SUGGESTION_URL_MAX)
      ignored("phone")
      break
    case "dial":
      if (suggestion.phone === undefined) out.errors.push(`${path}.phone: a dial suggestion needs a phone number`)
      else if (!E164.test(suggestion.phone)) out.errors.push(`${path}.phone: must be an E.164 number (+ and 8 to 15 digits)`)
      ignored("url")
      break
  }
}
