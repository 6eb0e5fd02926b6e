import { describe, expect, it } from "@effect/vitest"
import { progressSizes } from "../../src/cli/client/progressText.ts"

// `herald contacts import`'s progress bar: the sizes read in a unit that fits the file (issue 34:
// a small file's bar read "0.0/0.0 MB").
describe("progressSizes", () => {
  it("a file under a kilobyte in bytes", () => {
    expect(progressSizes(0, 812)).toBe("0/812 B")
    expect(progressSizes(812, 812)).toBe("812/812 B")
  })

  it("a small file in KB, never 0.0/0.0 MB", () => {
    expect(progressSizes(0, 42_291)).toBe("0.0/41.3 KB")
    expect(progressSizes(12_288, 42_291)).toBe("12.0/41.3 KB")
    expect(progressSizes(1024, 1024)).toBe("1.0/1.0 KB")
  })

  it("megabytes and gigabytes as the size grows", () => {
    expect(progressSizes(4 * 1024 ** 2, 8.3 * 1024 ** 2)).toBe("4.0/8.3 MB")
    expect(progressSizes(1024 ** 3, 2.5 * 1024 ** 3)).toBe("1.00/2.50 GB")
  })

  it("an empty file", () => {
    expect(progressSizes(0, 0)).toBe("0/0 B")
  })
})
