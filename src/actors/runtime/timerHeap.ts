/**
 * A binary min-heap of (due time, timer id): the one place a partition looks for its next timer.
 * Removal is lazy: a cancelled or rescheduled timer stays in the heap and is skipped when it
 * surfaces (the caller checks its id against the live timers).
 */
export interface HeapEntry {
  readonly at: number
  readonly id: string
}

export const makeTimerHeap = () => {
  const items: Array<HeapEntry> = []
  const swap = (i: number, j: number) => {
    const t = items[i]!
    items[i] = items[j]!
    items[j] = t
  }
  const up = (i: number) => {
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (items[parent]!.at <= items[i]!.at) return
      swap(i, parent)
      i = parent
    }
  }
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let smallest = i
      if (l < items.length && items[l]!.at < items[smallest]!.at) smallest = l
      if (r < items.length && items[r]!.at < items[smallest]!.at) smallest = r
      if (smallest === i) return
      swap(i, smallest)
      i = smallest
    }
  }
  return {
    push: (entry: HeapEntry) => {
      items.push(entry)
      up(items.length - 1)
    },
    peek: (): HeapEntry | undefined => items[0],
    pop: (): HeapEntry | undefined => {
      const top = items[0]
      const last = items.pop()
      if (items.length > 0 && last !== undefined) {
        items[0] = last
        down(0)
      }
      return top
    },
    size: () => items.length
  }
}
