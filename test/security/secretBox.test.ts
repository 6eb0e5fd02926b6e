import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Redacted } from "effect"
import { AppConfig, type AppSettings } from "../../src/config/AppConfig.ts"
import { SecretBox } from "../../src/crypto/SecretBox.ts"

// SecretBox seals what Herald must read back (a CAPI access token): AES-256-GCM under a key
// derived from HERALD_SECRETS_KEY. No database needed: only the key setting is read.
const boxWith = (key: string, previous?: string) =>
  SecretBox.Default.pipe(Layer.provide(Layer.succeed(AppConfig, {
    secretsKey: Redacted.make(key),
    secretsKeyPrevious: previous === undefined ? Option.none() : Option.some(Redacted.make(previous))
  } as unknown as AppSettings)))

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

  it.effect("while HERALD_SECRETS_KEY is rotated, HERALD_SECRETS_KEY_PREVIOUS opens what the old key sealed; only the new key seals", () =>
    Effect.gen(function*() {
      const old = yield* Effect.map(SecretBox, (box) => box.seal("EAAB-token-1234")).pipe(Effect.provide(boxWith(KEY)))
      const rotating = yield* SecretBox.pipe(Effect.provide(boxWith(`${KEY}-new`, KEY)))
      expect(rotating.rotating).toBe(true)
      expect(rotating.open(old)).toBe("EAAB-token-1234")
      expect(rotating.unseal(old)).toEqual({ plain: "EAAB-token-1234", current: false })
      const resealed = rotating.seal("EAAB-token-1234")
      expect(rotating.unseal(resealed)).toEqual({ plain: "EAAB-token-1234", current: true })
      // What the new key sealed, the old key alone cannot open; the new key alone can.
      expect(yield* Effect.map(SecretBox, (box) => box.open(resealed)).pipe(Effect.provide(boxWith(KEY)))).toBeUndefined()
      expect(yield* Effect.map(SecretBox, (box) => box.open(resealed)).pipe(Effect.provide(boxWith(`${KEY}-new`)))).toBe("EAAB-token-1234")
    }))

  it.effect("reveal: a sealed value opened, a plain one (written before its column was sealed) as it is, a foreign one a defect", () =>
    Effect.gen(function*() {
      const box = yield* SecretBox
      expect(box.reveal(box.seal("whsec_abc"))).toBe("whsec_abc")
      expect(box.reveal("whsec_abc")).toBe("whsec_abc")
      const foreign = yield* Effect.map(SecretBox, (other) => other.seal("whsec_abc")).pipe(Effect.provide(boxWith(`${KEY}-other`)))
      expect(box.reveal(foreign)).toBeUndefined()
      const defect = yield* Effect.exit(box.revealOrDie(foreign, "webhook signing secret"))
      expect(Cause.pretty(Exit.isFailure(defect) ? defect.cause : Cause.empty)).toContain("the webhook signing secret is sealed under a key this node does not have")
    }).pipe(Effect.provide(boxWith(KEY))))
})
