import { describe, expect, it } from "@effect/vitest"
import type { MessageContent } from "../../src/domain/content.ts"
import { toContentMessage } from "../../src/gateway/rbm/content.ts"
import { rejectionRecord } from "../../src/gateway/rbm/errors.ts"

const envelope = (code: number, status: string, message: string) => JSON.stringify({ error: { code, message, status } })

describe("RBM content wire", () => {
  it("text with message-level suggestions of every kind; postbackData defaults to the text", () => {
    const content: MessageContent = {
      type: "text",
      text: "Your order shipped",
      suggestions: [
        { type: "reply", text: "Thanks", postback_data: "thanks" },
        { type: "reply", text: "Stop" },
        { type: "url", text: "Track", url: "https://example.com/t/1" },
        { type: "dial", text: "Call us", phone: "+911234567890", postback_data: "call" }
      ]
    }
    expect(toContentMessage(content)).toEqual({
      text: "Your order shipped",
      suggestions: [
        { reply: { text: "Thanks", postbackData: "thanks" } },
        { reply: { text: "Stop", postbackData: "Stop" } },
        { action: { text: "Track", postbackData: "Track", openUrlAction: { url: "https://example.com/t/1" } } },
        { action: { text: "Call us", postbackData: "call", dialAction: { phoneNumber: "+911234567890" } } }
      ]
    })
  })

  it("plain text has no suggestions field at all", () => {
    expect(toContentMessage({ type: "text", text: "hi", suggestions: [] })).toEqual({ text: "hi" })
  })

  it("a rich card is a vertical standalone card with media, card suggestions and message suggestions", () => {
    const content: MessageContent = {
      type: "rich_card",
      rich_card: {
        title: "Sale",
        description: "50% off",
        media: { url: "https://cdn.example.com/a.png", height: "tall" },
        suggestions: [{ type: "reply", text: "Show me" }]
      },
      suggestions: [{ type: "url", text: "Shop", url: "https://example.com", postback_data: "shop" }]
    }
    expect(toContentMessage(content)).toEqual({
      richCard: {
        standaloneCard: {
          cardOrientation: "VERTICAL",
          cardContent: {
            title: "Sale",
            description: "50% off",
            media: { height: "TALL", contentInfo: { fileUrl: "https://cdn.example.com/a.png", forceRefresh: false } },
            suggestions: [{ reply: { text: "Show me", postbackData: "Show me" } }]
          }
        }
      },
      suggestions: [{ action: { text: "Shop", postbackData: "shop", openUrlAction: { url: "https://example.com" } } }]
    })
  })

  it("a card without media or suggestions carries only what it has", () => {
    const content: MessageContent = { type: "rich_card", rich_card: { title: "Only a title" }, suggestions: [] }
    expect(toContentMessage(content)).toEqual({
      richCard: { standaloneCard: { cardOrientation: "VERTICAL", cardContent: { title: "Only a title" } } }
    })
  })

  it("a carousel is a medium-width carouselCard, heights mapped per card", () => {
    const content: MessageContent = {
      type: "carousel",
      carousel: {
        cards: [
          { title: "A", media: { url: "https://x.example/a.jpg", height: "short" } },
          { title: "B", media: { url: "https://x.example/b.jpg", height: "medium" }, suggestions: [{ type: "dial", text: "Call", phone: "+15550001111" }] }
        ]
      },
      suggestions: []
    }
    expect(toContentMessage(content)).toEqual({
      richCard: {
        carouselCard: {
          cardWidth: "MEDIUM",
          cardContents: [
            { title: "A", media: { height: "SHORT", contentInfo: { fileUrl: "https://x.example/a.jpg", forceRefresh: false } } },
            {
              title: "B",
              media: { height: "MEDIUM", contentInfo: { fileUrl: "https://x.example/b.jpg", forceRefresh: false } },
              suggestions: [{ action: { text: "Call", postbackData: "Call", dialAction: { phoneNumber: "+15550001111" } } }]
            }
          ]
        }
      }
    })
  })
})

describe("RBM error envelope to Gateway error record", () => {
  it("404 NOT_FOUND: recipient, not retryable, no message_id", () => {
    const r = rejectionRecord(404, envelope(404, "NOT_FOUND", "Requested entity was not found."))
    expect(r).toMatchObject({ success: false, category: "recipient", retryable: false, message: "recipient not reachable over RCS" })
    expect(r.message_id).toBeUndefined()
    expect(r.detail).toContain("Requested entity was not found.")
  })

  it("400 INVALID_ARGUMENT: content, or media when it is about the file", () => {
    const content = rejectionRecord(400, envelope(400, "INVALID_ARGUMENT", "contentMessage.text must be a non-empty string."))
    expect(content).toMatchObject({ category: "content", retryable: false })
    const media = rejectionRecord(
      400,
      envelope(400, "INVALID_ARGUMENT", "Invalid value at 'agent_message.content_message.rich_card.standalone_card.card_content.media.content_info.file_url'")
    )
    expect(media).toMatchObject({ category: "media", retryable: false, message: "media rejected by the gateway" })
    const mixed = rejectionRecord(400, envelope(400, "INVALID_ARGUMENT", "contentMessage must set exactly one of text, richCard, contentInfo or uploadedRbmFile."))
    expect(mixed.category).toBe("content")
  })

  it("403 PERMISSION_DENIED: config; 429 RESOURCE_EXHAUSTED: quota; neither retryable", () => {
    expect(rejectionRecord(403, envelope(403, "PERMISSION_DENIED", "Agent is not launched."))).toMatchObject({ category: "config", retryable: false })
    expect(rejectionRecord(429, envelope(429, "RESOURCE_EXHAUSTED", "Quota exceeded."))).toMatchObject({ category: "quota", retryable: false })
  })

  it("5xx: gateway and retryable, with or without Google's envelope", () => {
    expect(rejectionRecord(503, envelope(503, "UNAVAILABLE", "The service is currently unavailable."))).toMatchObject({ category: "gateway", retryable: true })
    expect(rejectionRecord(500, envelope(500, "INTERNAL", "Internal error."))).toMatchObject({ category: "gateway", retryable: true })
    expect(rejectionRecord(502, "<html>Bad Gateway</html>")).toMatchObject({ category: "gateway", retryable: true })
  })

  it("anything else: unknown, not retryable; upstream text kept on one bounded line", () => {
    const r = rejectionRecord(409, envelope(409, "ALREADY_EXISTS", "line one\nline two"))
    expect(r).toMatchObject({ category: "unknown", retryable: false })
    expect(r.detail).toContain("409 ALREADY_EXISTS: line one line two")
    expect(r.detail).not.toContain("\n")
    expect(rejectionRecord(418, "x".repeat(5_000)).detail.length).toBeLessThan(400)
  })
})
