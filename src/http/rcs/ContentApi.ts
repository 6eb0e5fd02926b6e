import { Carousel, RichCard, Suggestion } from "../../domain/content.ts"
import { GatewayErrorRecord } from "../../domain/gatewayError.ts"

/**
 * Shapes declared outside src/http that several operations answer or take, named for the OpenAPI
 * document (each becomes one component; its fields are described in src/http/openApiDocument.ts,
 * COMPONENT_FIELDS, since they are declared in src/domain and src/gateway). Annotations only: they
 * decode and encode as the domain's schemas do.
 */

export const SuggestionSchema = Suggestion.annotations({
  identifier: "Suggestion",
  description: "A suggestion chip: a suggested reply, a link to open or a number to call."
})

export const RichCardSchema = RichCard.annotations({
  identifier: "RichCard",
  description: "A rich card: a title, a description or media (at least one), with up to 4 suggestions of its own."
})

export const CarouselSchema = Carousel.annotations({
  identifier: "Carousel",
  description: "A carousel: 2 to 10 rich cards side by side."
})

export const GatewayErrorRecordSchema = GatewayErrorRecord.annotations({
  identifier: "GatewayErrorRecord",
  description: "The Gateway error record (contract): why a message failed or is unconfirmed."
})

export const CONTENT_EXAMPLES = {
  suggestions: [
    { type: "reply", text: "Track order", postback_data: "track_order" },
    { type: "url", text: "Open", url: "https://acme.example.com/orders/1042" }
  ],
  rich_card: {
    title: "Your order has shipped",
    description: "Order 1042 arrives on Friday.",
    media: { url: "https://cdn.acme.example.com/box.png", height: "medium" },
    suggestions: [{ type: "url", text: "Track", url: "https://acme.example.com/t/1042" }]
  }
} as const
