import { describe, expect, it } from "@effect/vitest"
import { checkTemplate } from "../../src/whatsapp/templates/templateRules.ts"

// Template creation bodies in Meta's own component format, checked against Meta's limits
// (sources in templateRules.ts). Each limit is tried at its edge and just past it.

type Json = Record<string, unknown>

const HANDLE = "4::aW1hZ2UvanBn:ARYytyb0kLp5htbBB8vWlclG5M9gMBxiEyt4FNCvrueWBOmFmRAztEuNt"
const imageHeader = { type: "HEADER", format: "IMAGE", example: { header_handle: [HANDLE] } }
const body = (text: string, samples?: ReadonlyArray<string>): Json => ({ type: "BODY", text, ...(samples ? { example: { body_text: [samples] } } : {}) })
const buttons = (...list: ReadonlyArray<Json>): Json => ({ type: "BUTTONS", buttons: list })
const quickReply = (text = "Stop promotions"): Json => ({ type: "QUICK_REPLY", text })
const staticUrl = (url = "https://shop.example/help"): Json => ({ type: "URL", text: "Get help", url })
const dynamicUrl = (url = "https://shop.example/track/{{1}}", example: unknown = ["A1234"]): Json => ({ type: "URL", text: "Track order", url, example })
const phone = (phone_number = "919876543210"): Json => ({ type: "PHONE_NUMBER", text: "Call us", phone_number })
const template = (components: ReadonlyArray<Json>, extra: Json = {}): Json => ({ name: "sample_template", language: "en_US", category: "MARKETING", components, ...extra })
const PLAIN_BODY = body("Thanks for your order. We will write again when it ships.")

const card = (format = "IMAGE", cardBody: Json | null = body("Rose {{1}} for your garden this spring", ["Red"]), cardButtons: Json = buttons(quickReply("Tell me more"), dynamicUrl("https://shop.example/p/{{1}}", ["rose-red"]))) => ({
  components: [{ type: "HEADER", format, example: { header_handle: [HANDLE] } }, ...(cardBody ? [cardBody] : []), cardButtons]
})
const carousel = (cards: ReadonlyArray<Json>, category = "MARKETING"): Json =>
  template([body("Hi {{1}}, these plants are back in stock this week.", ["Asha"]), { type: "CAROUSEL", cards }], { category })

const authentication = (components: ReadonlyArray<Json>): Json => template(components, { name: "login_code", category: "AUTHENTICATION" })
const otp = (extra: Json = {}): Json => ({ type: "OTP", otp_type: "COPY_CODE", text: "Copy code", ...extra })

const errorsOf = (value: unknown) => checkTemplate(value).errors
const warningsOf = (value: unknown) => checkTemplate(value).warnings

const VALID = {
  text: {
    name: "order_shipped",
    language: "en_US",
    category: "UTILITY",
    components: [
      { type: "HEADER", format: "TEXT", text: "Order {{1}} update", example: { header_text: ["A1234"] } },
      body("Hi {{1}}, your order {{2}} has shipped and should arrive within three days.", ["Asha", "A1234"]),
      { type: "FOOTER", text: "Reply STOP to stop updates" },
      buttons(quickReply("Where is it?"), quickReply("Stop updates"))
    ]
  },
  media: template([imageHeader, body("Hi {{1}}, our new collection is here. Use your code at checkout this week.", ["Asha"]), buttons({ type: "COPY_CODE", example: "SPRING25" }, staticUrl(), phone())], {
    name: "spring_collection"
  }),
  auth: authentication([
    { type: "BODY", add_security_recommendation: true },
    { type: "FOOTER", code_expiration_minutes: 10 },
    buttons(otp())
  ]),
  dynamic_cta: template([body("Hi {{1}}, your order is on its way. Follow it with the button below.", ["Asha"]), buttons(dynamicUrl())], {
    name: "track_order",
    category: "UTILITY"
  }),
  carousel: { ...carousel([card(), card()]), name: "plant_carousel" },
  order_details: template([imageHeader, body("Hi {{1}}, your order of {{2}} is ready. Review it and pay below.", ["Asha", "Blue Elf Aloe"]), buttons({ type: "ORDER_DETAILS", text: "Review and pay" }, quickReply("Not now"))], {
    name: "order_payment",
    category: "UTILITY"
  })
}

describe("WhatsApp template creation: the six kinds", () => {
  for (const [kind, value] of Object.entries(VALID)) {
    it(`a valid ${kind} template passes and is classified ${kind}`, () => {
      const check = checkTemplate(value)
      expect(check.errors).toEqual([])
      expect(check.warnings).toEqual([])
      expect(check.kind).toBe(kind)
      expect(check.template?.name).toBe(value.name)
    })
  }

  it("normalises Meta's lower-case spellings and flat sample lists", () => {
    const check = checkTemplate({
      name: "login_code",
      language: "en",
      category: "authentication",
      components: [{ type: "body", add_security_recommendation: true }, { type: "buttons", buttons: [{ type: "otp", otp_type: "copy_code" }] }]
    })
    expect(check.errors).toEqual([])
    expect(check.template).toEqual({
      name: "login_code",
      language: "en",
      category: "AUTHENTICATION",
      components: [{ type: "BODY", add_security_recommendation: true }, { type: "BUTTONS", buttons: [{ type: "OTP", otp_type: "COPY_CODE" }] }]
    })
    const flat = checkTemplate(template([{ type: "body", text: "Hi {{1}}, your parcel is waiting at the front desk today.", example: { body_text: ["Asha"] } }]))
    expect(flat.template?.components).toEqual([body("Hi {{1}}, your parcel is waiting at the front desk today.", ["Asha"])])
  })

  it("one-tap and zero-tap authentication name the app that receives the code", () => {
    const oneTap = otp({ otp_type: "ONE_TAP", autofill_text: "Autofill", package_name: "com.example.app", signature_hash: "K8a/AINcGX7" })
    expect(errorsOf(authentication([{ type: "BODY" }, buttons(oneTap)]))).toEqual([])
    expect(errorsOf(authentication([{ type: "BODY" }, buttons(otp({ otp_type: "ONE_TAP" }))]))).toEqual([
      "components[1].buttons[0].package_name: is required",
      "components[1].buttons[0].signature_hash: is required"
    ])
    const apps = { supported_apps: [{ package_name: "com.example.app", signature_hash: "K8a/AINcGX7" }] }
    expect(errorsOf(authentication([{ type: "BODY" }, buttons(otp({ otp_type: "ZERO_TAP", ...apps }))]))).toEqual([
      "components[1].buttons[0].zero_tap_terms_accepted: must be true: Meta sends zero-tap codes only once its terms are accepted"
    ])
    expect(errorsOf(authentication([{ type: "BODY" }, buttons(otp({ otp_type: "ZERO_TAP", zero_tap_terms_accepted: true, ...apps }))]))).toEqual([])
  })
})

describe("WhatsApp template creation: name, language, category, structure", () => {
  it("name: 1 to 512 lowercase letters, digits and underscores", () => {
    expect(errorsOf(template([PLAIN_BODY], { name: "a".repeat(512) }))).toEqual([])
    expect(errorsOf(template([PLAIN_BODY], { name: "a".repeat(513) }))).toEqual(["name: must be at most 512 characters (got 513)"])
    expect(errorsOf(template([PLAIN_BODY], { name: "Order-Update 2" }))).toEqual(["name: only lowercase letters, digits and underscores are allowed"])
    expect(errorsOf(template([PLAIN_BODY], { name: "" }))).toEqual(["name: must not be empty"])
  })

  it("language: one of Meta's codes, with a hint for a hyphenated one", () => {
    for (const code of ["en", "en_US", "en_GB", "hi", "pt_BR", "es", "zh_CN"]) expect(errorsOf(template([PLAIN_BODY], { language: code }))).toEqual([])
    expect(errorsOf(template([PLAIN_BODY], { language: "en-US" }))).toEqual([
      `language: "en-US" is not a language code Meta supports for templates, such as en, en_US, hi or pt_BR (did you mean en_US?)`
    ])
    expect(errorsOf(template([PLAIN_BODY], { language: "klingon" }))[0]).toMatch(/^language: "klingon" is not a language code/)
  })

  it("category: MARKETING, UTILITY or AUTHENTICATION", () => {
    expect(errorsOf(template([PLAIN_BODY], { category: "PROMOTIONAL" }))).toEqual([`category: must be MARKETING, UTILITY or AUTHENTICATION (got "PROMOTIONAL")`])
  })

  it("exactly one BODY, at most one HEADER, FOOTER and BUTTONS; every problem named at once", () => {
    expect(errorsOf(template([{ type: "FOOTER", text: "x" }]))).toEqual(["components: a template needs exactly 1 BODY component (got 0)"])
    expect(errorsOf(template([PLAIN_BODY, PLAIN_BODY]))).toEqual(["components: a template needs exactly 1 BODY component (got 2)"])
    expect(errorsOf(template([imageHeader, imageHeader, PLAIN_BODY, { type: "FOOTER", text: "a" }, { type: "FOOTER", text: "b" }]))).toEqual([
      "components: a template needs at most 1 HEADER component (got 2)",
      "components: a template needs at most 1 FOOTER component (got 2)"
    ])
    expect(errorsOf(template([PLAIN_BODY, { type: "SIGNATURE" }]))).toEqual([`components[1].type: must be HEADER, BODY, FOOTER, BUTTONS or CAROUSEL (got "SIGNATURE")`])
    expect(errorsOf(template([]))).toEqual(["components: must be a non-empty list of components"])
    expect(errorsOf("a template")).toEqual(["body: must be an object with name, language, category and components"])
  })

  it("a bad name, language and component are all reported together", () => {
    expect(errorsOf({ name: "Bad", language: "xx", category: "UTILITY", components: [body("Hi {{2}}, welcome aboard our service today.")] })).toEqual([
      "name: only lowercase letters, digits and underscores are allowed",
      `language: "xx" is not a language code Meta supports for templates, such as en, en_US, hi or pt_BR`,
      "components[0].text: placeholders must run from {{1}} without gaps; missing {{1}}"
    ])
  })
})

describe("WhatsApp template creation: header, body, footer", () => {
  const withHeader = (text: string, example?: Json) => template([{ type: "HEADER", format: "TEXT", text, ...(example ? { example } : {}) }, PLAIN_BODY])

  it("header text: at most 60 characters and 1 placeholder", () => {
    expect(errorsOf(withHeader("h".repeat(60)))).toEqual([])
    expect(errorsOf(withHeader("h".repeat(61)))).toEqual(["components[0].text: must be at most 60 characters (got 61)"])
    expect(errorsOf(withHeader("Hi {{1}} and {{2}}", { header_text: ["a", "b"] }))).toEqual(["components[0].text: a header takes at most 1 placeholder (got 2)"])
  })

  it("a media header needs one uploaded sample; LOCATION is not offered", () => {
    expect(errorsOf(template([{ type: "HEADER", format: "VIDEO" }, PLAIN_BODY]))).toEqual([
      "components[0].example.header_handle: a media header needs one sample: the handle of an uploaded video"
    ])
    expect(errorsOf(template([{ type: "HEADER", format: "LOCATION" }, PLAIN_BODY]))).toEqual([
      `components[0].format: must be TEXT, IMAGE, VIDEO or DOCUMENT (got "LOCATION")`
    ])
  })

  it("body: at most 1024 characters", () => {
    expect(errorsOf(template([body("b".repeat(1024))]))).toEqual([])
    expect(errorsOf(template([body("b".repeat(1025))]))).toEqual(["components[0].text: must be at most 1024 characters (got 1025)"])
    expect(errorsOf(template([body("   ")]))).toEqual(["components[0].text: must not be empty"])
  })

  it("footer: at most 60 characters, no placeholders", () => {
    expect(errorsOf(template([PLAIN_BODY, { type: "FOOTER", text: "f".repeat(60) }]))).toEqual([])
    expect(errorsOf(template([PLAIN_BODY, { type: "FOOTER", text: "f".repeat(61) }]))).toEqual(["components[1].text: must be at most 60 characters (got 61)"])
    expect(errorsOf(template([PLAIN_BODY, { type: "FOOTER", text: "Code {{1}}" }]))).toEqual(["components[1].text: a footer cannot have placeholders"])
  })
})

describe("WhatsApp template creation: placeholders and their samples", () => {
  const text = "Hi {{1}}, your order {{2}} has shipped and arrives by Friday morning."

  it("every placeholder needs a sample, as many samples as placeholders", () => {
    expect(errorsOf(template([body(text)]))).toEqual(["components[0].example.body_text: required: 2 sample values, one per placeholder"])
    expect(errorsOf(template([body(text, ["Asha"])]))).toEqual(["components[0].example.body_text[0]: needs 2 sample values, one per placeholder (got 1)"])
    expect(errorsOf(template([body(text, ["Asha", " "])]))).toEqual(["components[0].example.body_text[0][1]: must be a non-empty string"])
    expect(errorsOf(template([{ type: "HEADER", format: "TEXT", text: "Order {{1}}" }, PLAIN_BODY]))).toEqual([
      "components[0].example.header_text: required: 1 sample value, one per placeholder"
    ])
  })

  it("placeholders run from {{1}} without gaps, each once, positional only", () => {
    expect(errorsOf(template([body("Hi {{1}}, your order {{3}} has shipped and arrives by Friday.", ["a", "b"])]))).toEqual([
      "components[0].text: placeholders must run from {{1}} without gaps; missing {{2}}"
    ])
    expect(errorsOf(template([body("Hi {{1}}, {{1}} is your name and this is a long enough text.", ["a"])]))).toEqual([
      "components[0].text: {{1}} appears more than once; each placeholder may appear once"
    ])
    expect(errorsOf(template([body("Hi {{name}}, your order has shipped and arrives by Friday.")]))).toEqual([
      "components[0].text: {{name}} is not a placeholder Herald accepts; use {{1}}, {{2}}, … in order"
    ])
    expect(errorsOf(template([body("Hi {{ 1 }}, your order has shipped and arrives by Friday.")]))[0]).toMatch(/\{\{ 1 \}\} is not a placeholder/)
  })

  it("placeholders out of order pass with a warning", () => {
    const check = checkTemplate(template([body("Order {{2}} for {{1}} has shipped and arrives by Friday morning.", ["Asha", "A1"])]))
    expect(check.errors).toEqual([])
    expect(check.warnings).toEqual(["components[0].text: placeholders appear out of order; Meta numbers them by position and may reject the template"])
  })
})

describe("WhatsApp template creation: buttons", () => {
  const withButtons = (...list: ReadonlyArray<Json>) => template([PLAIN_BODY, buttons(...list)])

  it("at most 10 buttons in total", () => {
    const replies = Array.from({ length: 10 }, (_, i) => quickReply(`Option ${i}`))
    expect(errorsOf(withButtons(...replies))).toEqual([])
    expect(errorsOf(withButtons(...replies, quickReply("Option 10")))).toEqual(["components[1].buttons: 1 to 10 buttons per template (got 11)"])
    expect(errorsOf(withButtons())).toEqual(["components[1].buttons: 1 to 10 buttons per template (got 0)"])
  })

  it("quick reply label: at most 25 characters, no placeholders", () => {
    expect(errorsOf(withButtons(quickReply("q".repeat(25))))).toEqual([])
    expect(errorsOf(withButtons(quickReply("q".repeat(26))))).toEqual(["components[1].buttons[0].text: must be at most 25 characters (got 26)"])
    expect(errorsOf(withButtons(quickReply("Pick {{1}}")))).toEqual(["components[1].buttons[0].text: a button label cannot have placeholders"])
  })

  it("URL buttons: at most 2, label 25, URL 2000 with one {{1}} only at its end", () => {
    expect(errorsOf(withButtons(staticUrl(), dynamicUrl()))).toEqual([])
    expect(errorsOf(withButtons(staticUrl(), staticUrl(), staticUrl()))).toEqual(["components[1].buttons: at most 2 URL buttons (got 3)"])
    const long = `https://shop.example/${"p".repeat(2000 - 21)}`
    expect(errorsOf(withButtons(staticUrl(long)))).toEqual([])
    expect(errorsOf(withButtons(staticUrl(`${long}p`)))).toEqual(["components[1].buttons[0].url: must be at most 2000 characters (got 2001)"])
    expect(errorsOf(withButtons(dynamicUrl("https://shop.example/{{1}}/track")))).toEqual([
      "components[1].buttons[0].url: only one placeholder, {{1}}, at the very end of the URL is allowed"
    ])
    expect(errorsOf(withButtons(dynamicUrl("https://shop.example/{{2}}")))).toEqual([
      "components[1].buttons[0].url: only one placeholder, {{1}}, at the very end of the URL is allowed"
    ])
    expect(errorsOf(withButtons({ type: "URL", text: "Track order", url: "https://shop.example/track/{{1}}" }))).toEqual([
      "components[1].buttons[0].example: required: 1 sample value, one per placeholder"
    ])
    expect(errorsOf(withButtons(staticUrl("ftp://shop.example/x")))).toEqual(["components[1].buttons[0].url: must be an http or https URL"])
    expect(checkTemplate(withButtons(dynamicUrl(undefined, "A1234"))).template?.components[1]).toEqual(buttons(dynamicUrl()))
  })

  it("phone buttons: at most 1, number at most 20 characters", () => {
    expect(errorsOf(withButtons(phone("+".concat("9".repeat(19)))))).toEqual([])
    expect(errorsOf(withButtons(phone("9".repeat(21))))).toEqual(["components[1].buttons[0].phone_number: must be at most 20 characters (got 21)"])
    expect(errorsOf(withButtons(phone(), phone()))).toEqual(["components[1].buttons: at most 1 PHONE_NUMBER button (got 2)"])
    expect(errorsOf(withButtons(phone("call-me")))).toEqual(["components[1].buttons[0].phone_number: digits with country code, + optional"])
  })

  it("quick replies grouped before or after the other buttons", () => {
    expect(errorsOf(withButtons(quickReply("a"), quickReply("b"), staticUrl(), phone()))).toEqual([])
    expect(errorsOf(withButtons(staticUrl(), phone(), quickReply("a")))).toEqual([])
    expect(errorsOf(withButtons(quickReply("a"), staticUrl(), quickReply("b")))).toEqual([
      "components[1].buttons: quick replies must be grouped together, before or after the other buttons (Meta refuses e.g. QUICK_REPLY, URL, QUICK_REPLY)"
    ])
  })

  it("copy code: one per MARKETING template, code at most 15 characters", () => {
    expect(errorsOf(withButtons({ type: "COPY_CODE", example: "C".repeat(15) }))).toEqual([])
    expect(errorsOf(withButtons({ type: "COPY_CODE", example: "C".repeat(16) }))).toEqual(["components[1].buttons[0].example: must be at most 15 characters (got 16)"])
    expect(errorsOf(withButtons({ type: "COPY_CODE", example: "A" }, { type: "COPY_CODE", example: "B" }))).toEqual([
      "components[1].buttons: at most 1 COPY_CODE button (got 2)"
    ])
    expect(errorsOf(template([PLAIN_BODY, buttons({ type: "COPY_CODE", example: "A" })], { category: "UTILITY" }))).toEqual([
      "components[1].buttons[0].type: a UTILITY template cannot have a COPY_CODE button (allowed: QUICK_REPLY, URL, PHONE_NUMBER, ORDER_DETAILS)"
    ])
  })

  it("order details: first, then quick replies only; never in an authentication template", () => {
    const order = { type: "ORDER_DETAILS", text: "Buy now" }
    expect(errorsOf(withButtons(order, ...Array.from({ length: 9 }, (_, i) => quickReply(`No ${i}`))))).toEqual([])
    expect(errorsOf(withButtons(quickReply(), order))).toEqual(["components[1].buttons: the ORDER_DETAILS button must be the first button"])
    expect(errorsOf(withButtons(order, staticUrl()))).toEqual(["components[1].buttons: beside an ORDER_DETAILS button only QUICK_REPLY buttons are allowed"])
    expect(errorsOf(withButtons(order, order))).toEqual(["components[1].buttons: at most 1 ORDER_DETAILS button (got 2)"])
    expect(errorsOf(authentication([{ type: "BODY" }, buttons(order)]))).toEqual([
      "components[1].buttons[0].type: an AUTHENTICATION template cannot have an ORDER_DETAILS button (allowed: OTP)"
    ])
  })

  it("OTP buttons belong to authentication templates; unknown types are named", () => {
    expect(errorsOf(withButtons(otp()))).toEqual([
      "components[1].buttons[0].type: a MARKETING template cannot have an OTP button (allowed: QUICK_REPLY, URL, PHONE_NUMBER, COPY_CODE, ORDER_DETAILS)"
    ])
    expect(errorsOf(withButtons({ type: "FLOW", text: "Open" }))).toEqual([
      `components[1].buttons[0].type: must be one of QUICK_REPLY, URL, PHONE_NUMBER, COPY_CODE, OTP, ORDER_DETAILS (got "FLOW")`
    ])
  })
})

describe("WhatsApp template creation: authentication", () => {
  it("Meta writes the body: a text of its own is refused", () => {
    expect(errorsOf(authentication([body("Your code is {{1}}", ["123456"]), buttons(otp())]))).toEqual([
      `components[0]: an authentication body has no text of its own (Meta writes "{{1}} is your verification code."); use add_security_recommendation`
    ])
  })

  it("code expiry: 1 to 90 minutes; a footer text is refused", () => {
    const withExpiry = (minutes: unknown) => authentication([{ type: "BODY" }, { type: "FOOTER", code_expiration_minutes: minutes }, buttons(otp())])
    expect(errorsOf(withExpiry(1))).toEqual([])
    expect(errorsOf(withExpiry(90))).toEqual([])
    expect(errorsOf(withExpiry(0))).toEqual(["components[1].code_expiration_minutes: must be a whole number from 1 to 90 (got 0)"])
    expect(errorsOf(withExpiry(91))).toEqual(["components[1].code_expiration_minutes: must be a whole number from 1 to 90 (got 91)"])
    expect(errorsOf(authentication([{ type: "BODY" }, { type: "FOOTER", text: "Expires soon" }, buttons(otp())]))).toEqual([
      "components[1].text: an authentication footer has no text of its own; use code_expiration_minutes"
    ])
  })

  it("exactly one OTP button, no header", () => {
    expect(errorsOf(authentication([{ type: "BODY" }]))).toEqual(["components: an authentication template needs exactly 1 BUTTONS component (got 0)"])
    expect(errorsOf(authentication([{ type: "BODY" }, buttons(otp(), otp())]))).toEqual(["components[1].buttons: at most 1 OTP button (got 2)"])
    expect(errorsOf(authentication([imageHeader, { type: "BODY" }, buttons(otp())]))).toEqual([
      "components: an authentication template cannot have a HEADER component"
    ])
    expect(errorsOf(authentication([{ type: "BODY" }, buttons(otp({ otp_type: "MAGIC_LINK" }))]))).toEqual([
      `components[1].buttons[0].otp_type: must be COPY_CODE, ONE_TAP or ZERO_TAP (got "MAGIC_LINK")`
    ])
  })
})

describe("WhatsApp template creation: carousel", () => {
  const cardsPath = "components[1].cards"

  it("2 to 10 cards", () => {
    expect(errorsOf(carousel([card()]))).toEqual([`${cardsPath}: a carousel needs 2 to 10 cards (got 1)`])
    expect(errorsOf(carousel([card(), card()]))).toEqual([])
    expect(errorsOf(carousel(Array.from({ length: 10 }, () => card())))).toEqual([])
    expect(errorsOf(carousel(Array.from({ length: 11 }, () => card())))).toEqual([`${cardsPath}: a carousel needs 2 to 10 cards (got 11)`])
  })

  it("card body: at most 160 characters; every card has one or none does", () => {
    expect(errorsOf(carousel([card("IMAGE", body("c".repeat(160))), card("IMAGE", body("c".repeat(160)))]))).toEqual([])
    expect(errorsOf(carousel([card("IMAGE", body("c".repeat(161))), card()]))).toEqual([`${cardsPath}[0].components[1].text: must be at most 160 characters (got 161)`])
    expect(errorsOf(carousel([card("IMAGE", null), card("IMAGE", null)]))).toEqual([])
    expect(errorsOf(carousel([card(), card("IMAGE", null)]))).toEqual([`${cardsPath}[1].components: card 0 has a body, so every card needs one`])
  })

  it("every card the same: header format and buttons", () => {
    expect(errorsOf(carousel([card("IMAGE"), card("VIDEO")]))).toEqual([
      `${cardsPath}[1].components[0].format: every card needs the same header format as card 0 (IMAGE); got VIDEO`
    ])
    expect(errorsOf(carousel([card(), card("IMAGE", body("Rose {{1}} for your garden this spring", ["Red"]), buttons(quickReply("More")))]))).toEqual([
      `${cardsPath}[1].components[2].buttons: every card needs the same buttons, in the same order, as card 0 (QUICK_REPLY, URL); got QUICK_REPLY`
    ])
  })

  it("a card: IMAGE or VIDEO header, 1 or 2 buttons among quick reply, URL and phone", () => {
    expect(errorsOf(carousel([card("DOCUMENT"), card("DOCUMENT")]))).toEqual([
      `${cardsPath}[0].components[0].format: must be IMAGE or VIDEO (got "DOCUMENT")`,
      `${cardsPath}[1].components[0].format: must be IMAGE or VIDEO (got "DOCUMENT")`
    ])
    const three = buttons(quickReply("a"), quickReply("b"), quickReply("c"))
    expect(errorsOf(carousel([card("IMAGE", null, three), card("IMAGE", null, three)]))).toEqual([
      `${cardsPath}[0].components[1].buttons: 1 to 2 buttons per card (got 3)`,
      `${cardsPath}[1].components[1].buttons: 1 to 2 buttons per card (got 3)`
    ])
    const coupon = buttons({ type: "COPY_CODE", example: "A" })
    expect(errorsOf(carousel([card("IMAGE", null, coupon), card("IMAGE", null, coupon)]))).toEqual([
      `${cardsPath}[0].components[1].buttons[0].type: a carousel card cannot have a COPY_CODE button (allowed: QUICK_REPLY, URL, PHONE_NUMBER)`,
      `${cardsPath}[1].components[1].buttons[0].type: a carousel card cannot have a COPY_CODE button (allowed: QUICK_REPLY, URL, PHONE_NUMBER)`
    ])
  })

  it("only a body beside the cards, and only in MARKETING templates", () => {
    const value = carousel([card(), card()])
    const components = value.components as ReadonlyArray<Json>
    expect(errorsOf({ ...value, components: [imageHeader, ...components] })).toEqual(["components: a carousel template cannot have a HEADER component"])
    expect(errorsOf(carousel([card(), card()], "UTILITY"))).toEqual([
      "category: a carousel template must be MARKETING (Meta offers media card carousels for marketing templates only)"
    ])
  })
})

describe("WhatsApp template creation: warnings", () => {
  it("a UTILITY template that reads like marketing", () => {
    expect(warningsOf(template([body("Your order has shipped. Enjoy 20% off and a free gift with the next purchase.")], { category: "UTILITY" }))).toEqual([
      `category: this UTILITY template reads like marketing ("20% off", "free gift"); Meta may recategorise it as MARKETING, which is billed as marketing`
    ])
    expect(warningsOf(template([body("Enjoy 20% off and a free gift with the next purchase.")]))).toEqual([])
  })

  it("a body starting or ending with a placeholder, or with many placeholders for little text", () => {
    expect(warningsOf(template([body("Your order number for this week is {{1}}.", ["A1"])]))).toEqual([
      "components[0].text: the text ends with a placeholder; Meta often rejects such templates"
    ])
    expect(warningsOf(template([body("{{1}}, welcome to our shop and thanks for joining us.", ["Asha"])]))).toEqual([
      "components[0].text: the text starts with a placeholder; Meta often rejects such templates"
    ])
    expect(warningsOf(template([body("Hi {{1}} {{2}} at {{3}} ok", ["a", "b", "c"])]))).toEqual([
      "components[0].text: two placeholders stand side by side; Meta often rejects such templates",
      "components[0].text: 3 placeholders for 3 words of text; Meta rejects templates with too many placeholders for their length (keep at least 7 other words)"
    ])
  })

  it("fields Herald does not submit, and samples for text without placeholders", () => {
    expect(warningsOf({ ...VALID.text, allow_category_change: true })).toEqual(["allow_category_change: ignored; Herald does not submit it"])
    expect(warningsOf(template([{ ...PLAIN_BODY, example: { body_text: [["x"]] } }]))).toEqual(["components[0].example: ignored; the text has no placeholders"])
  })
})
