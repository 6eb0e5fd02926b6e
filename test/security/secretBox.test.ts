import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { AppConfig, type AppSettings } from "../../src/config/AppConfig.ts"
import { SecretBox } from "../../src/security/SecretBox.ts"

// SecretBox seals what Herald must read back (a CAPI access token): AES-256-GCM under a key
// derived from HERALD_SECRETS_KEY. No database needed: only the key setting is read.
const boxWith = (key: string) =>
  SecretBox.Default.pipe(Layer.provide(Layer.succeed(AppConfig, { secretsKey: Redacted.make(key) } as unknown as AppSettings)))

const KEY = "test-secret-box-key-0123456789abcdef"

describe("SecretBox", () => {
  it.effect("opens what it sealed; the sealed form shows nothing of the secret and differs every time", () =>
    Effect.gen(function*() {
      const box = yield* SecretBox
      const first = box.seal("EAAB-token-1234")
      const second = box.seal("EAAB-token-1234")
      expect(first).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/)
      expect(first).not.toContain("token")
      expect(first).not.toBe(second)
      expect(box.open(first)).toBe("EAAB-token-1234")
      expect(box.open(second)).toBe("EAAB-token-1234")
      expect(box.open(box.seal(""))).toBe("")
      expect(box.open(box.seal("ünïcødé ✓"))).toBe("ünïcødé ✓")
    }).pipe(Effect.provide(boxWith(KEY))))

  it.effect("an altered sealed value, or one that is not sealed at all, does not open", () =>
    Effect.gen(function*() {
      const box = yield* SecretBox
      const sealed = box.seal("EAAB-token-1234")
      const [version, iv, tag, body] = sealed.split(".") as [string, string, string, string]
      const flip = (part: string) => {
        const bytes = Buffer.from(part, "base64url")
        bytes[0] = bytes[0]! ^ 1
        return bytes.toString("base64url")
      }
      expect(box.open([version, iv, tag, flip(body)].join("."))).toBeUndefined()
      expect(box.open([version, iv, flip(tag), body].join("."))).toBeUndefined()
      expect(box.open([version, flip(iv), tag, body].join("."))).toBeUndefined()
      expect(box.open(["v2", iv, tag, body].join("."))).toBeUndefined()
      expect(box.open("EAAB-token-1234")).toBeUndefined()
      expect(box.open("v1...")).toBeUndefined()
    }).pipe(Effect.provide(boxWith(KEY))))

  it.effect("another HERALD_SECRETS_KEY cannot open it", () =>
    Effect.gen(function*() {
      const sealed = yield* Effect.map(SecretBox, (box) => box.seal("EAAB-token-1234")).pipe(Effect.provide(boxWith(KEY)))
      const opened = yield* Effect.map(SecretBox, (box) => box.open(sealed)).pipe(Effect.provide(boxWith(`${KEY}-other`)))
      expect(opened).toBeUndefined()
    }))
})
