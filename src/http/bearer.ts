/**
 * The credential of an `Authorization: Bearer <credential>` header, or what is wrong with the
 * header in words its sender can act on (missing, another scheme, nothing after the scheme). The
 * platform's Bearer decoding cuts seven characters off whatever is there, so `Basic …` or a bare
 * key would arrive as a mangled credential and be refused as unknown.
 */
export type BearerRead = { readonly credential: string } | { readonly problem: string }

const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i
const SCHEME = /^([A-Za-z][A-Za-z0-9_-]*)(?:[ \t]|$)/

export const readBearer = (header: string | undefined): BearerRead => {
  if (header === undefined || header.trim() === "") {
    return { problem: "the Authorization header is missing: send Authorization: Bearer <credential>" }
  }
  const match = BEARER.exec(header)
  if (match !== null) return { credential: match[1]! }
  const scheme = SCHEME.exec(header)?.[1]
  if (scheme !== undefined && scheme.toLowerCase() === "bearer") {
    return { problem: "Authorization: Bearer must be followed by one credential" }
  }
  if (scheme !== undefined && header.trim().includes(" ")) {
    return { problem: `Authorization uses the ${scheme} scheme; this API takes Bearer <credential>` }
  }
  return { problem: "Authorization has no scheme: send Authorization: Bearer <credential>" }
}
