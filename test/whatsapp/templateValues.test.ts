import { describe, expect, it } from "@effect/vitest"
import { validateCloudMessage, validateTemplateCreation } from "../../src/whatsapp/cloud/metaSchema.ts"
import { checkTemplate, type TemplateKind, type WaTemplateDefinition } from "../../src/whatsapp/templates/templateRules.ts"
import { buildTemplateSend, placeholdersOf } from "../../src/whatsapp/templates/templateValues.ts"

// What a send of an approved template needs, and the Cloud API `template` object built from it,
// which must pass Meta's own schema (vendor/meta, through src/whatsapp/cloud/metaSchema.ts).

import { body, cardValues, CREATION, IMAGE_URL, type Json, ORDER_DETAILS, SEND_DATA as DATA } from "../support/waTemplates.ts"

const definition = (kind: TemplateKind): WaTemplateDefinition => {
  const check = checkTemplate(CREATION[kind])
  if (check.template === undefined) throw new Error(`the ${kind} fixture is invalid: ${check.errors.join("; ")}`)
  return check.template
}


const language = { code: "en_US", policy: "deterministic" }
const texts = (...values: ReadonlyArray<string>) => values.map((text) => ({ type: "text", text }))
const imageParameter = (link: string) => ({ type: "header", parameters: [{ type: "image", image: { link } }] })
const builtCard = (i: number) => ({
  card_index: i,
  components: [
    imageParameter(`https://cdn.example/card${i}.jpg`),
    { type: "body", parameters: texts("Red") },
    { type: "button", sub_type: "quick_reply", index: "0", parameters: [{ type: "payload", payload: `MORE_${i}` }] },
    { type: "button", sub_type: "url", index: "1", parameters: texts("rose-red") }
  ]
})

/** The `template` object Meta's send reference gives for each kind. */
const BUILT: Record<TemplateKind, Json> = {
  text: {
    name: "order_shipped",
    language,
    components: [
      { type: "header", parameters: texts("A1234") },
      { type: "body", parameters: texts("Asha", "A1234") },
      { type: "button", sub_type: "quick_reply", index: "1", parameters: [{ type: "payload", payload: "STOP_UPDATES" }] }
    ]
  },
  media: {
    name: "spring_collection",
    language,
    components: [
      imageParameter(IMAGE_URL),
      { type: "body", parameters: texts("Asha") },
      { type: "button", sub_type: "copy_code", index: "0", parameters: [{ type: "coupon_code", coupon_code: "SPRING25" }] }
    ]
  },
  auth: {
    name: "login_code",
    language,
    components: [{ type: "body", parameters: texts("482913") }, { type: "button", sub_type: "url", index: "0", parameters: texts("482913") }]
  },
  dynamic_cta: {
    name: "track_order",
    language,
    components: [{ type: "body", parameters: texts("Asha") }, { type: "button", sub_type: "url", index: "0", parameters: texts("A1234") }]
  },
  carousel: {
    name: "plant_carousel",
    language,
    components: [{ type: "body", parameters: texts("Asha") }, { type: "carousel", cards: [builtCard(0), builtCard(1)] }]
  },
  order_details: {
    name: "order_payment",
    language,
    components: [
      imageParameter(IMAGE_URL),
      { type: "body", parameters: texts("Asha", "Blue Elf Aloe") },
      { type: "button", sub_type: "order_details", index: "0", parameters: [{ type: "action", action: { order_details: ORDER_DETAILS } }] }
    ]
  }
}

const KINDS = Object.keys(CREATION) as ReadonlyArray<TemplateKind>
const options = { allowHttpMedia: false }

const objectOf = (kind: TemplateKind, data: unknown = DATA[kind], opts = options) => {
  const result = buildTemplateSend(definition(kind), data, opts)
  if (!("object" in result)) throw new Error(`expected a send object, got issues: ${result.issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`)
  return result.object
}

/** Each issue as `path: message`, or [] when the send was built. */
const issuesOf = (kind: TemplateKind, data: unknown, opts = options): ReadonlyArray<string> => {
  const result = buildTemplateSend(definition(kind), data, opts)
  return "issues" in result ? result.issues.map((i) => `${i.path}: ${i.message}`) : []
}

const withData = (kind: TemplateKind, change: Json): Json => ({ ...DATA[kind], ...change })

const sendBody = (template: Json) => ({ messaging_product: "whatsapp", recipient_type: "individual", to: "919876543210", type: "template", template })

describe("WhatsApp template placeholders, counted from the stored definition", () => {
  it("text: a header placeholder, body placeholders, quick replies that may carry a payload", () => {
    expect(placeholdersOf(definition("text"))).toEqual({
      kind: "text",
      header: { type: "text", count: 1 },
      body: 2,
      buttons: [{ index: 0, type: "QUICK_REPLY", values: "optional" }, { index: 1, type: "QUICK_REPLY", values: "optional" }],
      cards: [],
      orderDetails: false
    })
  })

  it("media: the media URL, the coupon code; static URL and phone buttons take nothing", () => {
    expect(placeholdersOf(definition("media"))).toEqual({
      kind: "media",
      header: { type: "media", format: "image" },
      body: 1,
      buttons: [{ index: 0, type: "COPY_CODE", values: "one" }, { index: 1, type: "URL", values: "none" }, { index: 2, type: "PHONE_NUMBER", values: "none" }],
      cards: [],
      orderDetails: false
    })
  })

  it("auth: the code as the one body value; the OTP button reuses it unless told otherwise", () => {
    expect(placeholdersOf(definition("auth"))).toEqual({
      kind: "auth",
      header: { type: "none" },
      body: 1,
      buttons: [{ index: 0, type: "OTP", values: "optional" }],
      cards: [],
      orderDetails: false
    })
  })

  it("dynamic CTA: the URL's suffix", () => {
    expect(placeholdersOf(definition("dynamic_cta"))).toMatchObject({ kind: "dynamic_cta", header: { type: "none" }, body: 1, buttons: [{ index: 0, type: "URL", values: "one" }] })
  })

  it("carousel: the message body, then each card's media, body and buttons", () => {
    const cardSlots = {
      header: { type: "media", format: "image" },
      body: 1,
      buttons: [{ index: 0, type: "QUICK_REPLY", values: "optional" }, { index: 1, type: "URL", values: "one" }]
    }
    expect(placeholdersOf(definition("carousel"))).toEqual({ kind: "carousel", header: { type: "none" }, body: 1, buttons: [], cards: [cardSlots, cardSlots], orderDetails: false })
  })

  it("order details: the order itself, outside buttonValues", () => {
    expect(placeholdersOf(definition("order_details"))).toEqual({
      kind: "order_details",
      header: { type: "media", format: "image" },
      body: 2,
      buttons: [{ index: 0, type: "ORDER_DETAILS", values: "none" }, { index: 1, type: "QUICK_REPLY", values: "optional" }],
      cards: [],
      orderDetails: true
    })
  })
})

describe("WhatsApp template send objects", () => {
  for (const kind of KINDS) {
    it(`${kind}: built as Meta's template object, and the full send body passes Meta's schema`, () => {
      const object = objectOf(kind)
      expect(object).toEqual(BUILT[kind])
      expect(validateCloudMessage(sendBody(object))).toEqual([])
    })
  }

  it("a template without values sends no components", () => {
    const plain = checkTemplate({ name: "hello", language: "en", category: "UTILITY", components: [body("Thanks for your order. We will write again when it ships.")] }).template!
    const result = buildTemplateSend(plain, { name: "hello", languageCode: "en" }, options)
    expect(result).toEqual({ object: { name: "hello", language: { code: "en", policy: "deterministic" } } })
    if ("object" in result) expect(validateCloudMessage(sendBody(result.object))).toEqual([])
  })

  it("auth: buttonValues may give the OTP button another code", () => {
    const object = objectOf("auth", withData("auth", { buttonValues: { "0": ["OTHER1"] } }))
    expect(object.components).toEqual([{ type: "body", parameters: texts("482913") }, { type: "button", sub_type: "url", index: "0", parameters: texts("OTHER1") }])
  })

  it("quick reply payloads are optional", () => {
    expect(objectOf("text", withData("text", { buttonValues: undefined })).components).toEqual((BUILT.text.components as Array<Json>).slice(0, 2))
  })
})

describe("WhatsApp template send values: every missing or extra value named", () => {
  it("too many or too few body values", () => {
    expect(issuesOf("text", withData("text", { bodyValues: ["a", "b", "c"] }))).toEqual(["data.bodyValues: the template's body has 2 placeholders; got 3"])
    expect(issuesOf("text", withData("text", { bodyValues: undefined }))).toEqual(["data.bodyValues: the template's body has 2 placeholders; got 0"])
    expect(issuesOf("text", withData("text", { bodyValues: "Asha" }))).toEqual(["data.bodyValues: must be a list of strings"])
  })

  it("header values: a text header's placeholders, a media header's one URL, none without a header", () => {
    expect(issuesOf("text", withData("text", { headerValues: [] }))).toEqual(["data.headerValues: the template's header has 1 placeholder; got 0"])
    expect(issuesOf("media", withData("media", { headerValues: undefined }))).toEqual(["data.headerValues: the template's image header takes one value, the media URL; got 0"])
    expect(issuesOf("dynamic_cta", withData("dynamic_cta", { headerValues: ["x"] }))).toEqual(["data.headerValues: the template has no header; got 1 value"])
  })

  it("media URLs are https; http only when allowed", () => {
    const http = withData("media", { headerValues: ["http://cdn.example/spring.jpg"] })
    expect(issuesOf("media", http)).toEqual(["data.headerValues[0]: must be an https URL"])
    expect(issuesOf("media", http, { allowHttpMedia: true })).toEqual([])
    expect(issuesOf("media", withData("media", { headerValues: ["not a url"] }), { allowHttpMedia: true })).toEqual(["data.headerValues[0]: must be an http or https URL"])
  })

  it("text values: not empty, no new lines or tabs, no long runs of spaces", () => {
    expect(issuesOf("text", withData("text", { bodyValues: ["", "A1\nB2"] }))).toEqual([
      "data.bodyValues[0]: must not be empty",
      "data.bodyValues[1]: must not contain new lines or tabs"
    ])
    expect(issuesOf("text", withData("text", { bodyValues: ["Asha", "A     1"] }))).toEqual(["data.bodyValues[1]: must not contain more than 4 consecutive spaces"])
    expect(issuesOf("text", withData("text", { bodyValues: ["Asha", 7] }))).toEqual(["data.bodyValues[1]: must be a string"])
  })

  it("the text as it will read must fit its component", () => {
    const bodyText = "Hi {{1}}, your order {{2}} has shipped and should arrive within three days."
    const room = 1024 - (bodyText.length - "{{1}}{{2}}".length) - 1
    expect(issuesOf("text", withData("text", { bodyValues: ["A", "x".repeat(room)] }))).toEqual([])
    expect(issuesOf("text", withData("text", { bodyValues: ["AB", "x".repeat(room)] }))).toEqual([
      "data.bodyValues: the body with these values is 1025 characters; Meta allows at most 1024"
    ])
    expect(issuesOf("text", withData("text", { headerValues: ["x".repeat(60)] }))).toEqual([
      "data.headerValues: the header with these values is 73 characters; Meta allows at most 60"
    ])
  })

  it("button values: by index, as many as each button takes", () => {
    expect(issuesOf("dynamic_cta", withData("dynamic_cta", { buttonValues: undefined }))).toEqual(["data.buttonValues.0: the URL button at index 0 takes one value; got 0"])
    expect(issuesOf("dynamic_cta", withData("dynamic_cta", { buttonValues: { "0": ["a", "b"] } }))).toEqual([
      "data.buttonValues.0: the URL button at index 0 takes one value; got 2"
    ])
    expect(issuesOf("media", withData("media", { buttonValues: { "0": ["SPRING25"], "2": ["919876543210"] } }))).toEqual([
      "data.buttonValues.2: the PHONE_NUMBER button at index 2 takes no values; got 1"
    ])
    expect(issuesOf("media", withData("media", { buttonValues: { "0": ["SPRING25"], "1": ["x"] } }))).toEqual([
      "data.buttonValues.1: the URL button at index 1 takes no values; got 1"
    ])
    expect(issuesOf("dynamic_cta", withData("dynamic_cta", { buttonValues: { "0": ["A1"], "3": ["x"], first: ["y"] } }))).toEqual([
      "data.buttonValues.3: the template has no button at index 3",
      "data.buttonValues.first: button indexes are 0, 1, 2, …"
    ])
    expect(issuesOf("text", withData("text", { buttonValues: { "0": ["a", "b"] } }))).toEqual([
      "data.buttonValues.0: the QUICK_REPLY button at index 0 takes at most one value; got 2"
    ])
    expect(issuesOf("dynamic_cta", withData("dynamic_cta", { buttonValues: { "0": "A1" } }))).toEqual(["data.buttonValues.0: must be a list of strings"])
    expect(issuesOf("text", withData("text", { buttonValues: ["a"] }))).toEqual([
      `data.buttonValues: must be an object from button index to its values, such as {"0": ["ABC123"]}`
    ])
  })

  it("codes: a coupon or one-time code of at most 15 characters", () => {
    expect(issuesOf("media", withData("media", { buttonValues: { "0": ["C".repeat(15)] } }))).toEqual([])
    expect(issuesOf("media", withData("media", { buttonValues: { "0": ["C".repeat(16)] } }))).toEqual(["data.buttonValues.0[0]: must be at most 15 characters (got 16)"])
    expect(issuesOf("media", withData("media", { buttonValues: undefined }))).toEqual(["data.buttonValues.0: the COPY_CODE button at index 0 takes one value; got 0"])
    expect(issuesOf("auth", withData("auth", { bodyValues: ["1".repeat(16)] }))).toEqual(["data.bodyValues[0]: must be at most 15 characters (got 16)"])
    expect(issuesOf("auth", withData("auth", { bodyValues: ["1", "2"] }))).toEqual([
      "data.bodyValues: an authentication template takes the code as its one body value; got 2"
    ])
  })

  it("a dynamic URL as it will read fits 2000 characters", () => {
    const room = 2000 - "https://shop.example/track/".length
    expect(issuesOf("dynamic_cta", withData("dynamic_cta", { buttonValues: { "0": ["x".repeat(room)] } }))).toEqual([])
    expect(issuesOf("dynamic_cta", withData("dynamic_cta", { buttonValues: { "0": ["x".repeat(room + 1)] } }))).toEqual([
      "data.buttonValues.0: the URL with these values is 2001 characters; Meta allows at most 2000"
    ])
  })

  it("carousel: exactly the template's cards, each with its own values", () => {
    expect(issuesOf("carousel", withData("carousel", { carouselCards: [cardValues(0)] }))).toEqual(["data.carouselCards: the template has 2 cards; got 1"])
    expect(issuesOf("carousel", withData("carousel", { carouselCards: undefined }))).toEqual(["data.carouselCards: the template has 2 cards; got 0"])
    expect(issuesOf("carousel", withData("carousel", { carouselCards: [cardValues(0), { headerValues: ["ftp://x"], bodyValues: [], buttonValues: { "0": ["M"] } }] }))).toEqual([
      "data.carouselCards[1].headerValues[0]: must be an https URL",
      "data.carouselCards[1].bodyValues: the template's body has 1 placeholder; got 0",
      "data.carouselCards[1].buttonValues.1: the URL button at index 1 takes one value; got 0"
    ])
    expect(issuesOf("carousel", withData("carousel", { carouselCards: [cardValues(0), "card"] }))).toEqual([
      "data.carouselCards[1]: must be an object with headerValues, bodyValues and buttonValues"
    ])
    expect(issuesOf("text", withData("text", { carouselCards: [cardValues(0)] }))).toEqual(["data.carouselCards: the template has no carousel"])
  })

  it("order details: required with an ORDER_DETAILS button, refused without one", () => {
    expect(issuesOf("order_details", withData("order_details", { orderDetails: undefined }))).toEqual([
      "data.orderDetails: is required: the template has an ORDER_DETAILS button ({reference_id, currency, total_amount, order})"
    ])
    expect(issuesOf("text", withData("text", { orderDetails: ORDER_DETAILS }))).toEqual(["data.orderDetails: the template has no ORDER_DETAILS button"])
    expect(issuesOf("order_details", withData("order_details", { buttonValues: { "0": ["x"] } }))).toEqual([
      "data.buttonValues.0: the ORDER_DETAILS button at index 0 takes no values; its order goes in data.orderDetails; got 1"
    ])
  })

  it("order details: reference, INR, pending order of items, amounts that add up", () => {
    const order = (change: Json) => withData("order_details", { orderDetails: { ...ORDER_DETAILS, ...change } })
    expect(issuesOf("order_details", order({ reference_id: "order #1", currency: "USD", type: "services" }))).toEqual([
      "data.orderDetails.reference_id: must be 1 to 35 English letters, digits, underscores, dashes or dots, unique per order",
      `data.orderDetails.currency: must be "INR": WhatsApp order details are India payments`,
      "data.orderDetails.type: must be digital-goods or physical-goods"
    ])
    expect(issuesOf("order_details", order({ reference_id: "r".repeat(36) }))[0]).toMatch(/^data\.orderDetails\.reference_id: /)
    expect(issuesOf("order_details", order({ total_amount: { value: 165001, offset: 100 } }))).toEqual([
      "data.orderDetails.total_amount: must be subtotal + shipping + tax - discount (1650.00); got 1650.01"
    ])
    expect(issuesOf("order_details", order({ order: { ...ORDER_DETAILS.order, subtotal: { value: 400000, offset: 100 } } }))).toEqual([
      "data.orderDetails.order.subtotal: must be the items' prices times their quantities (1500.00); got 4000.00"
    ])
    expect(issuesOf("order_details", order({ order: { ...ORDER_DETAILS.order, status: "paid", items: [] } }))).toEqual([
      `data.orderDetails.order.status: must be "pending": a new order starts pending`,
      "data.orderDetails.order.items: must be a non-empty list of {name, amount, quantity}"
    ])
    const item = { name: "", amount: { value: 1.5, offset: 100 }, quantity: 101 }
    expect(issuesOf("order_details", order({ order: { ...ORDER_DETAILS.order, items: [item] } }))).toEqual([
      "data.orderDetails.order.items[0].name: must be 1 to 60 characters",
      "data.orderDetails.order.items[0].amount: must be {value, offset}: whole numbers, value ≥ 0 and offset > 0 (₹12.99 is {value: 1299, offset: 100})",
      "data.orderDetails.order.items[0].quantity: must be a whole number from 1 to 100"
    ])
    // Amounts in different units still add up: 1500.00 as {value: 1500000, offset: 1000}.
    expect(issuesOf("order_details", order({ order: { ...ORDER_DETAILS.order, subtotal: { value: 1500000, offset: 1000 } } }))).toEqual([])
  })

  it("the send names the template it was built for", () => {
    expect(issuesOf("text", withData("text", { name: "order_shiped", languageCode: "en" }))).toEqual([
      "data.name: must be the template's name, order_shipped",
      "data.languageCode: must be the template's language, en_US"
    ])
    expect(issuesOf("text", "hello")).toEqual(["data: must be an object with name, languageCode and the template's values"])
  })
})

describe("WhatsApp template creation bodies against Meta's schema", () => {
  for (const kind of KINDS) {
    it(`${kind}: the body as given and as Herald submits it both pass`, () => {
      expect(validateTemplateCreation(CREATION[kind])).toEqual([])
      expect(validateTemplateCreation(definition(kind))).toEqual([])
    })
  }
})
