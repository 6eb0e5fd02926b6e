/**
 * Indian GST identification numbers (GSTIN): 15 characters — a two-digit state code, the holder's
 * PAN (5 letters, 4 digits, 1 letter), the registration's number within the state (1-9 or A-Z),
 * 'Z' by default, then a check character computed over the first 14 (base 36, weights 1 and 2
 * alternating, the digits of each product summed in base 36).
 */

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
const SHAPE = /^[0-9]{2}[A-Z]{5}[0-9]{4}[A-Z][1-9A-Z][A-Z][0-9A-Z]$/
/** 01-38 are the states and union territories; 97 "other territory", 99 the Centre's jurisdiction. */
const validState = (code: number) => (code >= 1 && code <= 38) || code === 97 || code === 99

export const gstinCheckCharacter = (first14: string): string => {
  let sum = 0
  for (let i = 0; i < 14; i++) {
    const product = ALPHABET.indexOf(first14[i]!) * (i % 2 === 0 ? 1 : 2)
    sum += Math.floor(product / 36) + (product % 36)
  }
  return ALPHABET[(36 - (sum % 36)) % 36]!
}

/** The GSTIN as stored (upper case, no spaces), or why it is not one. */
export const parseGstin = (input: string): { readonly gstin: string } | { readonly problem: string } => {
  const gstin = input.replace(/\s+/g, "").toUpperCase()
  if (gstin.length !== 15) return { problem: "a GSTIN has 15 characters" }
  if (!SHAPE.test(gstin)) return { problem: "not a GSTIN: expected 2-digit state code, PAN, entity code, 'Z' or a letter, check character" }
  if (!validState(Number(gstin.slice(0, 2)))) return { problem: `unknown state code ${gstin.slice(0, 2)}` }
  if (gstinCheckCharacter(gstin.slice(0, 14)) !== gstin[14]) return { problem: "check character does not match: mistyped GSTIN" }
  return { gstin }
}
