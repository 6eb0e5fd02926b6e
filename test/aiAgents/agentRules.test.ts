import { describe, expect, it } from "@effect/vitest"
import { checkAgent, decide } from "../../src/aiAgents/agentRules.ts"
import { InvalidRequest } from "../../src/domain/errors.ts"

const agent = {
  faq: [
    { question: "opening hours", answer: "9 to 6" },
    { question: "hours", answer: "see opening hours" },
    { question: "Refund  Policy", answer: "30 days" }
  ],
  handoffKeywords: ["human", "talk to someone"]
}

describe("an agent's turn", () => {
  it("answers the question a text contains, ignoring case and runs of spaces; the longest question wins", () => {
    expect(decide(agent, "What are your OPENING\n hours?")).toEqual({ _tag: "Answer", answer: "9 to 6" })
    expect(decide(agent, "hours?")).toEqual({ _tag: "Answer", answer: "see opening hours" })
    expect(decide(agent, "your refund policy please")).toEqual({ _tag: "Answer", answer: "30 days" })
  })

  it("hands off on a keyword as a whole word or phrase, before any answer", () => {
    expect(decide(agent, "opening hours? or a HUMAN")).toEqual({ _tag: "Handoff", reason: "keyword" })
    expect(decide(agent, "can I talk  to someone")).toEqual({ _tag: "Handoff", reason: "keyword" })
    // Inside another word it is not the keyword; nothing else matches either.
    expect(decide(agent, "inhumane delays")).toEqual({ _tag: "Handoff", reason: "no_match" })
  })

  it("hands off what it cannot answer, a message without text included", () => {
    expect(decide(agent, "do you ship to Goa?")).toEqual({ _tag: "Handoff", reason: "no_match" })
    expect(decide(agent, null)).toEqual({ _tag: "Handoff", reason: "no_match" })
    expect(decide({ faq: [], handoffKeywords: [] }, "hello")).toEqual({ _tag: "Handoff", reason: "no_match" })
  })
})

describe("an agent's definition", () => {
  const base = { name: "Desk", instructions: "", faq: [], handoffKeywords: [], active: true }

  it("trims, keeps what a patch leaves out, and folds repeated keywords", () => {
    expect(checkAgent({ name: " Bot ", handoff_keywords: ["human", "human"], faq: [{ question: " q ", answer: " a " }] }, base)).toEqual({
      name: "Bot",
      instructions: "",
      faq: [{ question: "q", answer: "a" }],
      handoffKeywords: ["human"],
      active: true
    })
    expect(checkAgent({ active: false }, { ...base, name: "Kept" })).toMatchObject({ name: "Kept", active: false })
  })

  it("names every problem at once", () => {
    const refused = checkAgent({ name: "", instructions: "x".repeat(4001), faq: Array.from({ length: 101 }, () => ({ question: "q", answer: "a" })), handoff_keywords: ["\u0000"] }, base)
    expect(refused).toBeInstanceOf(InvalidRequest)
    expect((refused as InvalidRequest).errors.map((e) => e.path)).toEqual(["name", "instructions", "faq", "handoff_keywords[0]"])
  })
})
