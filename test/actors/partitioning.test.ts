import { describe, expect, it } from "@effect/vitest"
import { assignedTo, fnv1a32, isValidKey, ownerOf, partitionOf } from "../../src/actors/runtime/partitioning.ts"

describe("partitioning", () => {
  it("is FNV-1a 32 (reference vectors)", () => {
    expect(fnv1a32("")).toBe(0x811c9dc5)
    expect(fnv1a32("a")).toBe(0xe40c292c)
    expect(fnv1a32("foobar")).toBe(0xbf9cf968)
  })

  it("maps a key to the same partition every time", () => {
    expect(partitionOf("bot-42", 32)).toBe(partitionOf("bot-42", 32))
    expect(partitionOf("foobar", 32)).toBe(0xbf9cf968 % 32)
  })

  it("spreads partitions fairly over nodes", () => {
    const nodes = Array.from({ length: 4 }, (_, i) => `node-${i}`)
    const counts = nodes.map((n) => assignedTo(n, nodes, "sender", 256).length)
    expect(counts.reduce((a, b) => a + b, 0)).toBe(256)
    for (const c of counts) expect(c).toBeGreaterThan(40)
  })

  it("moves only the partitions a joining node wins, and only a leaving node's partitions", () => {
    const three = ["a", "b", "c"]
    const four = [...three, "d"]
    for (let p = 0; p < 128; p++) {
      const before = ownerOf(three, "k", p)
      const after = ownerOf(four, "k", p)
      if (after !== "d") expect(after).toBe(before)
      const withoutB = ownerOf(["a", "c"], "k", p)
      if (before !== "b") expect(withoutB).toBe(before)
    }
    expect(ownerOf([], "k", 0)).toBeUndefined()
  })

  it("accepts only keys that are one subject token", () => {
    expect(isValidKey("wd_0b1c")).toBe(true)
    expect(isValidKey("a.b")).toBe(false)
    expect(isValidKey("a b")).toBe(false)
    expect(isValidKey("*")).toBe(false)
    expect(isValidKey("")).toBe(false)
  })
})
