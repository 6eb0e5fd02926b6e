import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Secrets sealed at rest (docs/security.md): the JWT signing key's private half becomes text so it
 * can hold a SecretBox-sealed value (AES-256-GCM under HERALD_SECRETS_KEY) instead of a JWK anyone
 * reading the database could sign tokens with. A migration cannot seal (it has no key): the rows
 * this one converts, and the webhook secrets and TOTP seeds written plain before it, are sealed by
 * the start-up step that runs right after the migrations (src/storage/sealAtRest.ts). Nodes older
 * than this migration cannot read sealed values: stop every node before starting this version.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE signing_keys ALTER COLUMN private_jwk TYPE text USING private_jwk::text`
})
