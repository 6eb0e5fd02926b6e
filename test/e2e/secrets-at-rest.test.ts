import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Redacted } from "effect"
import { Webhook } from "standardwebhooks"
import { makeSecretBox } from "../../src/crypto/SecretBox.ts"
import { generateTotp } from "../../src/security/Totp.ts"
import { SEALED_COLUMNS } from "../../src/storage/sealAtRest.ts"
import { startConsumer } from "../support/consumer.ts"
import { eventually, useDb, useIsolation } from "../support/e2e.ts"
import { heraldCommand, type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { callJson, cliFor } from "../support/http.ts"

// Secrets Herald must read back are sealed at rest under HERALD_SECRETS_KEY (issue 33, item 8):
// the JWT signing key, webhook signing secrets (the current and a rotation's previous one),
// partner e-mail destination secrets, TOTP seeds (and, sealed before, the CAPI token). Made
// through the API, none is found in plain in any column of any table; the code that uses them
// keeps working; a rotation of HERALD_SECRETS_KEY (HERALD_SECRETS_KEY_PREVIOUS set to the old
// one) re-seals everything at start, rows left plain by an older version included; a node given
// a key that opens nothing refuses to start.

const KEY_1 = "first-secrets-key-0123456789abcdef0123456789"
const KEY_2 = "second-secrets-key-0123456789abcdef012345678"

const iso = useIsolation()
const db = useDb(iso)
const env = (keys: Record<string, string>) => envFor(iso, keys)
let node: HeraldProcess | undefined
let consumer: Awaited<ReturnType<typeof startConsumer>>

/** Every secret given out, by name: none may be stored as it was given. */
const secrets: Record<string, string> = {}
const ids = { rcs: "", developer: "" }
const OWNER = { email: "sealed@example.com", password: "sealed password" }
let ownerToken = ""

const call = (method: string, path: string, token?: string, body?: unknown) => callJson(node!.url, method, path, token, body)
const login = (totp: string) => call("POST", "/api/v1/rcs/auth/login", undefined, { ...OWNER, totp_code: totp })

/** Every row of every table of the database, as text. */
const everyRow = async () => {
  const tables = await db<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'")
  const rows: Array<{ table: string; text: string }> = []
  for (const { name } of tables) {
    for (const row of await db<{ text: string }>(`SELECT t::text AS text FROM "${name}" t`)) rows.push({ table: name, text: row.text })
  }
  return rows
}

/** The tables whose rows hold `value` as it is (or, for a whsec_ secret, its key part alone). */
const foundIn = (rows: ReadonlyArray<{ table: string; text: string }>, value: string) => {
  const needles = value.startsWith("whsec_") ? [value, value.slice("whsec_".length)] : [value]
  return [...new Set(rows.filter((r) => needles.some((n) => r.text.includes(n))).map((r) => r.table))]
}

/** Every value of the sealed columns, with what each key opens of it. */
const sealedValues = async () => {
  const values: Array<{ at: string; value: string }> = []
  for (const c of SEALED_COLUMNS) {
    for (const row of await db<{ value: string }>(`SELECT ${c.column} AS value FROM ${c.table} WHERE ${c.column} IS NOT NULL`)) {
      values.push({ at: `${c.table}.${c.column}`, value: row.value })
    }
  }
  return values
}
const opens = (key: string, value: string) => makeSecretBox(Redacted.make(key)).open(value)

/** The newest signing key's private JWK, opened with `key`. */
const privateJwk = async (key: string) => {
  const [row] = await db<{ private_jwk: string }>("SELECT private_jwk FROM signing_keys ORDER BY created_at DESC LIMIT 1")
  return JSON.parse(opens(key, row!.private_jwk)!) as { d: string; x: string }
}

/** A test event to the endpoint, as the consumer got it, verified with each of `secrets`. */
const testEventVerifies = async (webhookId: string, with_: ReadonlyArray<string>) => {
  const sent = await call("POST", `/api/v1/rcs/webhooks/${webhookId}/test`, ownerToken)
  expect(sent.status, JSON.stringify(sent.body)).toBe(200)
  const request = await eventually(async () => {
    const found = consumer.received.find((r) => r.headers["webhook-id"] === sent.body.delivery_id)
    expect(found).toBeDefined()
    return found!
  })
  for (const secret of with_) {
    expect(new Webhook(secret).verify(request.body, request.headers as Record<string, string>)).toMatchObject({ type: "webhook.test" })
  }
}

/**
 * What reads the sealed secrets works: a sign-in with a TOTP code (the seed) answered with a token
 * (the signing key), and test events signed under the endpoints' secrets, the replaced one too.
 */
const readersWork = async () => {
  const signedIn = await login(generateTotp(secrets.totp!))
  expect(signedIn.status).toBe(200)
  ownerToken = signedIn.body.token
  await testEventVerifies(ids.rcs, [secrets.rotated!, secrets.replaced!])
  await testEventVerifies(ids.developer, [secrets.developer!])
}

beforeAll(async () => {
  consumer = await startConsumer()
  node = await startHerald(env({ HERALD_SECRETS_KEY: KEY_1 }))
  const cli = cliFor(env({ HERALD_SECRETS_KEY: KEY_1 }))
  await cli("admin", "create-account", "--email", OWNER.email, "--password", OWNER.password, "--label", "Sealed", "--plan", "growth")
  ownerToken = (await call("POST", "/api/v1/rcs/auth/login", undefined, OWNER)).body.token
  // A TOTP seed.
  const setup = await call("POST", "/api/v1/rcs/auth/2fa/setup", ownerToken)
  expect(setup.status).toBe(200)
  secrets.totp = setup.body.secret
  expect((await call("POST", "/api/v1/rcs/auth/2fa/enable", ownerToken, { totp_code: generateTotp(secrets.totp!) })).status).toBe(200)
  // A webhook's secret, rotated: the replaced one keeps signing (stored as previous_secret).
  const rcs = await call("POST", "/api/v1/rcs/webhooks", ownerToken, { url: consumer.url("/rcs"), events: ["message.sent"], bot_id: null })
  expect(rcs.status).toBe(200)
  ids.rcs = rcs.body.webhook_id
  secrets.replaced = rcs.body.secret
  secrets.rotated = (await call("POST", `/api/v1/rcs/webhooks/${ids.rcs}/rotate-secret`, ownerToken)).body.secret
  // The developer webhook's secret.
  const developer = await call("PUT", "/api/v1/app/developer/webhook", ownerToken, { url: consumer.url("/dev") })
  expect(developer.status).toBe(200)
  ids.developer = developer.body.webhook_id
  secrets.developer = developer.body.secret
  // A partner e-mail event destination's secret.
  const partner = await cli("admin", "create-partner", "--name", "sealed partner")
  const set = await callJson(node.url, "POST", "/api/v1/partner/email/configuration-sets", partner.api_key, {
    name: "sealed",
    event_destinations: [{ url: consumer.url("/mail"), events: ["SEND"] }]
  })
  expect(set.status, JSON.stringify(set.body)).toBe(200)
  secrets.destination = set.body.event_destinations[0].secret
  // The CAPI token (sealed since it came).
  secrets.capi = "EAABsealedCapiAccessToken0123456789"
  const capi = await call("PUT", "/api/v1/app/meta-ads/capi/config", ownerToken, { dataset_id: "123456789012345", access_token: secrets.capi })
  expect(capi.status, JSON.stringify(capi.body)).toBe(200)
  for (const [name, value] of Object.entries(secrets)) expect(value, name).toMatch(/\S{16,}/)
})
afterAll(async () => {
  await node?.kill()
  await consumer?.close()
})

describe("secrets at rest", () => {
  it("no table holds a secret Herald gave out, nor the signing key's private half, in plain", async () => {
    const rows = await everyRow()
    for (const [name, value] of Object.entries(secrets)) expect({ name, tables: foundIn(rows, value) }).toEqual({ name, tables: [] })
    // The private JWK is in the database only sealed: opened with the node's key, it is the key the JWKS publishes.
    const jwk = await privateJwk(KEY_1)
    const jwks = (await (await fetch(`${node!.url}/.well-known/jwks.json`)).json()) as { keys: Array<{ x: string }> }
    expect(jwks.keys.map((k) => k.x)).toContain(jwk.x)
    expect(foundIn(rows, jwk.d)).toEqual([])
    // Every sealed column holds sealed values only, each opening under the node's key.
    const sealed = await sealedValues()
    expect(new Set(sealed.map((s) => s.at))).toEqual(new Set([
      "signing_keys.private_jwk",
      "webhooks.secret",
      "webhooks.previous_secret",
      "users.totp_secret",
      "capi_configs.access_token_sealed"
    ]))
    for (const { at, value } of sealed) expect({ at, opens: opens(KEY_1, value) !== undefined }).toEqual({ at, opens: true })
  })

  it("what reads them still works: TOTP sign-in, webhook signing under the current and the replaced secret", async () => {
    expect((await login("000000")).status).toBe(401)
    await readersWork()
  })

  it("rotating HERALD_SECRETS_KEY: a node with the previous key beside the new one re-seals every value at start, plain rows of an older version too", async () => {
    await node!.stop()
    node = undefined
    // Rows as a version before sealing left them: the seed and the developer webhook's secret in plain.
    await db("UPDATE users SET totp_secret = $1 WHERE email = $2", [secrets.totp, OWNER.email])
    await db("UPDATE webhooks SET secret = $1 WHERE webhook_id = $2", [secrets.developer, ids.developer])
    expect(foundIn(await everyRow(), secrets.totp!)).toEqual(["users"])

    node = await startHerald(env({ HERALD_SECRETS_KEY: KEY_2, HERALD_SECRETS_KEY_PREVIOUS: KEY_1 }))
    // The two plain values sealed; the five sealed under the first key (signing key, the RCS
    // endpoint's two secrets, the destination's, the CAPI token) sealed again under the second.
    expect(node.logs().find((l) => l.msg === "secrets sealed at rest")).toMatchObject({ sealed: 2, resealed: 5, unreadable: 0 })
    for (const { at, value } of await sealedValues()) {
      expect({ at, second: opens(KEY_2, value) !== undefined, first: opens(KEY_1, value) !== undefined }).toEqual({ at, second: true, first: false })
    }
    const rows = await everyRow()
    for (const [name, value] of Object.entries(secrets)) expect({ name, tables: foundIn(rows, value) }).toEqual({ name, tables: [] })
    expect(foundIn(rows, (await privateJwk(KEY_2)).d)).toEqual([])

    await readersWork()
  }, 120_000)

  it("once re-sealed, the new key alone runs the node; the old key alone is refused", async () => {
    await node!.stop()
    node = undefined
    const again = await heraldCommand(["migrate"], env({ HERALD_SECRETS_KEY: KEY_2, HERALD_SECRETS_KEY_PREVIOUS: KEY_1 }))
    expect(again.code, again.stderr).toBe(0)
    expect(JSON.parse(again.stdout).secrets).toEqual({ sealed: 0, resealed: 0, unreadable: 0 })

    const old = await heraldCommand(["migrate"], env({ HERALD_SECRETS_KEY: KEY_1 }))
    expect(old.code).not.toBe(0)
    expect(old.stdout + old.stderr).toContain("HERALD_SECRETS_KEY does not open the secrets sealed in")

    node = await startHerald(env({ HERALD_SECRETS_KEY: KEY_2 }))
    await readersWork()
  }, 120_000)
})
