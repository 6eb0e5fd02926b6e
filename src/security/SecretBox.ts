import { Effect, Redacted } from "effect"
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto"
import { AppConfig } from "../config/AppConfig.ts"

const VERSION = "v1"

/**
 * Secrets Herald must read back to use them (a customer's Meta access token), sealed at rest with
 * AES-256-GCM under a key derived from HERALD_SECRETS_KEY: a database dump alone does not reveal
 * them, and a sealed value altered in place fails to open instead of decrypting to garbage.
 * Sealed form: `v1.<iv>.<tag>.<ciphertext>`, base64url.
 */
export class SecretBox extends Effect.Service<SecretBox>()("herald/security/SecretBox", {
  effect: Effect.map(AppConfig, (config) => {
    const key = Buffer.from(hkdfSync("sha256", Redacted.value(config.secretsKey), "herald", "secret-box-v1", 32))

    const seal = (plain: string): string => {
      const iv = randomBytes(12)
      const cipher = createCipheriv("aes-256-gcm", key, iv)
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()])
      return [VERSION, iv, cipher.getAuthTag(), body].map((part) => (typeof part === "string" ? part : part.toString("base64url"))).join(".")
    }

    /** The plain secret, or undefined when it was sealed under another key or altered. */
    const open = (sealed: string): string | undefined => {
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

    return { seal, open } as const
  })
}) {}
