import { Schema } from "effect"

/**
 * Message content as clients write it (DESIGN.md, "Content shapes": RBM-like, snake_case). The
 * same shapes make templates and single sends. These schemas check shape only; the RBM content
 * limits (lengths, counts, media) are checked by `contentLimits.ts`, which names every problem at
 * once instead of stopping at the first.
 */

export const SuggestionType = Schema.Literal("reply", "url", "dial")

export const Suggestion = Schema.Struct({
  type: SuggestionType,
  text: Schema.String,
  postback_data: Schema.optional(Schema.String),
  url: Schema.optional(Schema.String),
  phone: Schema.optional(Schema.String)
})
export type Suggestion = typeof Suggestion.Type

export const MediaHeight = Schema.Literal("short", "medium", "tall")

export const Media = Schema.Struct({
  url: Schema.String,
  height: Schema.optionalWith(MediaHeight, { default: () => "medium" as const })
})
export type Media = typeof Media.Type

export const RichCard = Schema.Struct({
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  media: Schema.optional(Media),
  suggestions: Schema.optional(Schema.Array(Suggestion))
})
export type RichCard = typeof RichCard.Type

export const Carousel = Schema.Struct({
  cards: Schema.Array(RichCard)
})
export type Carousel = typeof Carousel.Type

/** One message's content: exactly one of text, rich card or carousel, with message-level suggestions. */
export type MessageContent =
  | { readonly type: "text"; readonly text: string; readonly suggestions: ReadonlyArray<Suggestion> }
  | { readonly type: "rich_card"; readonly rich_card: RichCard; readonly suggestions: ReadonlyArray<Suggestion> }
  | { readonly type: "carousel"; readonly carousel: Carousel; readonly suggestions: ReadonlyArray<Suggestion> }

export const MessageContentSchema: Schema.Schema<MessageContent, any> = Schema.Union(
  Schema.Struct({ type: Schema.Literal("text"), text: Schema.String, suggestions: Schema.Array(Suggestion) }),
  Schema.Struct({ type: Schema.Literal("rich_card"), rich_card: RichCard, suggestions: Schema.Array(Suggestion) }),
  Schema.Struct({ type: Schema.Literal("carousel"), carousel: Carousel, suggestions: Schema.Array(Suggestion) })
)
