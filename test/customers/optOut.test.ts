import { describe, expect, it } from "@effect/vitest"
import { checkOptKeywords, isOptedOut, keywordOf, MAX_OPT_KEYWORDS, OPT_IN_KEYWORDS, OPT_OUT_KEYWORDS, optChangeOf } from "../../src/customers/optOut.ts"

describe("opt-out keywords", () => {
  it("each of Twilio's opt-out keywords opts out; START and UNSTOP opt back in", () => {
    for (const keyword of OPT_OUT_KEYWORDS) expect(optChangeOf(keyword.toLowerCase()), keyword).toEqual({ optedOut: true, keyword })
    for (const keyword of OPT_IN_KEYWORDS) expect(optChangeOf(keyword.toLowerCase()), keyword).toEqual({ optedOut: false, keyword })
  })

  it("ignores case, spaces and punctuation around and inside the keyword", () => {
    expect(optChangeOf("  Stop!  ")).toEqual({ optedOut: true, keyword: "STOP" })
    expect(optChangeOf("stop all")).toEqual({ optedOut: true, keyword: "STOPALL" })
    expect(optChangeOf("Opt-Out.")).toEqual({ optedOut: true, keyword: "OPTOUT" })
    expect(optChangeOf("UN-subscribe")).toEqual({ optedOut: true, keyword: "UNSUBSCRIBE" })
    expect(optChangeOf("*start*")).toEqual({ optedOut: false, keyword: "START" })
    // Full-width letters are letters (NFKC).
    expect(optChangeOf("ＳＴＯＰ")).toEqual({ optedOut: true, keyword: "STOP" })
  })

  it("a keyword inside a longer message, YES, or no text at all changes nothing", () => {
    for (const text of ["please don't stop", "stop it now", "the end", "yes", "STOP 2", "", "!!!", "stopp"]) expect(optChangeOf(text), text).toBeUndefined()
    expect(optChangeOf(undefined)).toBeUndefined()
    expect(optChangeOf(null)).toBeUndefined()
    expect(optChangeOf(`STOP${" ".repeat(100)}`)).toBeUndefined()
  })

  it("reads the state from the customer's opted_out trait", () => {
    expect(isOptedOut({ opted_out: true })).toBe(true)
    expect(isOptedOut({ opted_out: false })).toBe(false)
    expect(isOptedOut({ opted_out: "true" })).toBe(false)
    expect(isOptedOut({})).toBe(false)
    expect(isOptedOut(null)).toBe(false)
    expect(keywordOf("Opt out!")).toBe("OPTOUT")
  })

  it("an account's own lists replace the defaults: its words count, STOP no longer does unless listed", () => {
    const { keywords, problems } = checkOptKeywords({ opt_out: ["Baja", "parar!", "baja"], opt_in: ["Alta"] })
    expect(problems).toEqual([])
    expect(keywords).toEqual({ optOut: ["BAJA", "PARAR"], optIn: ["ALTA"] })
    expect(optChangeOf("baja.", keywords)).toEqual({ optedOut: true, keyword: "BAJA" })
    expect(optChangeOf("ALTA", keywords)).toEqual({ optedOut: false, keyword: "ALTA" })
    expect(optChangeOf("stop", keywords)).toBeUndefined()
    expect(optChangeOf("start", keywords)).toBeUndefined()
  })

  it("refuses lists a customer could not opt out with, or that are not keywords, naming each entry", () => {
    expect(checkOptKeywords({ opt_out: [], opt_in: [] }).problems.map((p) => p.path)).toEqual(["opt_out"])
    expect(checkOptKeywords({ opt_out: ["STOP", "!!"], opt_in: ["x".repeat(33)] }).problems.map((p) => p.path)).toEqual(["opt_out[1]", "opt_in[0]"])
    expect(checkOptKeywords({ opt_out: ["stop"], opt_in: ["Stop."] }).problems).toEqual([{ path: "opt_in", message: "must not repeat an opt-out keyword (STOP)" }])
    const many = Array.from({ length: MAX_OPT_KEYWORDS + 1 }, (_, i) => `K${i}`)
    expect(checkOptKeywords({ opt_out: many, opt_in: [] }).problems.map((p) => p.path)).toEqual(["opt_out"])
  })
})
