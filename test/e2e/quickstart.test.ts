import { describe, expect, it } from "@effect/vitest"
import { useDocPage } from "../support/docPage.ts"

// docs/quickstart.md run as written (test/support/docPage.ts): every ```sh block of the page, in
// order, in one bash, against a node started as its first (```console) block says.

const page = useDocPage("quickstart.md")

describe("docs/quickstart.md", () => {
  it("runs as written: a delivered message, a verified webhook, a finished broadcast, an API key's reads", async () => {
    const result = await page.run()
    const lines = result.lines
    // The expected answers the page shows in its comments, in order.
    expect(lines).toContain("read") // the single send, read on the simulator's phone
    expect(lines.at(-2)).toMatch(/^(sent|delivered|read)$/) // a broadcast target, read with the API key
    expect(lines.filter((l) => l === "2")).toHaveLength(2) // contacts added, broadcast sent_count
    expect(lines).toContain("missing_scope")
    const history = JSON.parse(lines.find((l) => l.startsWith("[{"))!) as Array<{ status: string }>
    expect(history.map((h) => h.status)).toEqual(["queued", "sent", "delivered", "read"])
    expect(lines.filter((l) => l === "1")).toHaveLength(2) // one message.delivered, one broadcast.completed

    expect(result.events).not.toContain("REFUSED")
    expect(result.events).toMatch(/^verified message\.sent /m)
    expect(result.events).toMatch(/^verified broadcast\.completed /m)
  }, 180_000)
})
