import { Redacted } from "effect"
import { createHmac, hkdfSync } from "node:crypto"
import { safeEqual } from "./secrets.ts"

/**
 * Opaque list cursors that cannot be edited: the values a cursor carries (JSON, base64url), a dot,
 * and an HMAC-SHA256 (128 bits, base64url) of a scope and that body under a key derived from
 * HERALD_SECRETS_KEY for one `purpose`. The scope names whose list the cursor belongs to (a list and
 * a tenant): a cursor moved to another scope fails its MAC as an edited one does. Used by the
 * partner e-mail lists (email/cursorPage.ts) and the accounts' lists (storage/ListCursors.ts).
 */
export const cursorSigner = (secretsKey: Redacted.Redacted<string>, purpose: string) => {
  const key = Buffer.from(hkdfSync("sha256", Redacted.value(secretsKey), "herald", purpose, 32))
  const mac = (scope: string, body: string) => createHmac("sha256", key).update(`${scope}\n${body}`).digest("base64url").slice(0, 22)

  return {
    sign: (scope: string, values: ReadonlyArray<unknown>): string => {
      const body = Buffer.from(JSON.stringify(values)).toString("base64url")
      return `${body}.${mac(scope, body)}`
    },
    /** The values of a cursor signed for `scope`, or undefined (edited, another scope's, no cursor at all). */
    open: (scope: string, cursor: string): ReadonlyArray<unknown> | undefined => {
      const dot = cursor.indexOf(".")
      if (dot <= 0) return undefined
      const body = cursor.slice(0, dot)
      if (!safeEqual(cursor.slice(dot + 1), mac(scope, body))) return undefined
      try {
        const values: unknown = JSON.parse(Buffer.from(body, "base64url").toString("utf8"))
        return Array.isArray(values) ? values : undefined
      } catch {
        return undefined
      }
    }
  }
}
