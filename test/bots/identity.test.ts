import { describe, expect, it } from "@effect/vitest"
import { normaliseBrandWebsite } from "../../src/bots/brandWebsite.ts"
import { gstinCheckCharacter, parseGstin } from "../../src/bots/gstin.ts"

// Published GSTINs of well-known companies: their check characters are the reference.
const REAL = ["27AAPFU0939F1ZV", "29AAGCB7383J1Z4", "24AAACC1206D1ZM", "27AAACR5055K1Z7", "09AAACH7409R1ZZ"]

describe("GSTIN", () => {
  it("accepts published GSTINs, in any case and with spaces", () => {
    for (const g of REAL) expect(parseGstin(g)).toEqual({ gstin: g })
    expect(parseGstin(" 27aapfu0939f1zv ")).toEqual({ gstin: "27AAPFU0939F1ZV" })
    expect(parseGstin("27 AAPFU 0939 F1ZV")).toEqual({ gstin: "27AAPFU0939F1ZV" })
  })

  it("refuses any other check character", () => {
    for (const g of REAL) {
      for (const c of "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
        if (c === g[14]) continue
        expect(parseGstin(g.slice(0, 14) + c)).toEqual({ problem: "check character does not match: mistyped GSTIN" })
      }
    }
  })

  it("refuses a transposition of two characters of the PAN", () => {
    expect("problem" in parseGstin("27AAPFU0993F1ZV")).toBe(true)
  })

  it("names what is wrong: length, shape, state code", () => {
    expect(parseGstin("27AAPFU0939F1Z")).toEqual({ problem: "a GSTIN has 15 characters" })
    expect(parseGstin("27AAPFU0939F1ZVX")).toEqual({ problem: "a GSTIN has 15 characters" })
    expect((parseGstin("2AAAPFU0939F1ZV") as { problem: string }).problem).toMatch(/^not a GSTIN/)
    expect((parseGstin("27AAPF10939F1ZV") as { problem: string }).problem).toMatch(/^not a GSTIN/)
    expect((parseGstin("27AAPFU0939F0ZV") as { problem: string }).problem).toMatch(/^not a GSTIN/)
    for (const state of ["00", "39", "96", "98"]) {
      const first14 = `${state}AAPFU0939F1Z`
      expect(parseGstin(first14 + gstinCheckCharacter(first14))).toEqual({ problem: `unknown state code ${state}` })
    }
    for (const state of ["01", "38", "97", "99"]) {
      const first14 = `${state}AAPFU0939F1Z`
      expect(parseGstin(first14 + gstinCheckCharacter(first14))).toEqual({ gstin: first14 + gstinCheckCharacter(first14) })
    }
  })
})

describe("brand website", () => {
  it("one site whatever the scheme, case, www and trailing slash", () => {
    const site = (input: string) => (normaliseBrandWebsite(input) as { site: string }).site
    for (const input of ["brand.com", "https://brand.com", "http://www.brand.com/", "HTTPS://WWW.Brand.COM//", "brand.com/?utm=x#top", "https://brand.com:443/"]) {
      expect(site(input)).toBe("brand.com")
    }
    expect(site("https://brand.com/in")).toBe("brand.com/in")
    expect(site("https://brand.com:8443")).toBe("brand.com:8443")
    expect(site("https://shop.brand.com")).toBe("shop.brand.com")
  })

  it("keeps the address the applicant gave, tidied", () => {
    expect(normaliseBrandWebsite("WWW.Brand.com/")).toEqual({ site: "brand.com", url: "https://www.brand.com" })
  })

  it("refuses what is not a website", () => {
    for (const input of ["", "   ", "localhost", "ftp://brand.com", "https://user:pw@brand.com", "http://", "not a url"]) {
      expect("problem" in normaliseBrandWebsite(input)).toBe(true)
    }
  })
})
