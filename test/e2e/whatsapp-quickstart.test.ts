import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { ROOT, shellBlocks, useDocPage } from "../support/docPage.ts"
import { eventually, useDb } from "../support/e2e.ts"
import { callJson, cliFor, ownerSession } from "../support/http.ts"

// The WhatsApp docs run as written. docs/whatsapp-quickstart.md: every ```sh block of the page, in
// order, in one bash (test/support/docPage.ts), against a node started as its ```console block says.
// docs/whatsapp.md, a reference rather than a script: every JSON body its curl examples send to the
// public API and the simulator, sent in the page's order, is accepted — the window is opened before
// the first free-form send, and the template send fits the template the page creates.

const page = useDocPage("whatsapp-quickstart.md")
const db = useDb(page.iso)

describe("docs/whatsapp-quickstart.md", () => {
  it("runs as written: an approved template delivered, a text refused outside the window, then sent and read once the customer wrote in", async () => {
    const result = await page.run()
    // The expected answers the page shows in its comments, in order (after the admin commands' JSON).
    expect(result.lines.slice(-7), result.stdout).toEqual([
      "APPROVED",
      "order-A-1234", // the template's message.delivered, with its callbackData
      "outside_service_window",
      expect.stringMatching(/^wamid\./), // the customer's message, on the simulator
      "read", // the reply's message.read
      "read", // the reply read back by its id (GET /api/v1/public/message/{id})
      "99.88" // 100 less the UTILITY template's 0.12; the reply was free
    ])

    expect(result.events).not.toContain("REFUSED")
    for (const type of ["message.sent", "message.delivered", "message.read", "message.received"]) expect(result.events).toMatch(new RegExp(`^verified ${type.replace(".", "\\.")} `, "m"))
  }, 180_000)
})

interface PageRequest {
  readonly path: string
  readonly body: Record<string, any>
}

/** The page's curl examples that send a JSON body, in the page's order: the path each goes to and the body. */
const pageRequests = (markdown: string): Array<PageRequest> =>
  shellBlocks(markdown).flatMap((block) =>
    block.split(/(?=\bcurl )/).flatMap((command) => {
      const m = /^curl [^\n]*?(?:https?:\/\/[^/\s]+|…)(\/[^\s?']+)[\s\S]*?-d '([^']*)'/.exec(command)
      return m ? [{ path: m[1]!, body: JSON.parse(m[2]!) as Record<string, any> }] : []
    })
  )

describe("docs/whatsapp.md", () => {
  it("its examples work in the page's order: the window opened before the first free-form send, the template send fitting the page's template", async () => {
    const requests = pageRequests(readFileSync(join(ROOT, "docs", "whatsapp.md"), "utf8"))
    const sends = requests.filter((r) => r.path === "/api/v1/public/message")
    const templates = requests.filter((r) => r.path === "/api/v1/public/templates")
    expect(sends.map((s) => s.body.type)).toEqual(["Text", "Image", "Document", "InteractiveButton", "InteractiveList", "Template"])
    expect(templates).toHaveLength(1)
    const firstInbound = requests.findIndex((r) => r.path === "/simulate/wa/inbound")
    const firstFreeForm = requests.findIndex((r) => r.path === "/api/v1/public/message" && r.body.type !== "Template")
    expect(firstInbound, "the page opens the customer's window before its first free-form send").toBeGreaterThanOrEqual(0)
    expect(firstInbound).toBeLessThan(firstFreeForm)

    const base = page.node().url
    const cli = cliFor(page.env())
    await cli("admin", "create-account", "--email", "reference@wa.io", "--password", "reference password", "--label", "Reference", "--plan", "growth")
    await cli("admin", "wallet-credit", "reference@wa.io", "100")
    const number = (await cli("admin", "create-wa-number", "reference@wa.io", "--phone", "+919800000002")).phone_number_id as string
    const { key } = await ownerSession(base, "reference@wa.io", "reference password")
    const pub = (path: string, body?: unknown) => callJson(base, body === undefined ? "GET" : "POST", path, `Basic ${key}`, body)

    // The template the page creates, approved (the simulator reviews it after a second).
    const created = await pub("/api/v1/public/templates", templates[0]!.body)
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    await eventually(async () => expect((await pub(`/api/v1/public/templates/${created.body.template.id}`)).body.template.status).toBe("APPROVED"))

    // Then the page's calls in its order: the customer writes in (to this test's number), the sends.
    for (const request of requests) {
      if (request.path === "/simulate/wa/inbound") {
        const r = await fetch(`${page.simUrl()}${request.path}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ ...request.body, phone_number_id: number })
        })
        expect(r.status).toBe(202)
        // Herald opens its window once the simulator's webhook reached it.
        await eventually(async () =>
          expect(await db("SELECT 1 FROM conversations WHERE phone_number_id = $1 AND customer_phone = $2 AND last_inbound_at IS NOT NULL", [number, `+${request.body.from}`])).toHaveLength(1)
        )
      } else if (request.path === "/api/v1/public/message") {
        const r = await pub(request.path, request.body)
        expect(r.status, `${request.body.type}: ${JSON.stringify(r.body)}`).toBe(202)
      }
    }
  }, 180_000)
})
