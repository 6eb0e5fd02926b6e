import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { toCloudMessage } from "../../src/whatsapp/cloud/payload.ts"
import { validateCloudMessage } from "../../src/whatsapp/cloud/metaSchema.ts"
import {
  checkMessageData,
  type CloudContent,
  type FreeFormType,
  isFreeFormType,
  isPublicMessageType,
  PUBLIC_MESSAGE_TYPES
} from "../../src/whatsapp/message/publicMessage.ts"

const HTTPS_ONLY = { allowHttpMedia: false }
const HTTP_ALLOWED = { allowHttpMedia: true }
const TO = "919876543210"
const HERALD_ID = "7f1c3a52-0a3c-4f4e-9d1c-6f6c8e3b2a10"

const a = (n: number, unit = "a") => unit.repeat(n)
const IMG = "https://cdn.example.com/photo.jpg"

const issuesOf = (type: FreeFormType, data: unknown, options = HTTPS_ONLY): ReadonlyArray<string> => {
  const checked = checkMessageData(type, data, options)
  return "issues" in checked ? checked.issues.map((i) => `${i.path}: ${i.message}`) : []
}

const contentOf = (type: FreeFormType, data: unknown, options = HTTPS_ONLY): CloudContent => {
  const checked = checkMessageData(type, data, options)
  if (!("content" in checked)) throw new Error(`expected valid, got ${JSON.stringify(checked.issues)}`)
  return checked.content
}

/** Valid data builds a body Meta's own schema accepts: every valid case goes through here. */
const accepted = (type: FreeFormType, data: unknown, options = HTTPS_ONLY): CloudContent => {
  const content = contentOf(type, data, options)
  expect(validateCloudMessage(toCloudMessage(TO, content, HERALD_ID))).toEqual([])
  return content
}

const rejected = (type: FreeFormType, data: unknown, expected: ReadonlyArray<string>, options = HTTPS_ONLY) =>
  expect(issuesOf(type, data, options)).toEqual(expected)

const button = (id: string, title: string) => ({ id, title })
const row = (id: string, title = `Title ${id}`) => ({ id, title })
const section = (title: string | undefined, rows: ReadonlyArray<unknown>) => ({ ...(title === undefined ? {} : { title }), rows })
const rowsOf = (n: number, prefix = "r") => Array.from({ length: n }, (_, i) => row(`${prefix}${i}`))
const buttonsOf = (n: number) => Array.from({ length: n }, (_, i) => button(`b${i}`, `Choice ${i}`))
const list = (more: Record<string, unknown> = {}) => ({ message: "Pick a slot", button: "Slots", sections: [section(undefined, rowsOf(2))], ...more })
const buttons = (more: Record<string, unknown> = {}) => ({ message: "Confirm?", buttons: buttonsOf(2), ...more })

describe("type names", () => {
  it("are Interakt's, exactly", () => {
    expect(PUBLIC_MESSAGE_TYPES).toEqual(["Text", "Image", "Video", "Audio", "Document", "Sticker", "InteractiveButton", "InteractiveList", "Template"])
    expect(isPublicMessageType("Text")).toBe(true)
    expect(isPublicMessageType("text")).toBe(false)
    expect(isPublicMessageType(undefined)).toBe(false)
    expect(isFreeFormType("Template")).toBe(false)
    expect(isFreeFormType("InteractiveList")).toBe(true)
  })

  it("Template is left to the template path", () => {
    expect(checkMessageData("Template", { name: "x" }, HTTPS_ONLY)).toBeUndefined()
  })

  it("an unchecked unknown type is an issue, not a crash", () => {
    expect(issuesOf("Carousel" as FreeFormType, {})).toEqual(["type: must be one of Text, Image, Video, Audio, Document, Sticker, InteractiveButton, InteractiveList, Template"])
  })
})

describe("data itself", () => {
  it("must be an object", () => {
    rejected("Text", null, ["data: must be an object (got null)"])
    rejected("Text", undefined, ["data: must be an object (got nothing)"])
    rejected("Text", "hello", ["data: must be an object (got a string)"])
    rejected("Image", [IMG], ["data: must be an object (got a list)"])
  })

  it("names each unknown field with the type", () => {
    rejected("Image", { mediaUrl: IMG, colour: "red", size: 3 }, ["data.colour: is not a field of Image", "data.size: is not a field of Image"])
    rejected("Audio", { mediaUrl: IMG, message: "caption" }, ["data.message: is not a field of Audio"])
    rejected("Sticker", { mediaUrl: IMG, fileName: "a.webp" }, ["data.fileName: is not a field of Sticker"])
    rejected("Text", { message: "hi", text: "hi" }, ["data.text: is not a field of Text"])
  })
})

describe("Text", () => {
  it("builds {body, preview_url: false}", () => {
    expect(accepted("Text", { message: "Hello https://example.com" })).toEqual({
      type: "text",
      object: { body: "Hello https://example.com", preview_url: false }
    })
  })

  it("takes 4096 characters, not 4097", () => {
    accepted("Text", { message: a(4096) })
    rejected("Text", { message: a(4097) }, ["data.message: must be at most 4096 characters (got 4097)"])
  })

  it("counts code points: 4096 emoji fit although they are 8192 UTF-16 units", () => {
    accepted("Text", { message: a(4096, "😀") })
    rejected("Text", { message: a(4097, "😀") }, ["data.message: must be at most 4096 characters (got 4097)"])
  })

  it("needs a non-blank string", () => {
    rejected("Text", {}, ["data.message: is required"])
    rejected("Text", { message: null }, ["data.message: is required"])
    rejected("Text", { message: "" }, ["data.message: must not be empty"])
    rejected("Text", { message: " \n\t" }, ["data.message: must not be empty"])
    rejected("Text", { message: 42 }, ["data.message: must be a string (got a number)"])
    rejected("Text", { message: ["hi"] }, ["data.message: must be a string (got a list)"])
  })
})

describe("media URLs", () => {
  it("https is taken as given", () => {
    expect(accepted("Image", { mediaUrl: IMG })).toEqual({ type: "image", object: { link: IMG } })
  })

  it("http only when allowed", () => {
    const http = "http://cdn.example.com/photo.jpg"
    rejected("Image", { mediaUrl: http }, ["data.mediaUrl: must be an https URL (http is not allowed)"])
    expect(accepted("Image", { mediaUrl: http }, HTTP_ALLOWED)).toEqual({ type: "image", object: { link: http } })
  })

  it("anything else is an issue, with or without http allowed", () => {
    for (const options of [HTTPS_ONLY, HTTP_ALLOWED]) {
      rejected("Image", { mediaUrl: "ftp://cdn.example.com/photo.jpg" }, ["data.mediaUrl: must be an https URL"], options)
      rejected("Image", { mediaUrl: "javascript:alert(1)" }, ["data.mediaUrl: must be an https URL"], options)
      rejected("Image", { mediaUrl: "file:///etc/passwd" }, ["data.mediaUrl: must be an https URL"], options)
      rejected("Image", { mediaUrl: "/images/photo.jpg" }, ["data.mediaUrl: must be an absolute https URL, e.g. https://example.com/photo.jpg"], options)
      rejected("Image", { mediaUrl: "cdn.example.com/photo.jpg" }, ["data.mediaUrl: must be an absolute https URL, e.g. https://example.com/photo.jpg"], options)
      rejected("Image", { mediaUrl: "https://" }, ["data.mediaUrl: must be an absolute https URL, e.g. https://example.com/photo.jpg"], options)
      rejected("Image", { mediaUrl: "https://cdn.example.com/my photo.jpg" }, ["data.mediaUrl: must not contain spaces or control characters (encode them, e.g. %20)"], options)
      rejected("Image", { mediaUrl: "" }, ["data.mediaUrl: must not be empty"], options)
      rejected("Image", { mediaUrl: 7 }, ["data.mediaUrl: must be a string (got a number)"], options)
      rejected("Image", {}, ["data.mediaUrl: is required"], options)
    }
  })

  it("at most 2048 characters", () => {
    const base = "https://cdn.example.com/"
    accepted("Image", { mediaUrl: base + a(2048 - base.length) })
    rejected("Image", { mediaUrl: base + a(2049 - base.length) }, ["data.mediaUrl: must be at most 2048 characters (got 2049)"])
  })
})

describe("Image, Video: caption", () => {
  for (const type of ["Image", "Video"] as const) {
    it(`${type} builds {link, caption}, caption up to 1024`, () => {
      const cloud = type.toLowerCase()
      expect(accepted(type, { mediaUrl: IMG, message: a(1024) })).toEqual({ type: cloud, object: { link: IMG, caption: a(1024) } })
      expect(accepted(type, { mediaUrl: IMG, message: null })).toEqual({ type: cloud, object: { link: IMG } })
      rejected(type, { mediaUrl: IMG, message: a(1025) }, ["data.message: must be at most 1024 characters (got 1025)"])
      rejected(type, { mediaUrl: IMG, message: "" }, ["data.message: must not be empty (leave it out instead)"])
    })
  }
})

describe("Audio, Sticker", () => {
  for (const type of ["Audio", "Sticker"] as const) {
    it(`${type} builds {link}`, () => {
      expect(accepted(type, { mediaUrl: "https://cdn.example.com/file" })).toEqual({ type: type.toLowerCase(), object: { link: "https://cdn.example.com/file" } })
    })
  }
})

describe("Document", () => {
  const PDF = "https://cdn.example.com/invoice.pdf"

  it("builds {link, caption, filename}", () => {
    expect(accepted("Document", { mediaUrl: PDF, fileName: "invoice-42.pdf", message: "Your invoice" })).toEqual({
      type: "document",
      object: { link: PDF, caption: "Your invoice", filename: "invoice-42.pdf" }
    })
    expect(accepted("Document", { mediaUrl: PDF })).toEqual({ type: "document", object: { link: PDF } })
  })

  it("caption up to 1024, file name up to 240, a name not a path", () => {
    accepted("Document", { mediaUrl: PDF, message: a(1024), fileName: `${a(236)}.pdf` })
    rejected("Document", { mediaUrl: PDF, message: a(1025), fileName: `${a(237)}.pdf` }, [
      "data.message: must be at most 1024 characters (got 1025)",
      "data.fileName: must be at most 240 characters (got 241)"
    ])
    rejected("Document", { mediaUrl: PDF, fileName: "../etc/passwd" }, ["data.fileName: must be a file name without slashes or control characters"])
    rejected("Document", { mediaUrl: PDF, fileName: "a\\b.pdf" }, ["data.fileName: must be a file name without slashes or control characters"])
    rejected("Document", { mediaUrl: PDF, fileName: 12 }, ["data.fileName: must be a string (got a number)"])
  })
})

describe("InteractiveButton", () => {
  it("builds reply buttons with a text header and footer", () => {
    const data = { message: "Confirm your slot?", header: "Booking", footer: "Reply within 24 h", buttons: [button("yes", "Yes"), button("no", "No")] }
    expect(accepted("InteractiveButton", data)).toEqual({
      type: "interactive",
      object: {
        type: "button",
        header: { type: "text", text: "Booking" },
        body: { text: "Confirm your slot?" },
        footer: { text: "Reply within 24 h" },
        action: { buttons: [{ type: "reply", reply: { id: "yes", title: "Yes" } }, { type: "reply", reply: { id: "no", title: "No" } }] }
      }
    })
    expect(accepted("InteractiveButton", buttons({ buttons: [button("only", "Only")] })).object).not.toHaveProperty("header")
  })

  it("limits at and just past each bound", () => {
    accepted("InteractiveButton", { message: a(1024), header: a(60), footer: a(60), buttons: [button(a(256), a(20)), button("b", "B"), button("c", "C")] })
    rejected("InteractiveButton", { message: a(1025), header: a(61), footer: a(61), buttons: [button(a(257), a(21))] }, [
      "data.header: must be at most 60 characters (got 61)",
      "data.message: must be at most 1024 characters (got 1025)",
      "data.footer: must be at most 60 characters (got 61)",
      "data.buttons[0].id: must be at most 256 characters (got 257)",
      "data.buttons[0].title: must be at most 20 characters (got 21)"
    ])
  })

  it("1 to 3 buttons", () => {
    accepted("InteractiveButton", buttons({ buttons: buttonsOf(1) }))
    accepted("InteractiveButton", buttons({ buttons: buttonsOf(3) }))
    rejected("InteractiveButton", buttons({ buttons: buttonsOf(4) }), ["data.buttons: must have at most 3 buttons (got 4)"])
    rejected("InteractiveButton", buttons({ buttons: [] }), ["data.buttons: must have at least 1 button"])
    rejected("InteractiveButton", { message: "x" }, ["data.buttons: is required"])
    rejected("InteractiveButton", buttons({ buttons: { id: "a", title: "A" } }), ["data.buttons: must be a list of buttons (got an object)"])
  })

  it("ids and titles are present, unique, ids without edge spaces", () => {
    rejected("InteractiveButton", buttons({ buttons: [button("a", "Same"), button("a", "Same"), button("c", "Other")] }), [
      "data.buttons[1].id: must be unique (data.buttons[0].id is the same)",
      "data.buttons[1].title: must be unique (data.buttons[0].title is the same)"
    ])
    rejected("InteractiveButton", buttons({ buttons: [button(" a", "A"), button("b ", "B")] }), [
      "data.buttons[0].id: must not start or end with a space",
      "data.buttons[1].id: must not start or end with a space"
    ])
    rejected("InteractiveButton", buttons({ buttons: [{ title: "A" }, { id: "b", title: "" }] }), [
      "data.buttons[0].id: is required",
      "data.buttons[1].title: must not be empty"
    ])
    rejected("InteractiveButton", buttons({ buttons: ["Yes", { id: "b", title: "B", payload: "x" }] }), [
      "data.buttons[0]: must be an object (got a string)",
      "data.buttons[1].payload: is not a field of a button"
    ])
  })

  it("the message is required, header and footer are optional text", () => {
    rejected("InteractiveButton", { buttons: buttonsOf(1), header: { type: "image" }, footer: "" }, [
      "data.header: must be a string (got an object)",
      "data.message: is required",
      "data.footer: must not be empty (leave it out instead)"
    ])
  })
})

describe("InteractiveList", () => {
  it("builds a list message", () => {
    const data = {
      message: "Pick a slot",
      button: "Slots",
      header: "Clinic",
      footer: "Times are IST",
      sections: [section("Morning", [{ id: "m9", title: "9:00", description: "Dr. Rao" }]), section("Evening", [row("e6", "18:00")])]
    }
    expect(accepted("InteractiveList", data)).toEqual({
      type: "interactive",
      object: {
        type: "list",
        header: { type: "text", text: "Clinic" },
        body: { text: "Pick a slot" },
        footer: { text: "Times are IST" },
        action: {
          button: "Slots",
          sections: [
            { title: "Morning", rows: [{ id: "m9", title: "9:00", description: "Dr. Rao" }] },
            { title: "Evening", rows: [{ id: "e6", title: "18:00" }] }
          ]
        }
      }
    })
  })

  it("one section needs no title; more than one need each a title", () => {
    expect(accepted("InteractiveList", list()).object).toMatchObject({ action: { sections: [{ rows: rowsOf(2) }] } })
    rejected("InteractiveList", list({ sections: [section(undefined, rowsOf(1, "a")), section(undefined, rowsOf(1, "b"))] }), [
      "data.sections[0].title: is required when there is more than one section",
      "data.sections[1].title: is required when there is more than one section"
    ])
  })

  it("1 to 10 sections, 10 rows in total, at least one row each", () => {
    const titled = (n: number) => Array.from({ length: n }, (_, i) => section(`S${i}`, [row(`r${i}`)]))
    accepted("InteractiveList", list({ sections: titled(10) }))
    rejected("InteractiveList", list({ sections: titled(11) }), [
      "data.sections: must have at most 10 sections (got 11)",
      "data.sections: must hold at most 10 rows in total (got 11)"
    ])
    accepted("InteractiveList", list({ sections: [section("A", rowsOf(6, "a")), section("B", rowsOf(4, "b"))] }))
    rejected("InteractiveList", list({ sections: [section("A", rowsOf(6, "a")), section("B", rowsOf(5, "b"))] }), [
      "data.sections: must hold at most 10 rows in total (got 11)"
    ])
    accepted("InteractiveList", list({ sections: [section(undefined, rowsOf(10))] }))
    rejected("InteractiveList", list({ sections: [section(undefined, rowsOf(11))] }), ["data.sections: must hold at most 10 rows in total (got 11)"])
    rejected("InteractiveList", list({ sections: [] }), ["data.sections: must have at least 1 section"])
    rejected("InteractiveList", list({ sections: [section(undefined, [])] }), ["data.sections[0].rows: must have at least 1 row"])
    rejected("InteractiveList", list({ sections: [{ title: "A" }] }), ["data.sections[0].rows: is required"])
  })

  it("limits at and just past each bound", () => {
    accepted("InteractiveList", {
      message: a(1024), button: a(20), header: a(60), footer: a(60),
      sections: [section(a(24), [{ id: a(200), title: a(24), description: a(72) }])]
    })
    rejected("InteractiveList", {
      message: a(1025), button: a(21), header: a(61), footer: a(61),
      sections: [section(a(25), [{ id: a(201), title: a(25), description: a(73) }])]
    }, [
      "data.header: must be at most 60 characters (got 61)",
      "data.message: must be at most 1024 characters (got 1025)",
      "data.footer: must be at most 60 characters (got 61)",
      "data.button: must be at most 20 characters (got 21)",
      "data.sections[0].title: must be at most 24 characters (got 25)",
      "data.sections[0].rows[0].id: must be at most 200 characters (got 201)",
      "data.sections[0].rows[0].title: must be at most 24 characters (got 25)",
      "data.sections[0].rows[0].description: must be at most 72 characters (got 73)"
    ])
  })

  it("row ids are unique across the whole message", () => {
    rejected("InteractiveList", list({ sections: [section("A", [row("x"), row("y")]), section("B", [row("x")])] }), [
      "data.sections[1].rows[0].id: must be unique (data.sections[0].rows[0].id is the same)"
    ])
  })

  it("wrong shapes and unknown fields", () => {
    rejected("InteractiveList", { message: "m", sections: "none" }, [
      "data.button: is required",
      "data.sections: must be a list of sections (got a string)"
    ])
    rejected("InteractiveList", list({ sections: [{ rows: [{ id: "a", title: "A", price: 3 }, 5], collapsed: true }] }), [
      "data.sections[0].collapsed: is not a field of a section",
      "data.sections[0].rows[0].price: is not a field of a row",
      "data.sections[0].rows[1]: must be an object (got a number)"
    ])
    rejected("InteractiveList", list({ sections: [null] }), ["data.sections[0]: must be an object (got null)"])
  })
})

describe("toCloudMessage", () => {
  it("wraps the content in Meta's envelope with Herald's id as biz_opaque_callback_data", () => {
    const content = contentOf("Text", { message: "Hi" })
    expect(toCloudMessage(TO, content, HERALD_ID)).toEqual({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: TO,
      type: "text",
      text: { body: "Hi", preview_url: false },
      biz_opaque_callback_data: HERALD_ID
    })
  })
})

/**
 * The same data put into Meta's shape without any check: what Herald would send if it trusted
 * its clients. Whatever Meta's schema refuses in it, `checkMessageData` must refuse first.
 */
const naiveInteractive = (data: {
  message: string
  header?: string | undefined
  footer?: string | undefined
  action: Record<string, unknown>
  type: "button" | "list"
}) =>
  toCloudMessage(TO, {
    type: "interactive",
    object: {
      type: data.type,
      ...(data.header === undefined ? {} : { header: { type: "text", text: data.header } }),
      body: { text: data.message },
      ...(data.footer === undefined ? {} : { footer: { text: data.footer } }),
      action: data.action
    }
  }, HERALD_ID)

const textAround = (limit: number) =>
  fc.tuple(fc.integer({ min: 1, max: limit + 2 }), fc.constantFrom("a", "é", "😀", "字")).map(([n, unit]) => unit.repeat(n))
const optionalText = (limit: number) => fc.option(textAround(limit), { nil: undefined })

describe("checkMessageData catches first whatever Meta's schema refuses", () => {
  it("reply buttons", () => {
    fc.assert(
      fc.property(
        textAround(1024),
        optionalText(60),
        optionalText(60),
        fc.array(fc.record({ id: textAround(256), title: textAround(20) }), { minLength: 0, maxLength: 4 }),
        (message, header, footer, items) => {
          const data = { message, header, footer, buttons: items }
          const schemaProblems = validateCloudMessage(naiveInteractive({
            type: "button", message, header, footer,
            action: { buttons: items.map((b) => ({ type: "reply", reply: b })) }
          }))
          const checked = checkMessageData("InteractiveButton", data, HTTPS_ONLY)
          if (schemaProblems.length > 0) expect(checked).toHaveProperty("issues")
          if ("content" in checked) expect(validateCloudMessage(toCloudMessage(TO, checked.content, HERALD_ID))).toEqual([])
        }
      ),
      { numRuns: 300 }
    )
  })

  it("lists", () => {
    const rowArb = fc.record({ id: textAround(200), title: textAround(24), description: optionalText(72) })
    fc.assert(
      fc.property(
        textAround(1024),
        textAround(20),
        fc.array(fc.record({ title: optionalText(24), rows: fc.array(rowArb, { minLength: 1, maxLength: 11 }) }), { minLength: 1, maxLength: 11 }),
        (message, label, sections) => {
          const cleaned = sections.map((s) => ({
            ...(s.title === undefined ? {} : { title: s.title }),
            rows: s.rows.map((r) => ({ id: r.id, title: r.title, ...(r.description === undefined ? {} : { description: r.description }) }))
          }))
          const schemaProblems = validateCloudMessage(naiveInteractive({ type: "list", message, action: { button: label, sections: cleaned } }))
          const checked = checkMessageData("InteractiveList", { message, button: label, sections: cleaned }, HTTPS_ONLY)
          if (schemaProblems.length > 0) expect(checked).toHaveProperty("issues")
          if ("content" in checked) expect(validateCloudMessage(toCloudMessage(TO, checked.content, HERALD_ID))).toEqual([])
        }
      ),
      { numRuns: 300 }
    )
  })

  it("media links", () => {
    const urls = fc.oneof(
      fc.webUrl({ validSchemes: ["https", "http"] }),
      fc.constantFrom("ftp://x.example/a", "mailto:a@b.c", "//cdn.example.com/a.jpg", "https://", "not a url", "data:image/png;base64,AAAA")
    )
    fc.assert(
      fc.property(urls, fc.boolean(), (url, allowHttpMedia) => {
        const schemaProblems = validateCloudMessage(toCloudMessage(TO, { type: "image", object: { link: url } }, HERALD_ID))
        const checked = checkMessageData("Image", { mediaUrl: url }, { allowHttpMedia })
        if (schemaProblems.length > 0) expect(checked).toHaveProperty("issues")
        if ("content" in checked) expect(validateCloudMessage(toCloudMessage(TO, checked.content, HERALD_ID))).toEqual([])
      }),
      { numRuns: 300 }
    )
  })
})
