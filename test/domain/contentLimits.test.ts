import { describe, expect, it } from "@effect/vitest"
import type { MessageContent, RichCard, Suggestion } from "../../src/domain/content.ts"
import {
  CARD_DESCRIPTION_MAX,
  CARD_SUGGESTIONS_MAX,
  CARD_TITLE_MAX,
  CAROUSEL_CARDS_MAX,
  CAROUSEL_CARDS_MIN,
  checkContent,
  MEDIA_URL_MAX,
  mediaKindOfContentType,
  mediaOf,
  mediaTypeUnknownWarning,
  MESSAGE_SUGGESTIONS_MAX,
  POSTBACK_DATA_MAX,
  SUGGESTION_TEXT_MAX,
  SUGGESTION_URL_MAX,
  TEXT_MAX
} from "../../src/domain/contentLimits.ts"

const text = (value: string, suggestions: ReadonlyArray<Suggestion> = []): MessageContent => ({ type: "text", text: value, suggestions })
const card = (rich_card: RichCard, suggestions: ReadonlyArray<Suggestion> = []): MessageContent => ({ type: "rich_card", rich_card, suggestions })
const carousel = (cards: ReadonlyArray<RichCard>): MessageContent => ({ type: "carousel", carousel: { cards }, suggestions: [] })
const reply = (t = "Yes", more: Partial<Suggestion> = {}): Suggestion => ({ type: "reply", text: t, ...more })
const image = (url = "https://cdn.example.com/a.png") => ({ url, height: "medium" as const })
const a = (n: number) => "a".repeat(n)

const ok = (content: MessageContent) => expect(checkContent(content)).toEqual({ errors: [], warnings: [] })
const errorsOf = (content: MessageContent) => checkContent(content).errors

describe("limits as constants", () => {
  it("match RBM's published numbers", () => {
    expect([TEXT_MAX, CARD_TITLE_MAX, CARD_DESCRIPTION_MAX, CAROUSEL_CARDS_MIN, CAROUSEL_CARDS_MAX]).toEqual([3072, 200, 2000, 2, 10])
    expect([MESSAGE_SUGGESTIONS_MAX, CARD_SUGGESTIONS_MAX, SUGGESTION_TEXT_MAX, POSTBACK_DATA_MAX, SUGGESTION_URL_MAX, MEDIA_URL_MAX]).toEqual([11, 4, 25, 2048, 2048, 2000])
  })
})

describe("text", () => {
  it("1 to 3072 characters", () => {
    ok(text("a"))
    ok(text(a(3072)))
    expect(errorsOf(text(a(3073)))).toEqual(["text: at most 3072 characters (got 3073)"])
    expect(errorsOf(text(""))).toEqual(["text: must not be empty"])
    expect(errorsOf(text("   "))).toEqual(["text: must not be empty"])
  })

  it("counts characters, not UTF-16 units: 3072 emoji fit", () => {
    ok(text("😀".repeat(3072)))
    expect(errorsOf(text("😀".repeat(3073)))).toEqual(["text: at most 3072 characters (got 3073)"])
  })
})

describe("rich card", () => {
  it("title at most 200, description at most 2000 characters", () => {
    ok(card({ title: a(200), description: a(2000) }))
    expect(errorsOf(card({ title: a(201), description: a(2001) }))).toEqual([
      "rich_card.title: at most 200 characters (got 201)",
      "rich_card.description: at most 2000 characters (got 2001)"
    ])
  })

  it("needs a title, a description or media", () => {
    ok(card({ title: "T" }))
    ok(card({ description: "D" }))
    ok(card({ media: image() }))
    expect(errorsOf(card({}))).toEqual(["rich_card: needs a title, a description or media"])
    expect(errorsOf(card({ title: " ", description: "" }))).toEqual(["rich_card: needs a title, a description or media"])
  })

  it("at most 4 suggestions on a card", () => {
    ok(card({ title: "T", suggestions: Array.from({ length: 4 }, () => reply()) }))
    expect(errorsOf(card({ title: "T", suggestions: Array.from({ length: 5 }, () => reply()) }))).toEqual([
      "rich_card.suggestions: at most 4 suggestions per card (got 5)"
    ])
  })
})

describe("carousel", () => {
  const cards = (n: number) => Array.from({ length: n }, (_, i) => ({ title: `Card ${i}` }))
  it("2 to 10 cards", () => {
    expect(errorsOf(carousel(cards(1)))).toEqual(["carousel.cards: 2 to 10 cards (got 1)"])
    ok(carousel(cards(2)))
    ok(carousel(cards(10)))
    expect(errorsOf(carousel(cards(11)))).toEqual(["carousel.cards: 2 to 10 cards (got 11)"])
  })

  it("names the card: carousel.cards[2].title", () => {
    const list: Array<RichCard> = cards(3)
    list[2] = { title: a(201), suggestions: Array.from({ length: 5 }, () => reply()) }
    expect(errorsOf(carousel(list))).toEqual([
      "carousel.cards[2].title: at most 200 characters (got 201)",
      "carousel.cards[2].suggestions: at most 4 suggestions per card (got 5)"
    ])
  })
})

describe("suggestions", () => {
  it("at most 11 per message", () => {
    ok(text("hi", Array.from({ length: 11 }, () => reply())))
    expect(errorsOf(text("hi", Array.from({ length: 12 }, () => reply())))).toEqual(["suggestions: at most 11 suggestions per message (got 12)"])
  })

  it("text 1 to 25 characters", () => {
    ok(text("hi", [reply("a"), reply(a(25))]))
    expect(errorsOf(text("hi", [reply(a(26)), reply("")]))).toEqual([
      "suggestions[0].text: at most 25 characters (got 26)",
      "suggestions[1].text: must not be empty"
    ])
  })

  it("postback_data at most 2048 characters", () => {
    ok(text("hi", [reply("a", { postback_data: a(2048) })]))
    expect(errorsOf(text("hi", [reply("a", { postback_data: a(2049) })]))).toEqual(["suggestions[0].postback_data: at most 2048 characters (got 2049)"])
  })

  it("a url suggestion needs an http(s) url of at most 2048 characters", () => {
    const base = "https://example.com/"
    ok(text("hi", [{ type: "url", text: "Open", url: base + a(2048 - base.length) }]))
    expect(errorsOf(text("hi", [
      { type: "url", text: "Open" },
      { type: "url", text: "Open", url: "ftp://example.com/file" },
      { type: "url", text: "Open", url: "not a url" },
      { type: "url", text: "Open", url: base + a(2049 - base.length) }
    ]))).toEqual([
      "suggestions[0].url: a url suggestion needs a url",
      "suggestions[1].url: must be an http or https URL",
      "suggestions[2].url: must be an absolute http or https URL",
      "suggestions[3].url: at most 2048 characters (got 2049)"
    ])
  })

  it("a dial suggestion needs an E.164 phone", () => {
    ok(text("hi", [{ type: "dial", text: "Call", phone: "+14155550123" }, { type: "dial", text: "Call", phone: "+919876543210" }]))
    expect(errorsOf(text("hi", [
      { type: "dial", text: "Call" },
      { type: "dial", text: "Call", phone: "14155550123" },
      { type: "dial", text: "Call", phone: "+0123456789" },
      { type: "dial", text: "Call", phone: "+1234567" },
      { type: "dial", text: "Call", phone: "+1234567890123456" }
    ]))).toEqual([
      "suggestions[0].phone: a dial suggestion needs a phone number",
      "suggestions[1].phone: must be an E.164 number (+ and 8 to 15 digits)",
      "suggestions[2].phone: must be an E.164 number (+ and 8 to 15 digits)",
      "suggestions[3].phone: must be an E.164 number (+ and 8 to 15 digits)",
      "suggestions[4].phone: must be an E.164 number (+ and 8 to 15 digits)"
    ])
  })

  it("a reply needs neither url nor phone; one given is ignored with a warning", () => {
    ok(text("hi", [reply("Yes", { postback_data: "yes" })]))
    expect(checkContent(text("hi", [reply("Yes", { url: "https://example.com" })]))).toEqual({
      errors: [],
      warnings: ["suggestions[0].url: ignored on a reply suggestion"]
    })
  })
})

describe("media", () => {
  const withMedia = (url: string) => card({ media: image(url) })

  it("images jpg, jpeg, png, gif and videos mp4, m4v, mpeg, mpg, webm, 3gp are accepted (any case, query ignored)", () => {
    for (const ext of ["jpg", "jpeg", "png", "gif", "mp4", "m4v", "mpeg", "mpg", "webm", "3gp", "JPG", "Mp4"]) {
      ok(withMedia(`https://cdn.example.com/media/file.${ext}?v=2#x`))
    }
  })

  it("PDF is a warning: RBM delivers it only in India", () => {
    expect(checkContent(withMedia("https://cdn.example.com/menu.pdf"))).toEqual({
      errors: [],
      warnings: ["rich_card.media.url: PDF media is delivered by RBM only in India"]
    })
  })

  it("other known formats are errors", () => {
    for (const ext of ["bmp", "tiff", "svg", "webp", "heic", "avi", "mov", "mp3", "docx"]) {
      const errors = errorsOf(withMedia(`https://cdn.example.com/file.${ext}`))
      expect(errors).toHaveLength(1)
      expect(errors[0]).toMatch(new RegExp(`^rich_card\\.media\\.url: \\.${ext} files are not accepted`))
    }
  })

  it("no recognisable extension is a warning: the type is checked only when sent", () => {
    for (const url of ["https://cdn.example.com/media/12345", "https://cdn.example.com/render.php?id=4", "https://cdn.example.com/dir.v2/file"]) {
      expect(checkContent(withMedia(url))).toEqual({ errors: [], warnings: [mediaTypeUnknownWarning("rich_card.media.url")] })
    }
  })

  it("an http(s) URL of at most 2000 characters", () => {
    const base = "https://cdn.example.com/"
    ok(withMedia(base + a(2000 - base.length - 4) + ".png"))
    expect(errorsOf(withMedia(base + a(2001 - base.length - 4) + ".png"))).toEqual(["rich_card.media.url: at most 2000 characters (got 2001)"])
    expect(errorsOf(withMedia("file:///etc/passwd.png"))).toEqual(["rich_card.media.url: must be an http or https URL"])
  })

  it("lists media with their places", () => {
    expect(mediaOf(carousel([{ title: "x" }, { media: image("https://a.example/1.png") }]))).toEqual([{ path: "carousel.cards[1].media.url", url: "https://a.example/1.png" }])
    expect(mediaOf(text("hi"))).toEqual([])
  })

  it("reads the kind a Content-Type names", () => {
    expect(mediaKindOfContentType("image/PNG; charset=binary")).toBe("image")
    expect(mediaKindOfContentType("video/mp4")).toBe("video")
    expect(mediaKindOfContentType("application/pdf")).toBe("pdf")
    expect(mediaKindOfContentType("text/html")).toBe("unsupported")
    expect(mediaKindOfContentType(undefined)).toBe("unknown")
    expect(mediaKindOfContentType("application/octet-stream")).toBe("unknown")
  })
})

describe("reporting", () => {
  it("names every problem at once, errors and warnings apart", () => {
    const result = checkContent({
      type: "carousel",
      carousel: {
        cards: [
          { title: a(201), media: image("https://cdn.example.com/a.webp") },
          { description: a(2001), media: image("https://cdn.example.com/b.pdf"), suggestions: [{ type: "dial", text: a(26), phone: "12" }] }
        ]
      },
      suggestions: Array.from({ length: 12 }, () => reply())
    })
    expect(result.errors).toEqual([
      "carousel.cards[0].title: at most 200 characters (got 201)",
      expect.stringMatching(/^carousel\.cards\[0\]\.media\.url: \.webp files are not accepted/),
      "carousel.cards[1].description: at most 2000 characters (got 2001)",
      "carousel.cards[1].suggestions[0].text: at most 25 characters (got 26)",
      "carousel.cards[1].suggestions[0].phone: must be an E.164 number (+ and 8 to 15 digits)",
      "suggestions: at most 11 suggestions per message (got 12)"
    ])
    expect(result.warnings).toEqual(["carousel.cards[1].media.url: PDF media is delivered by RBM only in India"])
  })

  it("is fast enough for every single send: a full carousel checks in well under a millisecond", () => {
    const full = carousel(Array.from({ length: 10 }, (_, i) => ({ title: a(200), description: a(2000), media: image(`https://cdn.example.com/${i}.png`), suggestions: Array.from({ length: 4 }, () => reply()) })))
    const started = performance.now()
    for (let i = 0; i < 1000; i++) checkContent(full)
    expect((performance.now() - started) / 1000).toBeLessThan(1)
  })
})
