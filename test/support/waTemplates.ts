import type { TemplateKind } from "../../src/whatsapp/templates/templateRules.ts"

// One valid WhatsApp template of each of the six kinds, as created (Meta's component format) and as
// sent (Interakt's Template data), shared by the unit tests and the end-to-end test.

export type Json = Record<string, unknown>

export const HANDLE = "4::aW1hZ2UvanBn:ARYytyb0kLp5htbBB8vWlclG5M9gMBxiEyt4FNCvrueWBOmFmRAztEuNt"
export const IMAGE_URL = "https://cdn.example/spring.jpg"
export const imageHeader = { type: "HEADER", format: "IMAGE", example: { header_handle: [HANDLE] } }
export const body = (text: string, samples?: ReadonlyArray<string>): Json => ({ type: "BODY", text, ...(samples ? { example: { body_text: [samples] } } : {}) })
export const buttons = (...list: ReadonlyArray<Json>): Json => ({ type: "BUTTONS", buttons: list })
export const card = {
  components: [
    imageHeader,
    body("Rose {{1}} for your garden this spring", ["Red"]),
    buttons({ type: "QUICK_REPLY", text: "Tell me more" }, { type: "URL", text: "Buy", url: "https://shop.example/p/{{1}}", example: ["rose-red"] })
  ]
}

/** One valid creation body of each kind (the same shapes templateRules.test.ts checks). */
export const CREATION: Record<TemplateKind, Json> = {
  text: {
    name: "order_shipped",
    language: "en_US",
    category: "UTILITY",
    components: [
      { type: "HEADER", format: "TEXT", text: "Order {{1}} update", example: { header_text: ["A1234"] } },
      body("Hi {{1}}, your order {{2}} has shipped and should arrive within three days.", ["Asha", "A1234"]),
      { type: "FOOTER", text: "Reply STOP to stop updates" },
      buttons({ type: "QUICK_REPLY", text: "Where is it?" }, { type: "QUICK_REPLY", text: "Stop updates" })
    ]
  },
  media: {
    name: "spring_collection",
    language: "en_US",
    category: "MARKETING",
    components: [
      imageHeader,
      body("Hi {{1}}, our new collection is here. Use your code at checkout this week.", ["Asha"]),
      buttons(
        { type: "COPY_CODE", example: "SPRING25" },
        { type: "URL", text: "Get help", url: "https://shop.example/help" },
        { type: "PHONE_NUMBER", text: "Call us", phone_number: "919876543210" }
      )
    ]
  },
  auth: {
    name: "login_code",
    language: "en_US",
    category: "AUTHENTICATION",
    components: [
      { type: "BODY", add_security_recommendation: true },
      { type: "FOOTER", code_expiration_minutes: 10 },
      buttons({ type: "OTP", otp_type: "COPY_CODE", text: "Copy code" })
    ]
  },
  dynamic_cta: {
    name: "track_order",
    language: "en_US",
    category: "UTILITY",
    components: [
      body("Hi {{1}}, your order is on its way. Follow it with the button below.", ["Asha"]),
      buttons({ type: "URL", text: "Track order", url: "https://shop.example/track/{{1}}", example: ["A1234"] })
    ]
  },
  carousel: {
    name: "plant_carousel",
    language: "en_US",
    category: "MARKETING",
    components: [body("Hi {{1}}, these plants are back in stock this week.", ["Asha"]), { type: "CAROUSEL", cards: [card, card] }]
  },
  order_details: {
    name: "order_payment",
    language: "en_US",
    category: "UTILITY",
    components: [
      imageHeader,
      body("Hi {{1}}, your order of {{2}} is ready. Review it and pay below.", ["Asha", "Blue Elf Aloe"]),
      buttons({ type: "ORDER_DETAILS", text: "Review and pay" }, { type: "QUICK_REPLY", text: "Not now" })
    ]
  }
}

export const ORDER_DETAILS = {
  reference_id: "order.A1234-1",
  type: "digital-goods",
  currency: "INR",
  payment_settings: [{ type: "payment_gateway", payment_gateway: { type: "razorpay", configuration_name: "prod-razorpay" } }],
  total_amount: { value: 165000, offset: 100 },
  order: {
    status: "pending",
    items: [{ name: "Blue Elf Aloe", amount: { value: 200000, offset: 100 }, sale_amount: { value: 75000, offset: 100 }, quantity: 2 }],
    subtotal: { value: 150000, offset: 100 },
    shipping: { value: 20000, offset: 100 },
    tax: { value: 10000, offset: 100 },
    discount: { value: 15000, offset: 100, description: "Additional 10% off" }
  }
}

export const cardValues = (i: number) => ({ headerValues: [`https://cdn.example/card${i}.jpg`], bodyValues: ["Red"], buttonValues: { "0": [`MORE_${i}`], "1": ["rose-red"] } })

/** One valid send's data per kind (Interakt's Template shape). */
export const SEND_DATA: Record<TemplateKind, Json> = {
  text: { name: "order_shipped", languageCode: "en_US", headerValues: ["A1234"], bodyValues: ["Asha", "A1234"], buttonValues: { "1": ["STOP_UPDATES"] } },
  media: { name: "spring_collection", languageCode: "en_US", headerValues: [IMAGE_URL], bodyValues: ["Asha"], buttonValues: { "0": ["SPRING25"] } },
  auth: { name: "login_code", languageCode: "en_US", bodyValues: ["482913"] },
  dynamic_cta: { name: "track_order", languageCode: "en_US", bodyValues: ["Asha"], buttonValues: { "0": ["A1234"] } },
  carousel: { name: "plant_carousel", languageCode: "en_US", bodyValues: ["Asha"], carouselCards: [cardValues(0), cardValues(1)] },
  order_details: { name: "order_payment", languageCode: "en_US", headerValues: [IMAGE_URL], bodyValues: ["Asha", "Blue Elf Aloe"], orderDetails: ORDER_DETAILS }
}
