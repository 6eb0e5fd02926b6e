import { readFileSync } from "node:fs"
import { describe, expect, it, vi } from "@effect/vitest"
import Ajv2020 from "ajv/dist/2020.js"
import { parse } from "yaml"
import { validateCloudMessage, validateTemplateCreation } from "../../src/whatsapp/cloud/metaSchema.ts"

const document = parse(readFileSync(new URL("../../vendor/meta/whatsapp-business-messaging-api_v23.0.yaml", import.meta.url), "utf8"))
const examplesOf = (path: string): Record<string, { value: Record<string, unknown> }> =>
  document.paths[path].post.requestBody.content["application/json"].examples

const sendExamples = examplesOf("/{Version}/{Phone-Number-ID}/messages")
const templateExamples = examplesOf("/{Version}/{WABA-ID}/message_templates")

const USED_TYPES = ["text", "image", "audio", "video", "document", "sticker", "template"]
const usesOurTypes = (body: Record<string, unknown>) => {
  if (USED_TYPES.includes(body.type as string)) return true
  const interactive = body.interactive as { type?: unknown } | undefined
  return body.type === "interactive" && (interactive?.type === "button" || interactive?.type === "list")
}

/**
 * Meta's examples write media links as placeholders ("<http(s)://audio-url>"), which are not
 * URLs; a real one stands in for each, leaving everything else as Meta wrote it.
 */
const withRealLinks = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(withRealLinks)
  if (value === null || typeof value !== "object") return value
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [key, key === "link" && typeof v === "string" && !URL.canParse(v) ? "https://example.com/media/file" : withRealLinks(v)])
  )
}

const BASE = { messaging_product: "whatsapp", recipient_type: "individual", to: "919876543210" }
const text = (more: Record<string, unknown> = {}) => ({ ...BASE, type: "text", text: { body: "Hello", preview_url: false }, ...more })
const image = (media: Record<string, unknown>) => ({ ...BASE, type: "image", image: media })
const buttons = (titles: ReadonlyArray<string>) => ({
  ...BASE,
  type: "interactive",
  interactive: {
    type: "button",
    body: { text: "Pick one" },
    action: { buttons: titles.map((title, i) => ({ type: "reply", reply: { id: `b${i}`, title } })) }
  }
})
const list = (rows: number, more: { sectionTitle?: string; rowId?: string; rowTitle?: string; description?: string; button?: string } = {}) => ({
  ...BASE,
  type: "interactive",
  interactive: {
    type: "list",
    body: { text: "Choose" },
    action: {
      button: more.button ?? "Options",
      sections: [{
        title: more.sectionTitle ?? "Section",
        rows: Array.from({ length: rows }, (_, i) => ({
          id: i === 0 && more.rowId !== undefined ? more.rowId : `r${i}`,
          title: i === 0 && more.rowTitle !== undefined ? more.rowTitle : `Row ${i}`,
          ...(i === 0 && more.description !== undefined ? { description: more.description } : {})
        }))
      }]
    }
  }
})
const template = (components: ReadonlyArray<unknown>) => ({
  ...BASE,
  type: "template",
  template: { name: "order_update", language: { code: "en" }, components }
})

const a = (n: number) => "a".repeat(n)

describe("validateCloudMessage: Meta's own examples", () => {
  const used = Object.entries(sendExamples).filter(([, example]) => usesOurTypes(example.value))

  it("covers every type Herald sends", () => {
    const kinds = new Set(used.map(([, e]) => e.value.type === "interactive" ? `interactive/${(e.value.interactive as { type: string }).type}` : e.value.type))
    expect([...kinds].sort()).toEqual(
      ["audio", "document", "image", "interactive/button", "interactive/list", "sticker", "template", "text", "video"]
    )
    expect(used.length).toBeGreaterThanOrEqual(30)
  })

  for (const [name, example] of used) {
    it(`accepts "${name}"`, () => {
      expect(validateCloudMessage(withRealLinks(example.value))).toEqual([])
    })
  }

  it("accepts a placeholder-free example exactly as Meta wrote it", () => {
    expect(validateCloudMessage(sendExamples["Send Text Message"]!.value)).toEqual([])
    expect(validateCloudMessage(sendExamples["Send Test Message"]!.value)).toEqual([])
  })
})

describe("validateCloudMessage: the repairs", () => {
  it("accepts Herald's envelope (base properties beside a closed message schema, biz_opaque_callback_data)", () => {
    expect(validateCloudMessage(text({ biz_opaque_callback_data: "7f1c3a52-0a3c-4f4e-9d1c-6f6c8e3b2a10" }))).toEqual([])
    expect(validateCloudMessage(text({ context: { message_id: "wamid.X" } }))).toEqual([])
  })

  it("accepts recipient_type left out (Meta's default)", () => {
    const { recipient_type: _, ...body } = text()
    expect(validateCloudMessage(body)).toEqual([])
  })

  it("accepts template components Meta sends but its schema omitted", () => {
    expect(validateCloudMessage(template([
      { type: "body", parameters: [{ type: "text", text: "123456" }] },
      { type: "button", sub_type: "url", index: "0", parameters: [{ type: "text", text: "123456" }] },
      { type: "button", sub_type: "copy_code", index: 1, parameters: [{ type: "coupon_code", coupon_code: "SAVE10" }] },
      { type: "button", sub_type: "order_details", index: "2", parameters: [{ type: "action", action: { order_details: {} } }] }
    ]))).toEqual([])
    expect(validateCloudMessage(template([
      { type: "body", parameters: [] },
      { type: "carousel", cards: [{ card_index: 0, components: [] }] }
    ]))).toEqual([])
  })
})

describe("validateCloudMessage: real mistakes", () => {
  const rejects = (body: unknown, fragment: string) => {
    const problems = validateCloudMessage(body)
    expect(problems.join("\n")).toContain(fragment)
  }

  it("an unknown top-level field", () => rejects(text({ bogus: 1 }), "body: bogus is not a field here"))
  it("an unknown field inside text", () => rejects(text({ text: { body: "x", colour: "red" } }), "text: colour is not a field here"))
  it("an unknown or misspelt type", () => {
    rejects(text({ type: "txt" }), "type: must be one of")
    rejects({ ...BASE, text: { body: "x" } }, "type: must be one of")
  })
  it("a type whose object is missing", () => rejects({ ...BASE, type: "image", text: { body: "x" } }, "must have required property 'image'"))
  it("the object of another type", () => rejects({ ...BASE, type: "image", image: { link: "https://example.com/a.jpg" }, text: { body: "x" } }, "text is not a field here"))
  it("media with both id and link", () => rejects(image({ id: "123", link: "https://example.com/a.jpg" }), "image: matches more than one"))
  it("media with neither id nor link", () => rejects(image({ caption: "x" }), "image: matches none"))
  it("a media link that is not an http(s) URL", () => {
    rejects(image({ link: "ftp://example.com/a.jpg" }), "image.link: must match format \"url\"")
    rejects(image({ link: "/relative/a.jpg" }), "image.link: must match format \"url\"")
  })
  it("a sticker with extra fields", () => rejects({ ...BASE, type: "sticker", sticker: { link: "https://example.com/s.webp", caption: "x" } }, "sticker: caption is not a field here"))
  it("a reply button title over 20 characters", () => {
    expect(validateCloudMessage(buttons([a(20)]))).toEqual([])
    rejects(buttons([a(21)]), "interactive.action.buttons[0].reply.title: must NOT have more than 20 characters")
  })
  it("4 reply buttons, or none", () => {
    expect(validateCloudMessage(buttons(["a", "b", "c"]))).toEqual([])
    rejects(buttons(["a", "b", "c", "d"]), "interactive.action.buttons: must NOT have more than 3 items")
    rejects(buttons([]), "interactive.action.buttons: must NOT have fewer than 1 items")
  })
  it("a button id over 256 characters", () => {
    const body = buttons(["ok"]) as { interactive: { action: { buttons: Array<{ reply: { id: string } }> } } }
    body.interactive.action.buttons[0]!.reply.id = a(257)
    rejects(body, "reply.id: must NOT have more than 256 characters")
  })
  it("interactive body, header and footer lengths", () => {
    const withFrame = (body: number, header: number, footer: number) => {
      const message = buttons(["ok"]) as { interactive: Record<string, unknown> }
      message.interactive = { ...message.interactive, body: { text: a(body) }, header: { type: "text", text: a(header) }, footer: { text: a(footer) } }
      return message
    }
    expect(validateCloudMessage(withFrame(1024, 60, 60))).toEqual([])
    const problems = validateCloudMessage(withFrame(1025, 61, 61)).join("\n")
    expect(problems).toContain("interactive.body.text: must NOT have more than 1024 characters")
    expect(problems).toContain("interactive.header.text: must NOT have more than 60 characters")
    expect(problems).toContain("interactive.footer.text: must NOT have more than 60 characters")
  })
  it("list limits", () => {
    expect(validateCloudMessage(list(10, { sectionTitle: a(24), rowId: a(200), rowTitle: a(24), description: a(72), button: a(20) }))).toEqual([])
    rejects(list(11), "interactive.action.sections[0].rows: must NOT have more than 10 items")
    rejects(list(1, { sectionTitle: a(25) }), "sections[0].title: must NOT have more than 24 characters")
    rejects(list(1, { rowId: a(201) }), "rows[0].id: must NOT have more than 200 characters")
    rejects(list(1, { rowTitle: a(25) }), "rows[0].title: must NOT have more than 24 characters")
    rejects(list(1, { description: a(73) }), "rows[0].description: must NOT have more than 72 characters")
    rejects(list(1, { button: a(21) }), "interactive.action.button: must NOT have more than 20 characters")
  })
  it("biz_opaque_callback_data over 512 characters", () => rejects(text({ biz_opaque_callback_data: a(513) }), "biz_opaque_callback_data: must NOT have more than 512 characters"))
  it("a missing recipient, a wrong field type", () => {
    const { to: _, ...noRecipient } = text()
    rejects(noRecipient, "must have required property 'to'")
    rejects(text({ to: 919876543210 }), "to: must be string")
    rejects(text({ text: { body: "x", preview_url: "yes" } }), "text.preview_url: must be boolean")
  })
  it("a template button index outside 0-9, an unknown component type", () => {
    rejects(template([{ type: "button", sub_type: "quick_reply", index: "10", parameters: [] }]), "template.components[0].index: must match pattern")
    rejects(template([{ type: "button", sub_type: "quick_reply", index: 10, parameters: [] }]), "template.components[0].index: must be <= 9")
    rejects(template([{ type: "footer" }]), "template.components[0].type: must be one of")
    rejects(template([{ type: "button", sub_type: "call_me", index: "0" }]), "template.components[0].sub_type: must be one of")
    rejects({ ...template([]), templates: {} }, "templates is not a field here")
  })
  it("a body that is not an object", () => {
    expect(validateCloudMessage(null)).toEqual(["body: must be an object"])
    expect(validateCloudMessage("{}")).toEqual(["body: must be an object"])
  })
  it("counts characters as code points, as JSON Schema does", () => {
    expect(validateCloudMessage(buttons(["😀".repeat(20)]))).toEqual([])
    expect(validateCloudMessage(buttons(["😀".repeat(21)]))).not.toEqual([])
  })
})

describe("validateTemplateCreation", () => {
  for (const [name, example] of Object.entries(templateExamples)) {
    it(`accepts "${name}"`, () => {
      expect(validateTemplateCreation(example.value)).toEqual([])
    })
  }

  it("requires name, language, category and components", () => {
    expect(validateTemplateCreation({})).toEqual([
      "body: must have required property 'name'",
      "body: must have required property 'language'",
      "body: must have required property 'category'",
      "body: must have required property 'components'"
    ])
  })

  it("refuses an unknown category and misshapen components", () => {
    const valid = templateExamples["Create template w/ text header, text body, text footer, and 2 quick reply buttons"]!.value
    expect(validateTemplateCreation({ ...valid, category: "PROMOTION" }).join("\n")).toContain("category: must be one of")
    expect(validateTemplateCreation({ ...valid, components: { type: "BODY" } }).join("\n")).toContain("components: must be array")
    expect(validateTemplateCreation({ ...valid, components: [{ type: "BODY", text: 42 }] }).join("\n")).toContain("components[0].text: must be string")
  })
})

describe("compiled once", () => {
  // What it costs belongs to bench/ (this machine's speed varies 2-4x); that the schemas are
  // compiled once per process, not once per body, is a rule: no body after the first compiles one.
  it("compiles Meta's schemas for the first body only", () => {
    validateCloudMessage(text())
    const compile = vi.spyOn(Ajv2020.default.prototype, "compile")
    try {
      for (let i = 0; i < 100; i++) expect(validateCloudMessage(buttons(["Yes", "No"]))).toEqual([])
      expect(validateTemplateCreation({})).not.toEqual([])
      expect(compile).not.toHaveBeenCalled()
    } finally {
      compile.mockRestore()
    }
  })
})

describe("the vendored JSON", () => {
  it("is Meta's YAML document, unchanged (node vendor/meta/derive-json.mjs writes it)", () => {
    const json = JSON.parse(readFileSync(new URL("../../vendor/meta/whatsapp-business-messaging-api_v23.0.json", import.meta.url), "utf8"))
    expect(json).toEqual(document)
  })
})
