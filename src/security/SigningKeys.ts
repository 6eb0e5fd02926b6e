import { Duration, Effect, Schema } from "effect"
import { exportJWK, generateKeyPair, importJWK, type JWK, jwtVerify, type JWTPayload, SignJWT } from "jose"
import { randomUUID } from "node:crypto"
import { SecretBox } from "../crypto/SecretBox.ts"
import { SigningKeysRepo } from "./SigningKeysRepo.ts"

/** User tokens live 7 days (contract); a retired key stays published that long after its successor. */
export const TOKEN_LIFETIME = Duration.days(7)
/** How long a node trusts its copy of the key set before reading it again (rotation on other nodes). */
const REFRESH = Duration.minutes(1)

export class InvalidToken extends Schema.TaggedError<InvalidToken>()("InvalidToken", {
  message: Schema.String
}) {}

type VerifyKey = Awaited<ReturnType<typeof importJWK>>

interface KeySet {
  readonly signer: { readonly kid: string; readonly key: VerifyKey }
  readonly verifiers: ReadonlyMap<string, VerifyKey>
  readonly jwks: { readonly keys: ReadonlyArray<JWK> }
  readonly loadedAt: number
}

/**
 * EdDSA (Ed25519) signing keys kept in Postgres, so every API node signs and verifies with the same
 * set. The newest key signs; older keys keep verifying (and stay in the JWKS) until their
 * successor is older than the token lifetime, so a rotation never cuts off issued tokens.
 * Verification accepts EdDSA only: `alg: none` or an HMAC header fails before any handler runs.
 */
/** Three base64url parts: the only shape a signed JWT has. */
const UNKNOWN_KEY = "the token was signed by a key this Herald does not know"

/** What jose found wrong with a token, in words for its holder. */
const tokenProblem = (cause: unknown): string => {
  const code = (cause as { readonly code?: string } | undefined)?.code
  switch (code) {
    case "ERR_JWT_EXPIRED":
      return "the token has expired; sign in again (POST /api/v1/rcs/auth/login)"
    case "ERR_JWS_SIGNATURE_VERIFICATION_FAILED":
      return "the token's signature does not verify (it was altered, or not issued by this Herald)"
    case "ERR_JWT_CLAIM_VALIDATION_FAILED":
      return "the token is not valid yet or has claims this Herald refuses"
    default:
      return cause instanceof Error && cause.message === "unknown key" ? UNKNOWN_KEY : "the token is malformed"
  }
}

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/
const MALFORMED = new InvalidToken({ message: "the credential is neither a Herald token nor an API key" })

export class SigningKeys extends Effect.Service<SigningKeys>()("herald/SigningKeys", {
  effect: Effect.gen(function*() {
    const repo = yield* SigningKeysRepo
    const box = yield* SecretBox
    let cached: KeySet | undefined

    const generate = Effect.promise(async () => {
      const { publicKey, privateKey } = await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true })
      const kid = randomUUID()
      return { kid, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: "EdDSA", use: "sig" }, privateJwk: await exportJWK(privateKey) }
    })

    const load: Effect.Effect<KeySet> = Effect.gen(function*() {
      let rows = yield* repo.live
      if (rows.length === 0) {
        // First start: one node's key wins or both land; either way the newest signs.
        yield* repo.insert(yield* generate)
        rows = yield* repo.live
      }
      const newest = rows[0]!
      const cutoff = Date.now() - Duration.toMillis(TOKEN_LIFETIME)
      // A key verifies while it signs, or while its successor is younger than a token's lifetime.
      const live = rows.filter((_, i) => i === 0 || new Date(rows[i - 1]!.createdAt).getTime() > cutoff)
      const verifiers = new Map<string, VerifyKey>()
      for (const row of live) verifiers.set(row.kid, yield* Effect.promise(() => importJWK(row.publicJwk, "EdDSA")))
      // Only the newest key signs: only its private half is opened.
      const privateJwk = JSON.parse(yield* box.revealOrDie(newest.privateJwk, "JWT signing key")) as JWK
      const set: KeySet = {
        signer: { kid: newest.kid, key: yield* Effect.promise(() => importJWK(privateJwk, "EdDSA")) },
        verifiers,
        jwks: { keys: live.map((row) => row.publicJwk) },
        loadedAt: Date.now()
      }
      cached = set
      return set
    }).pipe(Effect.orDie, Effect.withSpan("SigningKeys.load"))

    const current = Effect.suspend(() =>
      cached !== undefined && Date.now() - cached.loadedAt < Duration.toMillis(REFRESH) ? Effect.succeed(cached) : load
    )

    const sign = (claims: JWTPayload & { readonly iat: number; readonly exp: number }) =>
      Effect.flatMap(current, ({ signer }) =>
        Effect.promise(() => new SignJWT({ ...claims }).setProtectedHeader({ alg: "EdDSA", kid: signer.kid, typ: "JWT" }).sign(signer.key)))

    const verifyWith = (set: KeySet, token: string) =>
      Effect.tryPromise({
        try: () =>
          jwtVerify(token, (header) => {
            const key = header.kid ? set.verifiers.get(header.kid) : undefined
            if (key === undefined) throw new Error("unknown key")
            return key
          }, { algorithms: ["EdDSA"] }),
        catch: (cause) => new InvalidToken({ message: tokenProblem(cause) })
      })

    /**
     * Verifies signature and expiry; an unknown key id reloads the set once (a rotation elsewhere).
     * A string that is not even a compact JWS is refused before jose sees it: jose would build and
     * throw an Error (a stack capture) and settle a promise for it, which made a flood of junk
     * tokens cost several times a valid one.
     */
    const verify = (token: string) =>
      !COMPACT_JWS.test(token) ? Effect.fail(MALFORMED) : Effect.flatMap(current, (set) =>
        verifyWith(set, token).pipe(
          Effect.catchIf(
            (e) => e.message === UNKNOWN_KEY,
            () => Effect.flatMap(load, (fresh) => verifyWith(fresh, token))
          ),
          Effect.map((result) => result.payload)
        ))

    const jwks = Effect.map(current, (set) => set.jwks)

    /** A new signing key; the previous ones keep verifying for a token lifetime. */
    const rotate = Effect.gen(function*() {
      const key = yield* generate
      yield* repo.insert(key)
      const set = yield* load
      return { kid: set.signer.kid }
    })

    return { sign, verify, jwks, rotate } as const
  }),
  dependencies: [SigningKeysRepo.Default, SecretBox.Default]
}) {}
