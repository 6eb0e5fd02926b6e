import { Effect } from "effect"
import { parsePhoneNumberFromString } from "libphonenumber-js/max"
import { InvalidRequest } from "../domain/errors.ts"

// A number written in ASCII holds only these; anything else ASCII (letters: vanity numbers and
// extensions are not recipients) is refused before libphonenumber, which spends about 11 µs on any
// input, and an import of garbage rows is mostly that. Other scripts' digits and dashes are left
// to libphonenumber.
const ASCII_PHONE = /^[0-9 ()+.\-/]*$/
const ASCII = /^[\x00-\x7f]*$/

/**
 * A recipient's number as E.164 (`+` and digits). Clients write it with or without the `+`, with
 * the country code; spaces, dashes and brackets are tolerated. The number must be a valid one for
 * its country (libphonenumber's metadata), not only the right length.
 */
export const toE164 = (raw: string): { readonly e164: string } | { readonly problem: string } => {
  const trimmed = raw.trim()
  if (trimmed.length === 0 || trimmed.length > 32) return { problem: "must be a phone number with its country code" }
  if (ASCII.test(trimmed) && !ASCII_PHONE.test(trimmed)) return { problem: "must be a phone number with its country code, e.g. +919876543210" }
  const international = trimmed.startsWith("+") || trimmed.startsWith("00")
  const withPlus = trimmed.startsWith("+") ? trimmed : trimmed.startsWith("00") ? `+${trimmed.slice(2)}` : `+${trimmed}`
  const parsed = parsePhoneNumberFromString(withPlus)
  if (parsed !== undefined && parsed.isValid()) return { e164: parsed.number }
  // Written without a country code (a national number, often with a leading 0): say so, rather
  // than read its first digits as a country's.
  if (!international) {
    const national = nationalReading(trimmed)
    if (national !== undefined) {
      return { problem: `has no country code: write it with + and its country code (${national.number} if it is a number in ${national.country})` }
    }
    if (trimmed.startsWith("0")) return { problem: "has no country code: write it with + and its country code, e.g. +919876543210" }
  }
  if (parsed === undefined) return { problem: "must be a phone number with its country code, e.g. +919876543210" }
  return { problem: `${parsed.number} is not a valid phone number` }
}

// Where Herald's senders are: a number valid in one of these without a country code was most
// likely written without one.
const NATIONAL_REGIONS = { IN: "India", US: "the US", GB: "the UK", AE: "the UAE", SG: "Singapore", ID: "Indonesia", BR: "Brazil" } as const

const nationalReading = (text: string) => {
  for (const [region, country] of Object.entries(NATIONAL_REGIONS)) {
    const parsed = parsePhoneNumberFromString(text, region as keyof typeof NATIONAL_REGIONS)
    if (parsed?.isValid() === true) return { number: parsed.number, country }
  }
  return undefined
}

/** A client's phone field as E.164, or the 400 naming the field (`path`) that holds it. */
export const readE164 = (raw: string, path: string): Effect.Effect<string, InvalidRequest> => {
  const phone = toE164(raw)
  return "problem" in phone ? Effect.fail(InvalidRequest.single(path, phone.problem)) : Effect.succeed(phone.e164)
}
