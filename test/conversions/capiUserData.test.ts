import { describe, expect, it } from "@effect/vitest"
import { createHash } from "node:crypto"
import {
  hashUserField,
  normalizeEmail,
  normalizePhone,
  sha256Hex,
  type UserDataField
} from "../../src/conversions/capiUserData.ts"

// Expected digests are computed here from the literal normalised string, independently of the module,
// so each assertion pins the normalisation and not merely the hashing.
const h = (normalized: string): string => createHash("sha256").update(normalized, "utf8").digest("hex")

const FIELDS: ReadonlyArray<UserDataField> = ["em", "ph", "fn", "ln", "ct", "st", "zp", "country", "ge", "db", "external_id"]

describe("Meta's published examples", () => {
  // Source: Meta, "Customer Information Parameters", Conversions API
  // https://developers.facebook.com/docs/marketing-api/conversions-api/parameters/customer-information-parameters
  //   em  Input: John_Smith@gmail.com  Normalized format: john_smith@gmail.com
  //       Expected SHA256 output: 62a14e44f765419d10fea99367361a727c12365e2520f32218d505ed9aa0f62f
  //   ph  Input: US phone number (650)555-1212  Normalized format: 16505551212
  //       Expected SHA256 output: e323ec626319ca94ee8bff2e4c87cf613be6ea19919ed1364124e16807ab3176
  //   fn  Input: Mary -> mary: 6915771be1c5aa0c886870b6951b03d7eafc121fea0e80a5ea83beb7c449f4ec
  //       Input: 정 -> 정: 8fa8cd9c440be61d0151429310034083132b35975c4bea67fdd74158eb51db14
  //       Input: Valéry -> valéry: 08e1996b5dd49e62a4b4c010d44e4345592a863bb9f8e3976219bac29417149c
  it("e-mail", () => {
    expect(normalizeEmail("John_Smith@gmail.com")).toBe("john_smith@gmail.com")
    expect(hashUserField("em", "John_Smith@gmail.com")).toBe("62a14e44f765419d10fea99367361a727c12365e2520f32218d505ed9aa0f62f")
  })

  it("phone, once the country code is part of the input", () => {
    // Meta's example input has no country code; its "16505551212" adds the US "1" from the words
    // "US phone number". Nothing can infer that from the digits, so the caller must supply it.
    expect(normalizePhone("+1 (650) 555-1212")).toBe("16505551212")
    expect(hashUserField("ph", "+1 (650) 555-1212")).toBe("e323ec626319ca94ee8bff2e4c87cf613be6ea19919ed1364124e16807ab3176")
    expect(hashUserField("ph", "(650)555-1212")).toBe(h("6505551212"))
  })

  it("first names, including non-Latin and accented ones hashed as UTF-8", () => {
    expect(hashUserField("fn", "Mary")).toBe("6915771be1c5aa0c886870b6951b03d7eafc121fea0e80a5ea83beb7c449f4ec")
    expect(hashUserField("fn", "정")).toBe("8fa8cd9c440be61d0151429310034083132b35975c4bea67fdd74158eb51db14")
    expect(hashUserField("fn", "Valéry")).toBe("08e1996b5dd49e62a4b4c010d44e4345592a863bb9f8e3976219bac29417149c")
  })
})

describe("normalizeEmail", () => {
  it("trims surrounding whitespace and lowercases", () => {
    expect(normalizeEmail("  John.Smith+Promo@Example.COM \n")).toBe("john.smith+promo@example.com")
    expect(normalizeEmail("\tUSER@SUB.EXAMPLE.CO.UK ")).toBe("user@sub.example.co.uk")
    expect(hashUserField("em", "  JOHN_SMITH@Gmail.Com\t")).toBe(h("john_smith@gmail.com"))
  })

  it("refuses what the SDK's regex refuses", () => {
    for (const bad of [
      "",
      "   ",
      "john",
      "john@",
      "@example.com",
      "john@example",
      "john smith@example.com",
      "john@@example.com",
      "john@exa_mple.com",
      "john@-example.com",
      "john@example-.com",
      ".john@example.com",
      "john.@example.com",
      "john..smith@example.com",
      "jöhn@example.com",
      "john@example.com."
    ]) {
      expect(normalizeEmail(bad), bad).toBeUndefined()
      expect(hashUserField("em", bad), bad).toBeUndefined()
    }
  })

  it("keeps the SDK regex's quirk of admitting ':' before a dot in the local part", () => {
    expect(normalizeEmail("a:.b@example.com")).toBe("a:.b@example.com")
  })
})

describe("normalizePhone", () => {
  it("keeps digits only: '+', spaces, dashes, parentheses and dots go", () => {
    for (const raw of ["+1 (650) 555-1212", "1-650-555-1212", "+1 650.555.1212", "(+1) 650 555 1212", " 16505551212 "]) {
      expect(normalizePhone(raw), raw).toBe("16505551212")
    }
    expect(normalizePhone("+44 7911 123456")).toBe("447911123456")
  })

  it("drops an international '00' prefix and a national trunk '0', as the SDK does", () => {
    expect(normalizePhone("0091 98765 43210")).toBe("919876543210")
    expect(normalizePhone("+91 98765-43210")).toBe("919876543210")
    expect(normalizePhone("0044 (7911) 123-456")).toBe("447911123456")
    expect(normalizePhone("001 650 555 1212")).toBe("16505551212")
    expect(normalizePhone("07911 123456")).toBe("7911123456")
    expect(hashUserField("ph", "0091 98765 43210")).toBe(h("919876543210"))
  })

  it("refuses a number that would still start with 0, which no country code does", () => {
    expect(normalizePhone("000 44 7911 123456")).toBeUndefined()
    expect(normalizePhone("00 12345")).toBeUndefined()
  })

  it("accepts 7 to 15 digits and refuses anything shorter or longer", () => {
    expect(normalizePhone("234-5678")).toBe("2345678")
    expect(normalizePhone("+234 567 890 123 456")).toBe("234567890123456")
    expect(normalizePhone("23456")).toBeUndefined()
    expect(normalizePhone("234-567")).toBeUndefined()
    expect(normalizePhone("+234 567 890 123 4567")).toBeUndefined()
    expect(normalizePhone("00 234 567")).toBeUndefined()
    expect(hashUserField("ph", "234-567")).toBeUndefined()
  })

  it("refuses values with no digits", () => {
    for (const bad of ["", "  ", "phone", "+-() "]) {
      expect(normalizePhone(bad), bad).toBeUndefined()
    }
  })
})

describe("already hashed values", () => {
  const digest = h("john_smith@gmail.com")

  it("pass through unchanged in every field, lowercased and trimmed", () => {
    for (const field of FIELDS) {
      expect(hashUserField(field, digest), field).toBe(digest)
      expect(hashUserField(field, ` ${digest.toUpperCase()} `), field).toBe(digest)
    }
  })

  it("means exactly 64 hex characters: anything else is normalised like any value", () => {
    expect(hashUserField("external_id", digest.slice(1))).toBe(h(digest.slice(1)))
    expect(hashUserField("em", digest.slice(1))).toBeUndefined()
    // An MD5 digest is not passed through (the Node SDK would; Meta's docs ask for SHA-256).
    const md5 = createHash("md5").update("user-42").digest("hex")
    expect(hashUserField("external_id", md5)).toBe(h(md5))
  })
})

describe("other fields, normalised as the SDK does before hashing", () => {
  it("fn and ln: trimmed and lowercased only; the SDK keeps punctuation", () => {
    expect(hashUserField("fn", "  MARY ")).toBe(h("mary"))
    expect(hashUserField("ln", " O'Brien-Smith ")).toBe(h("o'brien-smith"))
  })

  it("ct and st: digits, whitespace, parentheses, dots and dashes removed", () => {
    expect(hashUserField("ct", "Menlo Park")).toBe(h("menlopark"))
    expect(hashUserField("ct", " St. Louis ")).toBe(h("stlouis"))
    expect(hashUserField("ct", "Winston-Salem (NC) 27101")).toBe(h("winstonsalemnc"))
    expect(hashUserField("ct", "São Paulo")).toBe(h("sãopaulo"))
    expect(hashUserField("st", "CA")).toBe(h("ca"))
    expect(hashUserField("st", " New York ")).toBe(h("newyork"))
    expect(hashUserField("st", "N.Y.")).toBe(h("ny"))
  })

  it("ct and st: refused when nothing is left", () => {
    expect(hashUserField("ct", "12345")).toBeUndefined()
    expect(hashUserField("st", "(-.)")).toBeUndefined()
  })

  it("zp: whitespace removed, cut at the first dash, at least 2 characters", () => {
    expect(hashUserField("zp", "94035-1234")).toBe(h("94035"))
    expect(hashUserField("zp", " 94035 ")).toBe(h("94035"))
    expect(hashUserField("zp", "M1 1AE")).toBe(h("m11ae"))
    expect(hashUserField("zp", "75 018")).toBe(h("75018"))
    expect(hashUserField("zp", "1")).toBeUndefined()
    expect(hashUserField("zp", "-1234")).toBeUndefined()
  })

  it("country: lowercase ISO 3166-1 alpha-2 codes only", () => {
    expect(hashUserField("country", "US")).toBe(h("us"))
    expect(hashUserField("country", "us")).toBe("79adb2a2fce5c6ba215fe5f27f532d4e7edbac4b6a5e09e1ef3a08084a904621")
    expect(hashUserField("country", " gb ")).toBe(h("gb"))
    for (const bad of ["United States", "usa", "uk", "xx", "u.s.", "u s"]) {
      expect(hashUserField("country", bad), bad).toBeUndefined()
    }
  })

  it("ge: letters only, then f/female to 'f' and m/male to 'm'; anything else refused", () => {
    for (const raw of ["F", "f", " Female ", "FEMALE", "f.", "fe-male"]) {
      expect(hashUserField("ge", raw), raw).toBe(h("f"))
    }
    for (const raw of ["M", "male", " Male "]) {
      expect(hashUserField("ge", raw), raw).toBe(h("m"))
    }
    for (const bad of ["x", "woman", "fem", "other", "1"]) {
      expect(hashUserField("ge", bad), bad).toBeUndefined()
    }
  })

  it("db: trimmed and lowercased only, never reformatted, so callers must pass YYYYMMDD", () => {
    expect(hashUserField("db", " 19970216 ")).toBe("01acdbf6ec7b4f478a225f1a246e5d6767eeab1a7ffa17f025265b5b94f40f0c")
    expect(hashUserField("db", "19970216")).toBe(h("19970216"))
    expect(hashUserField("db", "1997-02-16")).toBe(h("1997-02-16"))
  })

  it("external_id: trimmed, lowercased and hashed", () => {
    expect(hashUserField("external_id", "  User-42 ")).toBe(h("user-42"))
  })

  it("every field refuses an empty or blank value", () => {
    for (const field of FIELDS) {
      expect(hashUserField(field, ""), field).toBeUndefined()
      expect(hashUserField(field, " \t\n"), field).toBeUndefined()
    }
  })
})

describe("sha256Hex", () => {
  it("is lowercase hex SHA-256 (FIPS 180-2 'abc' vector)", () => {
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
  })
})
