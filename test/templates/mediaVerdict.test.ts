import { describe, expect, it } from "@effect/vitest"
import { judgeMedia } from "../../src/templates/mediaVerdict.ts"

const path = "rich_card.media.url"
const answered = (contentType: string | undefined, contentLength: number | undefined) => ({ _tag: "Answered" as const, contentType, contentLength })

describe("media verdict", () => {
  it("over 100 MB is an error; exactly 100 MB is not", () => {
    expect(judgeMedia(path, "https://a.example/v.mp4", answered("video/mp4", 100_000_000))).toEqual({ errors: [], warnings: [], typeKnown: true })
    expect(judgeMedia(path, "https://a.example/v.mp4", answered("video/mp4", 100_000_001)).errors).toEqual([
      "rich_card.media.url: media is 100000001 bytes, at most 100000000 (100 MB)"
    ])
  })

  it("a type RBM does not take is an error, said once when the extension said it already", () => {
    expect(judgeMedia(path, "https://a.example/x.png", answered("text/html; charset=utf-8", 10)).errors).toEqual([
      expect.stringMatching(/^rich_card\.media\.url: served as text\/html; charset=utf-8, which RBM does not accept/)
    ])
    expect(judgeMedia(path, "https://a.example/x.webp", answered("image/webp", 10)).errors).toEqual([])
  })

  it("no type, or a generic binary one, tells nothing", () => {
    expect(judgeMedia(path, "https://a.example/x", answered(undefined, 10))).toEqual({ errors: [], warnings: [], typeKnown: false })
    expect(judgeMedia(path, "https://a.example/x", answered("application/octet-stream", undefined))).toEqual({ errors: [], warnings: [], typeKnown: false })
  })

  it("PDF served under another extension warns once", () => {
    expect(judgeMedia(path, "https://a.example/menu", answered("application/pdf", 10)).warnings).toEqual(["rich_card.media.url: PDF media is delivered by RBM only in India"])
    expect(judgeMedia(path, "https://a.example/menu.pdf", answered("application/pdf", 10)).warnings).toEqual([])
  })

  it("no answer is a warning, a refused target an error", () => {
    expect(judgeMedia(path, "https://a.example/x.png", { _tag: "Unchecked", reason: "HTTP 404" })).toEqual({
      errors: [],
      warnings: ["rich_card.media.url: media could not be checked: HTTP 404"],
      typeKnown: false
    })
    expect(judgeMedia(path, "http://10.0.0.1/x.png", { _tag: "Refused", reason: "must not target a private or loopback address" }).errors).toEqual([
      "rich_card.media.url: must not target a private or loopback address"
    ])
  })
})
