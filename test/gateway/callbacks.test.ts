import { createHmac } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { encodeRbmCallback, readRbmCallback, verifyRbmSignature } from "../../src/gateway/rbm/callbacks.ts"

const TOKEN = "client-token-for-tests"

/** A callback as Google signs it, computed here independently of the code under test. */
const googleCallback = (event: object, token = TOKEN) => {
  const data = Buffer.from(JSON.stringify(event))
  return {
    body: JSON.stringify({ message: { data: data.toString("base64"), messageId: "123", publishTime: "2025-01-01T00:00:00Z" }, subscription: "s" }),
    signature: createHmac("sha512", token).update(data).digest("base64")
  }
}

const delivered = {
  senderPhoneNumber: "+919800000000",
  eventType: "DELIVERED",
  eventId: "ev-1",
  messageId: "msg-1",
  sendTime: "2025-03-04T05:06:07.123Z",
  agentId: "bot-1"
}

describe("RBM callback signature", () => {
  it("accepts a callback signed with the client token", () => {
    const { body, signature } = googleCallback(delivered)
    const read = readRbmCallback(body, signature, TOKEN)
    expect(read).toEqual({
      _tag: "Report",
      report: {
        _tag: "Status",
        eventId: "ev-1",
        messageId: "msg-1",
        agentId: "bot-1",
        phone: "+919800000000",
        status: "delivered",
        at: Date.parse("2025-03-04T05:06:07.123Z")
      }
    })
  })

  it("rejects a tampered body, a wrong token, and a missing signature", () => {
    const { body, signature } = googleCallback(delivered)
    const tampered = body.replace(
      JSON.parse(body).message.data,
      Buffer.from(JSON.stringify({ ...delivered, eventType: "READ" })).toString("base64")
    )
    expect(readRbmCallback(tampered, signature, TOKEN)._tag).toBe("BadSignature")
    expect(readRbmCallback(body, signature, "another-token")._tag).toBe("BadSignature")
    expect(readRbmCallback(body, undefined, TOKEN)._tag).toBe("BadSignature")
    expect(readRbmCallback(body, "bm90IGEgc2lnbmF0dXJl", TOKEN)._tag).toBe("BadSignature")
    const signedByOther = googleCallback(delivered, "another-token")
    expect(readRbmCallback(signedByOther.body, signedByOther.signature, TOKEN)._tag).toBe("BadSignature")
  })

  it("the simulator's encoder produces what Google's recipe verifies", () => {
    const event = JSON.stringify(delivered)
    const { body, signature } = encodeRbmCallback({ event, pubsubMessageId: "1", publishTime: "2025-01-01T00:00:00Z", subscription: "s", clientToken: TOKEN })
    const data = Buffer.from(JSON.parse(body).message.data, "base64")
    expect(data.toString("utf8")).toBe(event)
    expect(signature).toBe(createHmac("sha512", TOKEN).update(data).digest("base64"))
    expect(verifyRbmSignature(data, signature, TOKEN)).toBe(true)
    expect(verifyRbmSignature(data, signature, TOKEN + "x")).toBe(false)
  })
})

describe("RBM webhook verification handshake", () => {
  it("echoes the secret when the client token matches, refuses otherwise", () => {
    expect(readRbmCallback(JSON.stringify({ clientToken: TOKEN, secret: "1234567890" }), undefined, TOKEN)).toEqual({ _tag: "Handshake", secret: "1234567890" })
    expect(readRbmCallback(JSON.stringify({ clientToken: "SJENCPGJESMGUFPY", secret: "1" }), undefined, TOKEN)._tag).toBe("BadSignature")
  })
})

describe("RBM events as reports", () => {
  const read = (event: object) => {
    const { body, signature } = googleCallback(event)
    return readRbmCallback(body, signature, TOKEN)
  }

  it("READ is a read status with its eventId", () => {
    expect(read({ ...delivered, eventType: "READ", eventId: "ev-2" })).toMatchObject({ _tag: "Report", report: { _tag: "Status", status: "read", eventId: "ev-2", messageId: "msg-1" } })
  })

  it("typing and other user events are ignored", () => {
    expect(read({ senderPhoneNumber: "+1", eventType: "IS_TYPING", eventId: "e", agentId: "a" })).toMatchObject({ _tag: "Report", report: { _tag: "Ignored" } })
    expect(read({ senderPhoneNumber: "+1", eventType: "UNSUBSCRIBE", eventId: "e", agentId: "a" })).toMatchObject({ _tag: "Report", report: { _tag: "Ignored" } })
  })

  it("a user's text and a tapped suggestion are inbound messages", () => {
    expect(read({ senderPhoneNumber: "+15551234567", messageId: "um-1", sendTime: "2025-01-01T00:00:00Z", agentId: "bot-1", text: "hello" })).toEqual({
      _tag: "Report",
      report: { _tag: "Inbound", messageId: "um-1", agentId: "bot-1", phone: "+15551234567", text: "hello", at: Date.parse("2025-01-01T00:00:00Z") }
    })
    expect(read({ senderPhoneNumber: "+15551234567", messageId: "um-2", agentId: "bot-1", suggestionResponse: { postbackData: "yes_1", text: "Yes", type: "REPLY" } }))
      .toMatchObject({ _tag: "Report", report: { _tag: "Inbound", messageId: "um-2", text: "Yes", postbackData: "yes_1" } })
  })

  it("locations and files are ignored", () => {
    expect(read({ senderPhoneNumber: "+1", messageId: "m", agentId: "a", location: { latitude: 1, longitude: 2 } })).toMatchObject({ report: { _tag: "Ignored" } })
    expect(read({ senderPhoneNumber: "+1", messageId: "m", agentId: "a", userFile: { payload: {} } })).toMatchObject({ report: { _tag: "Ignored" } })
  })

  it("TTL_EXPIRATION_REVOKED is a failed status with a recipient error record; REVOKE_FAILED is ignored", () => {
    const expired = read({ phoneNumber: "+15550000006", agentId: "bot-1", messageId: "msg-6", eventType: "TTL_EXPIRATION_REVOKED", eventId: "ev-6", sendTime: "2025-01-01T00:00:00Z" })
    expect(expired).toMatchObject({
      _tag: "Report",
      report: { _tag: "Status", status: "failed", messageId: "msg-6", eventId: "ev-6", phone: "+15550000006", error: { success: false, category: "recipient", retryable: false } }
    })
    expect(expired._tag === "Report" && expired.report._tag === "Status" && expired.report.error?.message_id).toBeUndefined()
    expect(read({ phoneNumber: "+1", agentId: "a", messageId: "m", eventType: "TTL_EXPIRATION_REVOKE_FAILED", eventId: "e" })).toMatchObject({ report: { _tag: "Ignored" } })
  })

  it("shapes it cannot use are malformed, not guessed at", () => {
    expect(readRbmCallback("not json", undefined, TOKEN)._tag).toBe("Malformed")
    expect(readRbmCallback(JSON.stringify({ message: {} }), undefined, TOKEN)._tag).toBe("Malformed")
    expect(read({ ...delivered, messageId: undefined })._tag).toBe("Malformed")
    expect(read({ senderPhoneNumber: "+1", messageId: "m", agentId: "a" })._tag).toBe("Malformed")
    const notJson = Buffer.from("plain text")
    const body = JSON.stringify({ message: { data: notJson.toString("base64") } })
    expect(readRbmCallback(body, createHmac("sha512", TOKEN).update(notJson).digest("base64"), TOKEN)._tag).toBe("Malformed")
  })
})
