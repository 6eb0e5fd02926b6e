import { SECRET_KEY_PREFIX } from "../security/SecretKeys.ts"

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

/** The scheme a secret-key surface names. */
export type SecretKeyScheme = "Bearer" | "Basic"

const TWO_SCHEMES = /^(bearer|basic)[ \t]+(\S+)[ \t]*$/i

/** Whether a credential is a secret key, raw or base64 of `key:` (or of the key alone). */
export const isSecretKeyCredential = (credential: string): boolean => {
  if (credential.startsWith(SECRET_KEY_PREFIX)) return true
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(credential)) return false
  return Buffer.from(credential, "base64").toString("utf8").startsWith(SECRET_KEY_PREFIX)
}

/** How the surface's scheme is written, for the words of a refusal. */
export const secretKeySchemeText = (scheme: SecretKeyScheme) => `Authorization: ${scheme} <secret key> (sk_live_…)`

/**
 * The secret key (`sk_live_…`) of an Authorization header on a surface that takes it as `scheme`:
 * /api/v1/app and GraphQL take Bearer, /api/v1/public takes Basic (contract, Authentication 15 and
 * 16). The same key sent with the other of the two schemes is taken too: a credential that is a
 * secret key, raw or as base64 of `key:` (or of the key alone), can mean nothing else. Anything
 * else (no header, another scheme, a credential that is no secret key such as a user token) is a
 * problem whose words name the scheme the surface takes, so that a good key sent the wrong way
 * never reads as a bad key; only a secret key no account has is "Invalid or revoked".
 */
export const readSecretKey = (header: string | undefined, scheme: SecretKeyScheme): BearerRead => {
  const expected = `send ${secretKeySchemeText(scheme)}`
  if (header === undefined || header.trim() === "") return { problem: `the Authorization header is missing: ${expected}` }
  const match = TWO_SCHEMES.exec(header)
  if (match !== null) {
    const [, given, credential] = match
    if (isSecretKeyCredential(credential!)) return { credential: credential! }
    return given!.toLowerCase() === scheme.toLowerCase()
      ? { problem: `the credential is not a secret key (sk_live_…, under Settings, Developer): ${expected}` }
      : { problem: `Authorization uses the ${given} scheme with a credential that is not a secret key: ${expected}` }
  }
  const named = SCHEME.exec(header)?.[1]
  if (named !== undefined && /^(bearer|basic)$/i.test(named)) return { problem: `Authorization: ${named} must be followed by one credential: ${expected}` }
  if (named !== undefined && header.trim().includes(" ")) return { problem: `Authorization uses the ${named} scheme: ${expected}` }
  return { problem: `Authorization has no scheme: ${expected}` }
}
