import { describe, expect, it } from "@effect/vitest"
import * as OTPAuth from "otpauth"
import { generateTotp, newTotpSecret, verifyTotp } from "../../src/security/Totp.ts"

// RFC 6238, appendix B: SHA-1, seed "12345678901234567890", 8 digits, 30 s steps.
const RFC_SECRET = OTPAuth.Secret.fromUTF8("12345678901234567890").base32
const VECTORS: ReadonlyArray<[number, string]> = [
  [59, "94287082"],
  [1111111109, "07081804"],
  [1111111111, "14050471"],
  [1234567890, "89005924"],
  [2000000000, "69279037"],
  [20000000000, "65353130"]
]

describe("TOTP", () => {
  for (const [seconds, expected] of VECTORS) {
    it(`matches the RFC 6238 vector at T=${seconds}`, () => {
      expect(generateTotp(RFC_SECRET, seconds * 1000, 8)).toBe(expected)
    })
  }

  it("accepts the current code and one step either side, nothing further", () => {
    const secret = newTotpSecret()
    const now = 1_700_000_000_000
    expect(verifyTotp(secret, generateTotp(secret, now), now)).toBe(true)
    expect(verifyTotp(secret, generateTotp(secret, now - 30_000), now)).toBe(true)
    expect(verifyTotp(secret, generateTotp(secret, now + 30_000), now)).toBe(true)
    expect(verifyTotp(secret, generateTotp(secret, now - 60_000), now)).toBe(false)
    expect(verifyTotp(secret, generateTotp(secret, now + 60_000), now)).toBe(false)
    expect(verifyTotp(secret, "12345", now)).toBe(false)
    expect(verifyTotp(secret, "abcdef", now)).toBe(false)
  })
})
