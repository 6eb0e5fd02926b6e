import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { createLocalJWKSet, decodeJwt, importJWK, jwtVerify, SignJWT, UnsecuredJWT } from "jose"
import { generateTotp } from "../../src/security/Totp.ts"
import { useDb, useIsolation } from "../support/e2e.ts"
import { heraldCommand, type HeraldProcess, startHerald } from "../support/HeraldProcess.ts"
import { envFor } from "../support/isolation.ts"
import { newestSigningKey, openSealed } from "../support/sealed.ts"

const iso = useIsolation()
const db = useDb(iso)
const env = envFor(iso)
let node: HeraldProcess
let second: HeraldProcess

const post = async (path: string, body: unknown, token?: string, base = node.url) => {
  const res = await fetch(`${base}/api/v1/rcs/auth${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body)
  })
  return { status: res.status, body: (await res.json()) as any }
}

const createAccount = async (email: string, password: string, label: string) => {
  const r = await heraldCommand(["admin", "create-account", "--email", email, "--password", password, "--label", label, "--plan", "growth"], env)
  expect(r.code, r.stderr).toBe(0)
  return JSON.parse(r.stdout) as { account_id: string; user_id: string }
}

let owner: { account_id: string; user_id: string }

beforeAll(async () => {
  node = await startHerald(env)
  second = await startHerald(env)
  owner = await createAccount("owner@example.com", "owner password 1", "Acme")
})
afterAll(async () => {
  await node?.kill()
  await second?.kill()
})

describe("login", () => {
  it("answers a token with the contract's user fields and claims", async () => {
    const res = await post("/login", { email: "Owner@Example.com", password: "owner password 1" })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({
      success: true,
      role: "owner",
      user: { user_id: owner.user_id, email: "owner@example.com", account_label: "Acme", member_id: "", assigned_bots: ["*"] }
    })
    const claims = decodeJwt(res.body.token)
    expect(Object.keys(claims).sort()).toEqual(["bots", "email", "exp", "iat", "mid", "role", "type", "user_id"])
    expect(claims).toMatchObject({ type: "rcs_user", user_id: owner.user_id, email: "owner@example.com", mid: "", role: "owner", bots: ["*"] })
    expect(claims.exp! - claims.iat!).toBe(7 * 24 * 3600)
    // Signed with EdDSA by a key published in the JWKS, on every node.
    for (const base of [node.url, second.url]) {
      const jwks = (await (await fetch(`${base}/.well-known/jwks.json`)).json()) as { keys: Array<Record<string, string>> }
      expect(jwks.keys[0]).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA" })
      expect(JSON.stringify(jwks)).not.toContain("\"d\"")
      const verified = await jwtVerify(res.body.token, createLocalJWKSet(jwks as any))
      expect(verified.protectedHeader.alg).toBe("EdDSA")
    }
  })

  it("refuses a wrong password or an unknown e-mail the same way", async () => {
    const wrong = await post("/login", { email: "owner@example.com", password: "nope nope nope" })
    const unknown = await post("/login", { email: "nobody@example.com", password: "nope nope nope" })
    for (const r of [wrong, unknown]) {
      expect(r.status).toBe(401)
      expect(r.body).toEqual({ success: false, code: "invalid_credentials", message: "invalid e-mail or password" })
    }
    const bad = await post("/login", { email: "not an email", password: "x" })
    expect(bad.status).toBe(400)
    expect(bad.body.code).toBe("invalid_request")
  })

  it("locks an e-mail for 15 minutes after 10 wrong passwords, counted across API nodes; success resets", async () => {
    await createAccount("locked@example.com", "locked password", "Locked")
    // 9 failures then a success: the count starts over.
    for (let i = 0; i < 9; i++) expect((await post("/login", { email: "locked@example.com", password: "wrong" }, undefined, i % 2 ? second.url : node.url)).status).toBe(401)
    expect((await post("/login", { email: "locked@example.com", password: "locked password" })).status).toBe(200)
    for (let i = 0; i < 9; i++) expect((await post("/login", { email: "locked@example.com", password: "wrong" }, undefined, i % 2 ? second.url : node.url)).status).toBe(401)
    const tenth = await post("/login", { email: "locked@example.com", password: "wrong" }, undefined, second.url)
    expect(tenth.status).toBe(429)
    expect(tenth.body.code).toBe("too_many_attempts")
    const right = await post("/login", { email: "locked@example.com", password: "locked password" }, undefined, node.url)
    expect(right.status).toBe(429)
    expect(right.body.code).toBe("too_many_attempts")
    // Other e-mails are not affected.
    expect((await post("/login", { email: "owner@example.com", password: "owner password 1" })).status).toBe(200)
  })
})

describe("tokens", () => {
  const protectedCall = (token?: string) => post("/2fa/setup", {}, token)

  it("missing, garbage, tampered, alg none and expired tokens get 401 unauthorized", async () => {
    const { body } = await post("/login", { email: "owner@example.com", password: "owner password 1" })
    const good = body.token as string
    const [h, p, s] = good.split(".")
    const claims = JSON.parse(Buffer.from(p!, "base64url").toString())
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...claims, role: "owner", bots: ["*"], email: "x@y.z" })).toString("base64url")}.${s}`
    const none = new UnsecuredJWT(claims).encode()
    // An expired token, signed with the real key.
    const keyRow = await newestSigningKey(db)
    const key = await importJWK(keyRow.privateJwk, "EdDSA")
    const past = Math.floor(Date.now() / 1000) - 8 * 24 * 3600
    const expired = await new SignJWT({ ...claims, iat: past, exp: past + 7 * 24 * 3600 }).setProtectedHeader({ alg: "EdDSA", kid: keyRow.kid }).sign(key)
    // The contract's message, and a detail saying what was wrong with each.
    for (const [token, detail] of [
      [undefined, /Authorization header is missing/],
      ["garbage", /neither a Herald token nor an API key/],
      [tampered, /signature does not verify/],
      [none, /neither a Herald token nor an API key/],
      [expired, /has expired; sign in again/]
    ] as const) {
      const r = await protectedCall(token)
      expect(r.status, String(token)).toBe(401)
      expect(r.body).toEqual({ success: false, code: "unauthorized", message: "unauthorized", detail: expect.stringMatching(detail) })
    }
    expect((await protectedCall(good)).status).toBe(200)
  })

  it("a password change invalidates every token of that person at once; so does an admin reset", async () => {
    await createAccount("changer@example.com", "first password", "Changer")
    const a = (await post("/login", { email: "changer@example.com", password: "first password" })).body.token
    const b = (await post("/login", { email: "changer@example.com", password: "first password" }, undefined, second.url)).body.token
    const wrong = await post("/password", { current_password: "not it", new_password: "second password" }, a)
    expect(wrong.status).toBe(401)
    const short = await post("/password", { current_password: "first password", new_password: "short" }, a)
    expect(short.status).toBe(400)
    const changed = await post("/password", { current_password: "first password", new_password: "second password" }, a)
    expect(changed.status).toBe(200)
    expect((await protectedCall(a)).status).toBe(401)
    expect((await post("/2fa/setup", {}, b, second.url)).status).toBe(401)
    const fresh = await post("/login", { email: "changer@example.com", password: "second password" })
    expect(fresh.status).toBe(200)
    expect((await protectedCall(fresh.body.token)).status).toBe(200)
    const reset = await heraldCommand(["admin", "reset-password", "changer@example.com", "third password"], env)
    expect(reset.code).toBe(0)
    expect((await protectedCall(fresh.body.token)).status).toBe(401)
  })
})

describe("key rotation", () => {
  it("a new key signs new tokens while tokens of the previous key keep working", async () => {
    const before = (await post("/login", { email: "owner@example.com", password: "owner password 1" })).body.token
    const rotated = await heraldCommand(["admin", "rotate-signing-key"], env)
    expect(rotated.code, rotated.stderr).toBe(0)
    const { kid } = JSON.parse(rotated.stdout)
    // Nodes re-read the key set within a minute; a token with an unknown kid makes them re-read at once.
    // Stored sealed: the test opens it with the key the nodes run with.
    const keyRows = await db<{ private_jwk: string }>("SELECT private_jwk FROM signing_keys WHERE kid = $1", [kid])
    const claims = decodeJwt(before)
    const signedWithNew = await new SignJWT({ ...claims }).setProtectedHeader({ alg: "EdDSA", kid }).sign(await importJWK(JSON.parse(openSealed(keyRows[0]!.private_jwk)), "EdDSA"))
    expect((await post("/2fa/setup", {}, signedWithNew)).status).toBe(200)
    expect((await post("/2fa/setup", {}, before)).status).toBe(200)
    const jwks = (await (await fetch(`${second.url}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> }
    expect(jwks.keys.map((k) => k.kid)).toContain(decodeProtectedKid(before))
  })
})

const decodeProtectedKid = (token: string) => JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString()).kid as string

describe("two-factor", () => {
  it("setup, enable, sign in with a code or a single-use recovery code, lock after 5 wrong codes, disable", async () => {
    await createAccount("twofa@example.com", "twofa password", "TwoFA")
    const token = (await post("/login", { email: "twofa@example.com", password: "twofa password" })).body.token
    const setup = await post("/2fa/setup", {}, token)
    expect(setup.status).toBe(200)
    expect(setup.body.otpauth_uri).toMatch(/^otpauth:\/\/totp\/Herald:twofa%40example\.com\?/)
    const secret = setup.body.secret as string
    expect((await post("/2fa/enable", { totp_code: "000000" }, token)).status).toBe(401)
    const enabled = await post("/2fa/enable", { totp_code: generateTotp(secret) }, token)
    expect(enabled.status).toBe(200)
    const codes = enabled.body.recovery_codes as Array<string>
    expect(codes).toHaveLength(10)
    expect(new Set(codes).size).toBe(10)
    const stored = await db<{ code_hash: string }>("SELECT code_hash FROM user_recovery_codes r JOIN users u USING (user_id) WHERE u.email = 'twofa@example.com'")
    expect(stored).toHaveLength(10)
    for (const c of codes) expect(stored.map((s) => s.code_hash)).not.toContain(c)

    const first = await post("/login", { email: "twofa@example.com", password: "twofa password" })
    expect(first.body).toEqual({ success: true, requires_2fa: true, message: "two-factor code required" })
    expect(first.body.token).toBeUndefined()
    const withCode = await post("/login", { email: "twofa@example.com", password: "twofa password", totp_code: generateTotp(secret) })
    expect(withCode.status).toBe(200)
    expect(withCode.body.token).toBeTruthy()
    const withRecovery = await post("/login", { email: "twofa@example.com", password: "twofa password", totp_code: codes[0] })
    expect(withRecovery.status).toBe(200)
    const again = await post("/login", { email: "twofa@example.com", password: "twofa password", totp_code: codes[0] })
    expect(again.status).toBe(401)
    expect(again.body.code).toBe("invalid_code")

    // 4 more wrong codes (5 in all) lock the e-mail.
    for (let i = 0; i < 3; i++) expect((await post("/login", { email: "twofa@example.com", password: "twofa password", totp_code: "999999" })).status).toBe(401)
    const fifth = await post("/login", { email: "twofa@example.com", password: "twofa password", totp_code: "999999" })
    expect(fifth.status).toBe(429)
    expect(fifth.body.code).toBe("too_many_attempts")
    await db("DELETE FROM sign_in_attempts WHERE email = 'twofa@example.com'")

    const disabled = await post("/2fa/disable", { password: "twofa password", totp_code: generateTotp(secret) }, withCode.body.token)
    expect(disabled.status).toBe(200)
    const plain = await post("/login", { email: "twofa@example.com", password: "twofa password" })
    expect(plain.body.token).toBeTruthy()
  })
})

describe("several accounts", () => {
  it("need_account_pick with a session token that only permits select-account", async () => {
    const other = await createAccount("boss@example.com", "boss password", "Other Co")
    const member = await createAccount("member@example.com", "member password", "Member Own")
    const [m] = await db<{ member_id: string }>(
      "INSERT INTO memberships (account_id, user_id, role, assigned_bots) VALUES ($1, $2, 'operator', ARRAY['bot-1']) RETURNING member_id",
      [other.account_id, member.user_id]
    )
    const pick = await post("/login", { email: "member@example.com", password: "member password" })
    expect(pick.status).toBe(200)
    expect(pick.body.need_account_pick).toBe(true)
    expect(pick.body.token).toBeUndefined()
    const accounts = pick.body.accounts as Array<Record<string, string>>
    expect(accounts).toContainEqual({ account_id: member.account_id, role: "owner", label: "Member Own" })
    expect(accounts).toContainEqual({ account_id: other.account_id, role: "operator", label: "Other Co", member_id: m!.member_id })
    // The session token is no user token.
    expect((await post("/2fa/setup", {}, pick.body.session_token)).status).toBe(401)
    const chosen = await post("/select-account", { session_token: pick.body.session_token, account_id: other.account_id })
    expect(chosen.status).toBe(200)
    expect(chosen.body).toMatchObject({
      role: "operator",
      user: { user_id: other.user_id, email: "member@example.com", account_label: "Other Co", member_id: m!.member_id, assigned_bots: ["bot-1"] }
    })
    expect(decodeJwt(chosen.body.token)).toMatchObject({ user_id: other.user_id, mid: m!.member_id, role: "operator", bots: ["bot-1"] })
    expect((await post("/2fa/setup", {}, chosen.body.token)).status).toBe(200)
    // Role and scope come from the database: a demotion applies to the existing token at once.
    await db("DELETE FROM memberships WHERE member_id = $1", [m!.member_id])
    expect((await post("/2fa/setup", {}, chosen.body.token)).status).toBe(401)
    const foreign = await post("/select-account", { session_token: pick.body.session_token, account_id: owner.account_id })
    expect(foreign.status).toBe(400)
    const forged = await post("/select-account", { session_token: "x.y.z", account_id: other.account_id })
    expect(forged.status).toBe(401)
  })
})
