import type { MessageContent, RichCard, Suggestion } from "../../domain/content.ts"

/**
 * Herald's content shapes (snake_case, DESIGN.md "Content shapes") as RBM's `contentMessage`
 * (Google's AgentContentMessage). Pure: the limits were checked when the content was accepted
 * (src/domain/contentLimits.ts), so nothing here rejects; a field that is still missing goes up
 * empty and RBM's own INVALID_ARGUMENT answer names it.
 */

export type RbmSuggestion =
  | { readonly reply: { readonly text: string; readonly postbackData: string } }
  | {
    readonly action: {
      readonly text: string
      readonly postbackData: string
      readonly openUrlAction?: { readonly url: string }
      readonly dialAction?: { readonly phoneNumber: string }
    }
  }

export type RbmMediaHeight = "SHORT" | "MEDIUM" | "TALL"

export interface RbmCardContent {
  readonly title?: string
  readonly description?: string
  readonly media?: {
    readonly height: RbmMediaHeight
    readonly contentInfo: { readonly fileUrl: string; readonly forceRefresh: boolean }
  }
  readonly suggestions?: ReadonlyArray<RbmSuggestion>
}

export type RbmContentMessage =
  & (
    | { readonly text: string }
    | { readonly richCard: { readonly standaloneCard: { readonly cardOrientation: "VERTICAL"; readonly cardContent: RbmCardContent } } }
    | { readonly richCard: { readonly carouselCard: { readonly cardWidth: "MEDIUM"; readonly cardContents: ReadonlyArray<RbmCardContent> } } }
  )
  & { readonly suggestions?: ReadonlyArray<RbmSuggestion> }

/** RBM echoes postbackData when the user taps; without one, the text itself identifies the choice. */
export const toRbmSuggestion = (suggestion: Suggestion): RbmSuggestion => {
  const postbackData = suggestion.postback_data ?? suggestion.text
  switch (suggestion.type) {
    case "reply":
      return { reply: { text: suggestion.text, postbackData } }
    case "url":
      return { action: { text: suggestion.text, postbackData, openUrlAction: { url: suggestion.url ?? "" } } }
    case "dial":
      return { action: { text: suggestion.text, postbackData, dialAction: { phoneNumber: suggestion.phone ?? "" } } }
  }
}

const HEIGHTS = { short: "SHORT", medium: "MEDIUM", tall: "TALL" } as const

const suggestionsField = (suggestions: ReadonlyArray<Suggestion> | undefined) =>
  suggestions !== undefined && suggestions.length > 0 ? { suggestions: suggestions.map(toRbmSuggestion) } : {}

export const toRbmCardContent = (card: RichCard): RbmCardContent => ({
  ...(card.title !== undefined ? { title: card.title } : {}),
  ...(card.description !== undefined ? { description: card.description } : {}),
  ...(card.media !== undefined
    ? {
      media: {
        height: HEIGHTS[card.media.height] ?? "MEDIUM",
        // forceRefresh false lets RBM serve a file it already fetched for an earlier send.
        contentInfo: { fileUrl: card.media.url, forceRefresh: false }
      }
    }
    : {}),
  ...suggestionsField(card.suggestions)
})

export const toContentMessage = (content: MessageContent): RbmContentMessage => {
  const messageSuggestions = suggestionsField(content.suggestions)
  switch (content.type) {
    case "text":
      return { text: content.text, ...messageSuggestions }
    case "rich_card":
      return {
        richCard: { standaloneCard: { cardOrientation: "VERTICAL", cardContent: toRbmCardContent(content.rich_card) } },
        ...messageSuggestions
      }
    case "carousel":
      return {
        richCard: { carouselCard: { cardWidth: "MEDIUM", cardContents: content.carousel.cards.map(toRbmCardContent) } },
        ...messageSuggestions
      }
  }
}
