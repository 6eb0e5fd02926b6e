import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../../src/config/AppConfig.ts"
import { makeSecretBox } from "../../src/crypto/SecretBox.ts"
import { SqlLive } from "../../src/storage/Database.ts"
import { Storage } from "../../src/storage/Migrations.ts"
import { sealAtRest, SEALED_COLUMNS } from "../../src/storage/sealAtRest.ts"
import { IsolationLive, TestConfig } from "../support/isolation.ts"

// The start-up step that seals secrets at rest (a migration has no key): rows written plain by an
// older version are sealed under HERALD_SECRETS_KEY, a second run changes nothing, a rotation
// re-seals everything under the new key while HERALD_SECRETS_KEY_PREVIOUS opens the old, and a
// node given a key that opens nothing refuses rather than seal under it.

const Env = Layer.mergeAll(SqlLive, Storage.Default.pipe(Layer.provide(SqlLive))).pipe(
  Layer.provideMerge(TestConfig()),
  Layer.provideMerge(IsolationLive)
)

const KEY_A = "secrets-key-a-0123456789abcdef0123456789"
const KEY_B = "secrets-key-b-0123456789abcdef0123456789"
const KEY_C = "secrets-key-c-0123456789abcdef0123456789"

const PLAIN = {
  totp: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP",
  secret: "whsec_c2VhbEF0UmVzdFRlc3RTZWNyZXQxMjM0NTY3OA==",
  previous: "whsec_cHJldmlvdXNTZWNyZXRGb3JTZWFsQXRSZXN0MTI=",
  jwk: JSON.stringify({ kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", d: "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A" })
}

/** sealAtRest as a node with these keys runs it. */
const sealWith = (key: string, previous?: string) =>
  Effect.flatMap(AppConfig, (config) =>
    sealAtRest.pipe(
      Effect.provideService(AppConfig, {
        ...config,
        secretsKey: Redacted.make(key),
        secretsKeyPrevious: previous === undefined ? Option.none() : Option.some(Redacted.make(previous))
      })
    ))

const stored = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [user] = yield* sql<{ totpSecret: string }>`SELECT totp_secret FROM users WHERE email = 'seal@example.com'`
  const [hook] = yield* sql<{ secret: string; previousSecret: string }>`SELECT secret, previous_secret FROM webhooks WHERE url = 'https://seal.example.com'`
  const [key] = yield* sql<{ privateJwk: string }>`SELECT private_jwk FROM signing_keys WHERE kid = 'seal-kid'`
  return { totp: user!.totpSecret, secret: hook!.secret, previous: hook!.previousSecret, jwk: key!.privateJwk }
})

/** Every value opened with the box of `key`: undefined where it does not open. */
const openedWith = (key: string, values: Record<keyof typeof PLAIN, string>) => {
  const box = makeSecretBox(Redacted.make(key))
  return Object.fromEntries(Object.entries(values).map(([name, value]) => [name, box.open(value)]))
}

layer(Env, { timeout: 60_000 })("sealing secrets at rest", (it) => {
  it.effect("seals the plain rows an older version wrote; runs again without changing anything", () =>
    Effect.gen(function*() {
      yield* (yield* Storage).awaitReadyFor("30 seconds")
      const sql = yield* SqlClient.SqlClient
      // As a node before migration 0037 left them: every secret in plain, the JWK as JSON text.
      const [user] = yield* sql<{ userId: string }>`
        INSERT INTO users (email, password_hash, totp_secret) VALUES ('seal@example.com', 'x', ${PLAIN.totp}) RETURNING user_id`
      const [account] = yield* sql<{ accountId: string }>`
        INSERT INTO accounts (label, plan, owner_user_id) VALUES ('Seal', 'growth', ${user!.userId}) RETURNING account_id`
      yield* sql`
        INSERT INTO webhooks (account_id, url, events, secret, previous_secret, previous_secret_expires_at)
        VALUES (${account!.accountId}, 'https://seal.example.com', '{message.sent}', ${PLAIN.secret}, ${PLAIN.previous}, now() + interval '1 hour')`
      yield* sql`INSERT INTO signing_keys (kid, public_jwk, private_jwk) VALUES ('seal-kid', '{}'::jsonb, ${PLAIN.jwk})`

      expect(yield* sealWith(KEY_A)).toEqual({ sealed: 4, resealed: 0, unreadable: 0 })
      const sealed = yield* stored
      for (const value of Object.values(sealed)) expect(value).toMatch(/^v1\./)
      expect(JSON.stringify(sealed)).not.toContain(PLAIN.totp)
      expect(JSON.stringify(sealed)).not.toContain("nWGxne")
      expect(openedWith(KEY_A, sealed)).toEqual(PLAIN)

      // Idempotent: nothing plain is left, nothing is sealed twice.
      expect(yield* sealWith(KEY_A)).toEqual({ sealed: 0, resealed: 0, unreadable: 0 })
      expect(yield* stored).toEqual(sealed)

      // A table where some rows are sealed and one is plain again (an older node wrote it): only that one changes.
      yield* sql`UPDATE users SET totp_secret = ${PLAIN.totp} WHERE email = 'seal@example.com'`
      expect(yield* sealWith(KEY_A)).toEqual({ sealed: 1, resealed: 0, unreadable: 0 })
      const after = yield* stored
      expect({ ...after, totp: sealed.totp }).toEqual(sealed)
      expect(openedWith(KEY_A, after)).toEqual(PLAIN)
    }))

  it.effect("a rotation re-seals every sealed value under the new key; the old key then opens none", () =>
    Effect.gen(function*() {
      yield* (yield* Storage).awaitReady
      const sql = yield* SqlClient.SqlClient
      // Every sealed column is walked, not only these four (a console session's token, a CAPI token, a DKIM key).
      const before = yield* Effect.forEach(SEALED_COLUMNS, (c) =>
        Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(c.table)} WHERE ${sql(c.column)} IS NOT NULL`, ([row]) => row!.n))
      const total = before.reduce((a, b) => a + b, 0)
      expect(total).toBe(4)

      expect(yield* sealWith(KEY_B, KEY_A)).toEqual({ sealed: 0, resealed: 4, unreadable: 0 })
      const rotated = yield* stored
      expect(openedWith(KEY_B, rotated)).toEqual(PLAIN)
      expect(Object.values(openedWith(KEY_A, rotated)).filter((v) => v !== undefined)).toEqual([])
      // Done once: a second run with both keys finds nothing under the old one.
      expect(yield* sealWith(KEY_B, KEY_A)).toEqual({ sealed: 0, resealed: 0, unreadable: 0 })
      // And the new key alone opens everything.
      expect(yield* sealWith(KEY_B)).toEqual({ sealed: 0, resealed: 0, unreadable: 0 })
      expect(yield* stored).toEqual(rotated)
    }))

  it.effect("a node whose key opens none of the sealed values refuses, and writes nothing", () =>
    Effect.gen(function*() {
      yield* (yield* Storage).awaitReady
      const sql = yield* SqlClient.SqlClient
      const before = yield* stored
      yield* sql`UPDATE users SET totp_secret = ${PLAIN.totp} WHERE email = 'seal@example.com'`
      const refused = yield* Effect.flip(sealWith(KEY_C))
      expect(refused._tag).toBe("SecretsKeyMismatch")
      expect(refused.message).toContain("HERALD_SECRETS_KEY does not open the secrets sealed in")
      // The plain seed was not sealed under the wrong key.
      expect((yield* stored).totp).toBe(PLAIN.totp)
      // So did the old key, now that it is neither current nor previous.
      expect((yield* Effect.flip(sealWith(KEY_A)))._tag).toBe("SecretsKeyMismatch")
      expect(yield* sealWith(KEY_B)).toEqual({ sealed: 1, resealed: 0, unreadable: 0 })
      expect({ ...(yield* stored), totp: before.totp }).toEqual(before)
    }))
})
