import { Redacted } from "effect"
import type { JWK } from "jose"
import { DEV_SECRETS_KEY } from "../../src/config/AppConfig.ts"
import { makeSecretBox } from "../../src/crypto/SecretBox.ts"

// Secrets Herald must read back are sealed at rest (SecretBox, under HERALD_SECRETS_KEY): a test
// that needs one from the database (to forge a token, to compute a TOTP code) opens it as a node
// does. A child `herald` process runs with the development key unless its env sets another.

/** A SecretBox-sealed value opened with `key`; throws when it does not open (or is not sealed). */
export const openSealed = (sealed: string, key: string = DEV_SECRETS_KEY): string => {
  const plain = makeSecretBox(Redacted.make(key)).open(sealed)
  if (plain === undefined) throw new Error(`not a value sealed under the given key: ${sealed.slice(0, 12)}…`)
  return plain
}

/** The newest JWT signing key, its private JWK opened: to sign tokens a node will accept (or refuse as expired). */
export const newestSigningKey = async (
  db: <R extends Record<string, unknown>>(text: string, values?: ReadonlyArray<unknown>) => Promise<Array<R>>,
  key: string = DEV_SECRETS_KEY
): Promise<{ readonly kid: string; readonly privateJwk: JWK }> => {
  const [row] = await db<{ kid: string; private_jwk: string }>("SELECT kid, private_jwk FROM signing_keys ORDER BY created_at DESC LIMIT 1")
  return { kid: row!.kid, privateJwk: JSON.parse(openSealed(row!.private_jwk, key)) as JWK }
}
