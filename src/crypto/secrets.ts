import { createHash, randomBytes, timingSafeEqual } from "node:crypto"

/** SHA-256, hex: for high-entropy secrets (API keys, recovery codes), where a slow hash adds nothing. */
export const sha256 = (value: string): string => createHash("sha256").update(value).digest("hex")

/** Constant-time comparison of two strings (false when lengths differ). */
export const safeEqual = (a: string, b: string): boolean => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

const ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"

/** A random code of `length` characters from an unambiguous alphabet (no 0/o, 1/l/i). */
export const randomCode = (length: number): string => {
  const bytes = randomBytes(length * 2)
  let out = ""
  for (let i = 0; out.length < length && i < bytes.length; i++) {
    // Rejection sampling keeps every character equally likely.
    if (bytes[i]! < 256 - (256 % ALPHABET.length)) out += ALPHABET[bytes[i]! % ALPHABET.length]
  }
  return out.length === length ? out : randomCode(length)
}
