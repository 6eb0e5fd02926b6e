import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { JWK } from "jose"
import { SecretBox } from "../crypto/SecretBox.ts"

export interface SigningKeyRow {
  readonly kid: string
  readonly publicJwk: JWK
  /** The private JWK as JSON, sealed (SecretBox): a database reader must not be able to sign tokens. */
  readonly privateJwk: string
  readonly createdAt: Date
}

/** The one writer of `signing_keys`: the JWT keys every API node shares. SQL failures are defects here. */
export class SigningKeysRepo extends Effect.Service<SigningKeysRepo>()("herald/SigningKeysRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const box = yield* SecretBox

    /** A new key; its private half is stored sealed. */
    const insert = (key: { kid: string; publicJwk: JWK; privateJwk: JWK }) =>
      sql`INSERT INTO signing_keys (kid, public_jwk, private_jwk) VALUES (${key.kid}, ${JSON.stringify(key.publicJwk)}::jsonb, ${box.seal(JSON.stringify(key.privateJwk))})`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    /** The keys not retired, newest first (their private halves still sealed). */
    const live = sql<SigningKeyRow>`SELECT kid, public_jwk, private_jwk, created_at FROM signing_keys WHERE retired_at IS NULL ORDER BY created_at DESC`.pipe(
      Effect.orDie
    )

    return { insert, live } as const
  }),
  dependencies: [SecretBox.Default]
}) {}
