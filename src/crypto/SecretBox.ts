import { Effect, Option, Redacted } from "effect"
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto"
import { AppConfig } from "../config/AppConfig.ts"

const VERSION = "v1"
/** Every sealed value starts with this; a plain secret Herald stores never does (whsec_…, base32, JSON). */
export const SEALED_PREFIX = `${VERSION}.`
const SEALED = /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/

/** Whether a stored value has the sealed form (it may still not open: another key, or altered). */
export const isSealed = (stored: string): boolean => SEALED.test(stored)

const deriveKey = (secret: Redacted.Redacted<string>) => Buffer.from(hkdfSync("sha256", Redacted.value(secret), "herald", "secret-box-v1", 32))

const openWith = (key: Buffer, sealed: string): string | undefined => {
  const [version, iv, tag, body] = sealed.split(".")
  if (version !== VERSION || iv === undefined || tag === undefined || body === undefined) return undefined
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"))
    decipher.setAuthTag(Buffer.from(tag, "base64url"))
    return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8")
  } catch {
    return undefined
  }
}

/** What opening a sealed value found: its plain text, and whether the current key sealed it. */
export interface Unsealed {
  readonly plain: string
  readonly current: boolean
}

/**
 * A box over HERALD_SECRETS_KEY (seals and opens) and, while it is being rotated,
 * HERALD_SECRETS_KEY_PREVIOUS (opens only). Pure, so the start-up sealing step and tests can make
 * one from settings without the service.
 */
export const makeSecretBox = (secretsKey: Redacted.Redacted<string>, previousKey: Option.Option<Redacted.Redacted<string>> = Option.none()) => {
  const key = deriveKey(secretsKey)
  const previous = Option.map(previousKey, deriveKey)

  const seal = (plain: string): string => {
    const iv = randomBytes(12)
    const cipher = createCipheriv("aes-256-gcm", key, iv)
    const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()])
    return [VERSION, iv, cipher.getAuthTag(), body].map((part) => (typeof part === "string" ? part : part.toString("base64url"))).join(".")
  }

  /** The plain secret and which key opened it; undefined when neither key sealed it, or it was altered. */
  const unseal = (sealed: string): Unsealed | undefined => {
    const plain = openWith(key, sealed)
    if (plain !== undefined) return { plain, current: true }
    if (Option.isNone(previous)) return undefined
    const old = openWith(previous.value, sealed)
    return old === undefined ? undefined : { plain: old, current: false }
  }

  /** The plain secret, or undefined when it was sealed under another key or altered. */
  const open = (sealed: string): string | undefined => unseal(sealed)?.plain

  /**
   * A stored value of a column sealed since migration 0037: opened when sealed, as it is when a
   * node older than 0037 wrote it plain and the start-up step has not sealed it yet.
   */
  const reveal = (stored: string): string | undefined => (isSealed(stored) ? open(stored) : stored)

  return { seal, open, unseal, reveal, rotating: Option.isSome(previous) } as const
}

export type SecretBoxApi = ReturnType<typeof makeSecretBox>

/** A sealed secret this node cannot open: its HERALD_SECRETS_KEY is not the key that sealed it. */
export class UnreadableSecret extends Error {
  constructor(what: string) {
    super(`the ${what} is sealed under a key this node does not have: HERALD_SECRETS_KEY (or HERALD_SECRETS_KEY_PREVIOUS while rotating) must be the key it was sealed with`)
    this.name = "UnreadableSecret"
  }
}

/**
 * Secrets Herald must read back to use them (a customer's Meta access token, webhook signing
 * secrets, TOTP seeds, the JWT signing key), sealed at rest with AES-256-GCM under a key derived
 * from HERALD_SECRETS_KEY: a database dump alone does not reveal them, and a sealed value altered
 * in place fails to open instead of decrypting to garbage. Sealed form:
 * `v1.<iv>.<tag>.<ciphertext>`, base64url.
 */
export class SecretBox extends Effect.Service<SecretBox>()("herald/security/SecretBox", {
  effect: Effect.map(AppConfig, (config) => {
    const box = makeSecretBox(config.secretsKey, config.secretsKeyPrevious)
    /** `reveal`, where a value that does not open is a defect (the node's key is wrong), named by `what`. */
    const revealOrDie = (stored: string, what: string): Effect.Effect<string> => {
      const plain = box.reveal(stored)
      return plain === undefined ? Effect.die(new UnreadableSecret(what)) : Effect.succeed(plain)
    }
    return { ...box, revealOrDie } as const
  })
}) {}
