import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import http from "node:http"
import { useDb, useIsolation } from "../support/e2e.ts"
import { type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"
import { freePort } from "../support/TcpProxy.ts"

// Templates end to end: creation checked against the RCS limits and a HEAD of the media, the
// active-bot rule, roles, bot scope, API keys, cursor pages and soft deletion.

const iso = useIsolation()
const db = useDb(iso)
const env = envFor(iso)
const cli = cliFor(env)
let node: HeraldProcess
let media: Awaited<ReturnType<typeof startMediaHost>>
const tokens: Record<string, string> = {}
const keys: Record<string, string> = {}
const bots = { one: "", two: "", paged: "", pending: "", otherAccount: "" }

const call = (method: string, path: string, token?: string, body?: unknown) => callJson(node.url, method, path, token, body)

/**
 * A local media host answering HEAD by path: /big.mp4 is 101 MB, /page.png is HTML, /missing.png
 * 404, /hang never answers, /moved.png redirects to /small.png; others are small files typed by
 * their extension (image/png, application/pdf, image/jpeg without an extension).
 */
const startMediaHost = async () => {
  const heads: Array<string> = []
  const server = http.createServer((req, res) => {
    const path = req.url ?? "/"
    heads.push(`${req.method} ${path}`)
    if (path.startsWith("/hang")) return
    if (path === "/big.mp4") return res.writeHead(200, { "content-type": "video/mp4", "content-length": String(101 * 1024 * 1024) }).end()
    if (path === "/page.png") return res.writeHead(200, { "content-type": "text/html" }).end()
    if (path === "/missing.png") return res.writeHead(404).end()
    if (path === "/moved.png") return res.writeHead(302, { location: "/small.png" }).end()
    const type = path.endsWith(".png") ? "image/png" : path.endsWith(".pdf") ? "application/pdf" : "image/jpeg"
    res.writeHead(200, { "content-type": type, "content-length": "2048" }).end()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    heads,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

let names = 0
const uniqueName = (prefix = "t") => `${prefix}-${++names}`

const textTemplate = (botId: string, overrides: Record<string, unknown> = {}) => ({
  bot_id: botId,
  name: uniqueName(),
  type: "text",
  text: "Your order has shipped.",
  suggestions: [{ type: "url", text: "Track", url: "https://example.com/track" }],
  ...overrides
})

const cardTemplate = (botId: string, mediaUrl: string) => ({
  bot_id: botId,
  name: uniqueName("card"),
  type: "rich_card",
  rich_card: { title: "New arrivals", media: { url: mediaUrl, height: "tall" } }
})

const templateCount = async () => (await db<{ n: number }>("SELECT count(*)::int AS n FROM templates"))[0]!.n

beforeAll(async () => {
  media = await startMediaHost()
  node = await startHerald(env)
  const account = (await cli("admin", "create-account", "--email", "tpl@example.com", "--password", "tpl password", "--label", "Tpl", "--plan", "growth")).account_id
  const other = (await cli("admin", "create-account", "--email", "tpl-other@example.com", "--password", "other password", "--label", "Other")).account_id
  bots.one = (await cli("admin", "create-bot", account, "--name", "One", "--status", "active")).bot_id
  bots.two = (await cli("admin", "create-bot", account, "--name", "Two", "--status", "active")).bot_id
  bots.paged = (await cli("admin", "create-bot", account, "--name", "Paged", "--status", "active")).bot_id
  bots.pending = (await cli("admin", "create-bot", account, "--name", "Pending")).bot_id
  bots.otherAccount = (await cli("admin", "create-bot", other, "--name", "Theirs", "--status", "active")).bot_id
  const login = async (email: string, password: string) => (await call("POST", "/api/v1/rcs/auth/login", undefined, { email, password })).body.token as string
  tokens.owner = await login("tpl@example.com", "tpl password")
  for (const [name, role, scope] of [["viewer", "viewer", ["*"]], ["operator", "operator", ["*"]], ["scoped", "operator", [bots.two]]] as const) {
    const added = await call("POST", "/api/v1/rcs/team", tokens.owner, { email: `${name}@tpl.example.com`, role, assigned_bots: scope, password: "member password" })
    expect(added.status).toBe(200)
    tokens[name] = await login(`${name}@tpl.example.com`, "member password")
  }
  for (const [name, scopes] of [["read", ["templates:read"]], ["write", ["templates:write"]], ["none", ["webhooks:read", "broadcasts:write"]]] as const) {
    keys[name] = (await call("POST", "/api/v1/rcs/api-keys", tokens.owner, { name, scopes })).body.raw_key
  }
}, 300_000)
afterAll(async () => {
  await node?.kill()
  await media?.close()
})

describe("creating templates", () => {
  it("creates each type, approved at once, and reads it back with its content", async () => {
    const bodies = [
      textTemplate(bots.one),
      { ...cardTemplate(bots.one, media.url("/small.png")), suggestions: [{ type: "dial", text: "Call us", phone: "+919876543210" }] },
      {
        bot_id: bots.one,
        name: uniqueName("carousel"),
        type: "carousel",
        carousel: {
          cards: [
            { title: "Shoes", description: "From 999", media: { url: media.url("/shoes.png"), height: "short" }, suggestions: [{ type: "reply", text: "Buy", postback_data: "buy:shoes" }] },
            { title: "Bags", description: "From 1499" }
          ]
        }
      }
    ]
    for (const body of bodies) {
      const created = await call("POST", "/api/v1/rcs/templates", tokens.operator, body)
      expect(created.status, JSON.stringify(created.body)).toBe(200)
      expect(created.body).toEqual({
        success: true,
        template_id: expect.any(String),
        name: body.name,
        bot_id: bots.one,
        type: body.type,
        status: "approved",
        warnings: [],
        template: expect.any(Object)
      })
      const read = await call("GET", `/api/v1/rcs/templates/${created.body.template_id}`, tokens.viewer)
      expect(read.status).toBe(200)
      // Creation answers the template as a read does.
      expect(created.body.template).toEqual(read.body.template)
      expect(read.body.template).toMatchObject({ template_id: created.body.template_id, bot_id: bots.one, name: body.name, type: body.type, status: "approved" })
      expect(read.body.template.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T.*Z$/)
      const field = body.type as "text" | "rich_card" | "carousel"
      expect(read.body.template[field]).toMatchObject((body as any)[field])
      for (const absent of ["text", "rich_card", "carousel"].filter((f) => f !== field)) expect(read.body.template).not.toHaveProperty(absent)
    }
    // Media height defaults to medium.
    const card = await call("POST", "/api/v1/rcs/templates", tokens.owner, { ...cardTemplate(bots.one, media.url("/small.png")), rich_card: { description: "x", media: { url: media.url("/small.png") } } })
    expect((await call("GET", `/api/v1/rcs/templates/${card.body.template_id}`, tokens.owner)).body.template.rich_card.media).toEqual({ url: media.url("/small.png"), height: "medium" })
  })

  it("a body breaking the limits gets 400 template_invalid with every error and warning, and nothing is written", async () => {
    const before = await templateCount()
    const listed = (await call("GET", "/api/v1/rcs/templates?limit=1000", tokens.owner)).body.templates
    const r = await call("POST", "/api/v1/rcs/templates", tokens.owner, {
      bot_id: bots.one,
      name: uniqueName("bad"),
      type: "carousel",
      carousel: {
        cards: [
          { title: "x".repeat(201), media: { url: media.url("/menu.pdf") } },
          { description: "ok", suggestions: [{ type: "url", text: "a".repeat(26) }] }
        ]
      },
      suggestions: Array.from({ length: 12 }, (_, i) => ({ type: "reply", text: `R${i}` }))
    })
    expect(r.status).toBe(400)
    expect(r.body).toEqual({
      success: false,
      code: "template_invalid",
      message: expect.stringContaining("carousel.cards[0].title: at most 200 characters (got 201)"),
      errors: [
        "carousel.cards[0].title: at most 200 characters (got 201)",
        "carousel.cards[1].suggestions[0].text: at most 25 characters (got 26)",
        "carousel.cards[1].suggestions[0].url: a url suggestion needs a url",
        "suggestions: at most 11 suggestions per message (got 12)"
      ],
      warnings: ["carousel.cards[0].media.url: PDF media is delivered by RBM only in India"],
      // The same errors in the {path, message} shape of every other validation error.
      issues: [
        { path: "carousel.cards[0].title", message: "at most 200 characters (got 201)" },
        { path: "carousel.cards[1].suggestions[0].text", message: "at most 25 characters (got 26)" },
        { path: "carousel.cards[1].suggestions[0].url", message: "a url suggestion needs a url" },
        { path: "suggestions", message: "at most 11 suggestions per message (got 12)" }
      ]
    })
    expect(await templateCount()).toBe(before)
    expect((await call("GET", "/api/v1/rcs/templates?limit=1000", tokens.owner)).body.templates).toEqual(listed)
  })

  it("warnings alone do not block: a PDF card is created with its warning", async () => {
    const r = await call("POST", "/api/v1/rcs/templates", tokens.owner, cardTemplate(bots.one, media.url("/menu.pdf")))
    expect(r.status).toBe(200)
    expect(r.body.warnings).toEqual(["rich_card.media.url: PDF media is delivered by RBM only in India"])
    expect((await call("GET", `/api/v1/rcs/templates/${r.body.template_id}`, tokens.owner)).body.template.warnings).toEqual(r.body.warnings)
  })

  it("the content field must match the type: invalid_request naming each field", async () => {
    const r = await call("POST", "/api/v1/rcs/templates", tokens.owner, { bot_id: bots.one, name: uniqueName(), type: "text", rich_card: { title: "T" } })
    expect(r.status).toBe(400)
    expect(r.body.code).toBe("invalid_request")
    expect(r.body.errors).toEqual([{ path: "text", message: "is required when type is text" }, { path: "rich_card", message: "must be absent when type is text" }])
    const shape = await call("POST", "/api/v1/rcs/templates", tokens.owner, { bot_id: bots.one, name: "", type: "video", text: "x" })
    expect(shape.status).toBe(400)
    expect(shape.body.code).toBe("invalid_request")
  })

  it("needs an active bot of the account: a pending bot or another account's gets 403 no_active_bot", async () => {
    const before = await templateCount()
    for (const botId of [bots.pending, bots.otherAccount, "5b0e7a8c-8f1e-4a53-9f6a-1f2d3c4b5a69"]) {
      const r = await call("POST", "/api/v1/rcs/templates", tokens.owner, textTemplate(botId))
      expect(r.status).toBe(403)
      expect(r.body).toEqual({ success: false, code: "no_active_bot", message: "template creation needs an active bot of this account" })
    }
    expect(await templateCount()).toBe(before)
    // Once the platform activates it, it may.
    await cli("admin", "bot-status", bots.pending, "active")
    expect((await call("POST", "/api/v1/rcs/templates", tokens.owner, textTemplate(bots.pending))).status).toBe(200)
  })

  it("a name is unique per bot among live templates: 409 with key name", async () => {
    const name = uniqueName("dup")
    const first = await call("POST", "/api/v1/rcs/templates", tokens.owner, textTemplate(bots.one, { name }))
    expect(first.status).toBe(200)
    const again = await call("POST", "/api/v1/rcs/templates", tokens.owner, textTemplate(bots.one, { name }))
    expect(again.status).toBe(409)
    expect(again.body).toMatchObject({ success: false, code: "conflict", key: "name" })
    expect((await call("POST", "/api/v1/rcs/templates", tokens.owner, textTemplate(bots.two, { name }))).status).toBe(200)
    expect((await call("DELETE", `/api/v1/rcs/templates/${first.body.template_id}`, tokens.owner)).status).toBe(200)
    expect((await call("POST", "/api/v1/rcs/templates", tokens.owner, textTemplate(bots.one, { name }))).status).toBe(200)
  })

  it("a viewer cannot create or delete", async () => {
    const r = await call("POST", "/api/v1/rcs/templates", tokens.viewer, textTemplate(bots.one))
    expect(r.status).toBe(403)
    expect(r.body.code).toBe("forbidden")
    const created = await call("POST", "/api/v1/rcs/templates", tokens.owner, textTemplate(bots.one))
    expect((await call("DELETE", `/api/v1/rcs/templates/${created.body.template_id}`, tokens.viewer)).body.code).toBe("forbidden")
  })
})

describe("media check (HEAD of the media URL)", () => {
  const create = (path: string) => call("POST", "/api/v1/rcs/templates", tokens.owner, cardTemplate(bots.one, path.startsWith("http") ? path : media.url(path)))

  it("over 100 MB is an error", async () => {
    const r = await create("/big.mp4")
    expect(r.status).toBe(400)
    expect(r.body.code).toBe("template_invalid")
    expect(r.body.errors).toEqual([`rich_card.media.url: media is ${101 * 1024 * 1024} bytes, at most 100000000 (100 MB)`])
    expect(media.heads).toContain("HEAD /big.mp4")
  })

  it("a type RBM does not take is an error", async () => {
    const r = await create("/page.png")
    expect(r.status).toBe(400)
    expect(r.body.errors).toEqual([expect.stringMatching(/^rich_card\.media\.url: served as text\/html, which RBM does not accept/)])
  })

  it("a small image/png passes; a URL without an extension passes once the answer names an image; redirects are followed", async () => {
    expect((await create("/small.png")).body).toMatchObject({ success: true, warnings: [] })
    expect((await create("/images/12345")).body).toMatchObject({ success: true, warnings: [] })
    expect((await create("/moved.png")).body).toMatchObject({ success: true, warnings: [] })
  })

  it("no answer, a refused connection or a non-2xx answer is only a warning", async () => {
    const closed = `http://127.0.0.1:${await freePort()}/a.png`
    const refused = await create(closed)
    expect(refused.status).toBe(200)
    expect(refused.body.warnings).toEqual(["rich_card.media.url: media could not be checked: connection refused"])
    const missing = await create("/missing.png")
    expect(missing.body.warnings).toEqual(["rich_card.media.url: media could not be checked: HTTP 404"])
    const started = Date.now()
    const hanging = await create("/hang.png")
    expect(hanging.status).toBe(200)
    expect(hanging.body.warnings).toEqual(["rich_card.media.url: media could not be checked: no answer within 3s"])
    expect(Date.now() - started).toBeLessThan(6_000)
  })
})

describe("bot scope", () => {
  it("a member scoped to bots creates, reads and deletes only its bots' templates, and lists only them", async () => {
    const outside = await call("POST", "/api/v1/rcs/templates", tokens.scoped, textTemplate(bots.one))
    expect(outside.status).toBe(403)
    expect(outside.body).toMatchObject({ code: "bot_not_in_scope", message: "bot not in scope" })
    const own = await call("POST", "/api/v1/rcs/templates", tokens.scoped, textTemplate(bots.two))
    expect(own.status).toBe(200)
    const onOne = await call("POST", "/api/v1/rcs/templates", tokens.owner, textTemplate(bots.one))
    const listed = (await call("GET", "/api/v1/rcs/templates?limit=1000", tokens.scoped)).body.templates
    expect(listed.map((t: any) => t.template_id)).toContain(own.body.template_id)
    expect(listed.every((t: any) => t.bot_id === bots.two)).toBe(true)
    expect((await call("GET", `/api/v1/rcs/templates?bot_id=${bots.one}`, tokens.scoped)).body.code).toBe("bot_not_in_scope")
    expect((await call("GET", `/api/v1/rcs/templates/${onOne.body.template_id}`, tokens.scoped)).body.code).toBe("bot_not_in_scope")
    expect((await call("DELETE", `/api/v1/rcs/templates/${onOne.body.template_id}`, tokens.scoped)).body.code).toBe("bot_not_in_scope")
    expect((await call("DELETE", `/api/v1/rcs/templates/${own.body.template_id}`, tokens.scoped)).status).toBe(200)
  })
})

describe("API keys", () => {
  it("list with templates:read, or templates:write which grants it; without either missing_scope", async () => {
    for (const key of [keys.read, keys.write]) {
      const r = await call("GET", "/api/v1/rcs/templates", key)
      expect(r.status).toBe(200)
      expect(r.body.templates.length).toBeGreaterThan(0)
    }
    const r = await call("GET", "/api/v1/rcs/templates", keys.none)
    expect(r.status).toBe(403)
    expect(r.body.code).toBe("missing_scope")
    expect(r.body.message).toContain("templates:read")
  })

  it("cannot create or delete, whatever the scope: api_key_endpoint_not_allowed", async () => {
    const created = await call("POST", "/api/v1/rcs/templates", tokens.owner, textTemplate(bots.one))
    for (const key of [keys.read, keys.write]) {
      expect((await call("POST", "/api/v1/rcs/templates", key, textTemplate(bots.one))).body.code).toBe("api_key_endpoint_not_allowed")
      expect((await call("DELETE", `/api/v1/rcs/templates/${created.body.template_id}`, key)).body.code).toBe("api_key_endpoint_not_allowed")
    }
    expect((await call("GET", `/api/v1/rcs/templates/${created.body.template_id}`, tokens.owner)).status).toBe(200)
  })
})

describe("listing", () => {
  it("pages newest first by an opaque cursor; re-reading a cursor gives the same rows; the last page has no next_cursor", async () => {
    const ids: Array<string> = []
    for (let i = 0; i < 5; i++) ids.push((await call("POST", "/api/v1/rcs/templates", tokens.owner, textTemplate(bots.paged))).body.template_id)
    const newestFirst = [...ids].reverse()
    const pages: Array<Array<string>> = []
    const cursors: Array<string> = []
    let cursor: string | undefined
    do {
      const r = await call("GET", `/api/v1/rcs/templates?bot_id=${bots.paged}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, tokens.viewer)
      expect(r.status).toBe(200)
      expect(r.body.count).toBe(r.body.templates.length)
      pages.push(r.body.templates.map((t: any) => t.template_id))
      cursor = r.body.next_cursor
      if (cursor) cursors.push(cursor)
    } while (cursor)
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1])
    expect(pages.flat()).toEqual(newestFirst)
    const again = await call("GET", `/api/v1/rcs/templates?bot_id=${bots.paged}&limit=2&cursor=${encodeURIComponent(cursors[0]!)}`, tokens.viewer)
    expect(again.body.templates.map((t: any) => t.template_id)).toEqual(pages[1])
    // A template created since does not shift the pages after a cursor.
    await call("POST", "/api/v1/rcs/templates", tokens.owner, textTemplate(bots.paged))
    const later = await call("GET", `/api/v1/rcs/templates?bot_id=${bots.paged}&limit=2&cursor=${encodeURIComponent(cursors[0]!)}`, tokens.viewer)
    expect(later.body.templates.map((t: any) => t.template_id)).toEqual(pages[1])
  })

  it("defaults to 100 rows, serves at most 1000, filters by status, refuses a bad cursor or limit", async () => {
    const all = await call("GET", "/api/v1/rcs/templates", tokens.owner)
    expect(all.body.templates.length).toBeLessThanOrEqual(100)
    expect((await call("GET", "/api/v1/rcs/templates?limit=5000", tokens.owner)).status).toBe(200)
    expect((await call("GET", "/api/v1/rcs/templates?status=pending", tokens.owner)).body.templates).toEqual([])
    expect((await call("GET", "/api/v1/rcs/templates?status=approved&limit=1000", tokens.owner)).body.templates.every((t: any) => t.status === "approved")).toBe(true)
    for (const query of ["cursor=garbage", "limit=0", "limit=abc", "status=bogus"]) {
      const r = await call("GET", `/api/v1/rcs/templates?${query}`, tokens.owner)
      expect(r.status, query).toBe(400)
      expect(r.body.code).toBe("invalid_request")
    }
  })

  it("the list item carries id, bot, name, type, status, content fields and created_at", async () => {
    const created = await call("POST", "/api/v1/rcs/templates", tokens.owner, textTemplate(bots.two))
    const [first] = (await call("GET", `/api/v1/rcs/templates?bot_id=${bots.two}&limit=1`, tokens.owner)).body.templates
    expect(first).toEqual({
      template_id: created.body.template_id,
      bot_id: bots.two,
      name: created.body.name,
      type: "text",
      status: "approved",
      text: "Your order has shipped.",
      suggestions: [{ type: "url", text: "Track", url: "https://example.com/track" }],
      warnings: [],
      created_at: expect.any(String)
    })
  })
})

describe("deleting", () => {
  it("soft-deletes: the template is gone from reads (404), a second delete is 404, the row stays", async () => {
    const created = await call("POST", "/api/v1/rcs/templates", tokens.owner, textTemplate(bots.one))
    const id = created.body.template_id
    expect(await call("DELETE", `/api/v1/rcs/templates/${id}`, tokens.operator)).toEqual({ status: 200, body: { success: true } })
    const read = await call("GET", `/api/v1/rcs/templates/${id}`, tokens.owner)
    expect(read.status).toBe(404)
    expect(read.body.code).toBe("not_found")
    expect((await call("DELETE", `/api/v1/rcs/templates/${id}`, tokens.owner)).status).toBe(404)
    expect((await call("GET", "/api/v1/rcs/templates?limit=1000", tokens.owner)).body.templates.map((t: any) => t.template_id)).not.toContain(id)
    const [row] = await db<{ deleted: boolean }>("SELECT deleted_at IS NOT NULL AS deleted FROM templates WHERE template_id = $1", [id])
    expect(row).toEqual({ deleted: true })
  })

  it("an unknown or another account's template is 404", async () => {
    expect((await call("GET", "/api/v1/rcs/templates/5b0e7a8c-8f1e-4a53-9f6a-1f2d3c4b5a69", tokens.owner)).status).toBe(404)
    expect((await call("GET", "/api/v1/rcs/templates/not-a-uuid", tokens.owner)).status).toBe(404)
    const created = await call("POST", "/api/v1/rcs/templates", tokens.owner, textTemplate(bots.one))
    const otherToken = (await call("POST", "/api/v1/rcs/auth/login", undefined, { email: "tpl-other@example.com", password: "other password" })).body.token
    expect((await call("GET", `/api/v1/rcs/templates/${created.body.template_id}`, otherToken)).status).toBe(404)
    expect((await call("DELETE", `/api/v1/rcs/templates/${created.body.template_id}`, otherToken)).status).toBe(404)
  })
})
