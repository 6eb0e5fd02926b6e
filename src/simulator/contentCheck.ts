/**
 * The few checks the simulator makes on a send body, as RBM answers them (400 INVALID_ARGUMENT):
 * enough for the adapter's content and media mapping to be exercised end to end, not a second
 * copy of Herald's own content limits.
 */

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value)

const CONTENT_FIELDS = ["text", "richCard", "contentInfo", "uploadedRbmFile"] as const

const isFetchableUrl = (value: unknown) => {
  if (typeof value !== "string") return false
  try {
    const url = new URL(value)
    return url.protocol === "https:" || url.protocol === "http:"
  } catch {
    return false
  }
}

const cardsOf = (richCard: Record<string, unknown>): Array<unknown> => {
  if (isRecord(richCard.standaloneCard)) return [richCard.standaloneCard.cardContent]
  if (isRecord(richCard.carouselCard) && Array.isArray(richCard.carouselCard.cardContents)) return richCard.carouselCard.cardContents
  return []
}

/** The problem with an AgentMessage body, worded like RBM's messages, or undefined. */
export const contentProblem = (body: Record<string, unknown>): string | undefined => {
  const content = body.contentMessage
  if (!isRecord(content)) return "Invalid value at 'agent_message.content_message': contentMessage is required."
  const present = CONTENT_FIELDS.filter((field) => content[field] !== undefined)
  if (present.length !== 1) return "contentMessage must set exactly one of text, richCard, contentInfo or uploadedRbmFile."
  if (present[0] === "text" && (typeof content.text !== "string" || content.text === "")) return "contentMessage.text must be a non-empty string."
  if (present[0] === "contentInfo" && !isFetchableUrl((content.contentInfo as Record<string, unknown>)?.fileUrl)) {
    return "Invalid media fileUrl: the file must be reachable over HTTP(S)."
  }
  if (present[0] === "richCard") {
    if (!isRecord(content.richCard)) return "contentMessage.richCard must be an object."
    const cards = cardsOf(content.richCard)
    if (cards.length === 0) return "richCard must hold a standaloneCard or a carouselCard with cardContents."
    for (const card of cards) {
      if (!isRecord(card)) return "every cardContent must be an object."
      const media = card.media
      if (media !== undefined && !(isRecord(media) && isRecord(media.contentInfo) && isFetchableUrl(media.contentInfo.fileUrl))) {
        return "Invalid media fileUrl in cardContent.media.contentInfo: the file must be reachable over HTTP(S)."
      }
    }
  }
  return undefined
}
