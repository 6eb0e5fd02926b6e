import { describe, expect, it } from "@effect/vitest"
import { makeTimerHeap } from "../../src/actors/runtime/timerHeap.ts"

describe("timer heap", () => {
  it("pops entries in due order, whatever order they were pushed in", () => {
    const heap = makeTimerHeap()
    const times = Array.from({ length: 500 }, (_, i) => (i * 7919) % 1000)
    times.forEach((at, i) => heap.push({ at, id: `t${i}` }))
    const popped: Array<number> = []
    for (let e = heap.pop(); e !== undefined; e = heap.pop()) popped.push(e.at)
    expect(popped).toEqual([...times].sort((a, b) => a - b))
    expect(heap.size()).toBe(0)
  })

  it("peeks without removing", () => {
    const heap = makeTimerHeap()
    heap.push({ at: 5, id: "b" })
    heap.push({ at: 1, id: "a" })
    expect(heap.peek()).toEqual({ at: 1, id: "a" })
    expect(heap.size()).toBe(2)
  })
})
