import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { PreparedStatements } from "../storage/PreparedStatements.ts"

export interface ApiKeyRow {
  readonly keyId: string
  readonly accountId: string
  readonly name: string
  readonly lastFour: string
  readonly scopes: ReadonlyArray<string>
  readonly createdBy: string
  readonly createdAt: Date
  readonly lastUsedAt: Date | null
  readonly expiresAt: Date | null
  readonly revokedAt: Date | null
}

export interface KeyOwner {
  readonly keyId: string
  readonly accountId: string
  readonly accountLabel: string
  readonly ownerUserId: string
  readonly ownerEmail: string
  readonly scopes: ReadonlyArray<string>
  readonly expiresAt: Date | null
}

const COLUMNS = "key_id, account_id, name, last_four, scopes, created_by, created_at, last_used_at, expires_at, revoked_at"

export class ApiKeysRepo extends Effect.Service<ApiKeysRepo>()("herald/ApiKeysRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const prepared = yield* PreparedStatements

    const insert = (row: { accountId: string; name: string; keyHash: string; lastFour: string; scopes: ReadonlyArray<string>; createdBy: string; expiresAt: Date | null }) =>
      sql<ApiKeyRow>`
        INSERT INTO api_keys (account_id, name, key_hash, last_four, scopes, created_by, expires_at)
        VALUES (${row.accountId}, ${row.name}, ${row.keyHash}, ${row.lastFour}, ${row.scopes}::text[], ${row.createdBy}, ${row.expiresAt})
        RETURNING ${sql.literal(COLUMNS)}`.pipe(Effect.map((rows) => rows[0]!), Effect.orDie)

    const list = (accountId: string) =>
      sql<ApiKeyRow>`SELECT ${sql.literal(COLUMNS)} FROM api_keys WHERE account_id = ${accountId} ORDER BY created_at DESC`.pipe(Effect.orDie)

    const update = (accountId: string, keyId: string, changes: { name?: string; expiresAt?: Date | null }) =>
      sql<ApiKeyRow>`
        UPDATE api_keys SET
          name = COALESCE(${changes.name ?? null}, name),
          expires_at = CASE WHEN ${changes.expiresAt !== undefined} THEN ${changes.expiresAt ?? null}::timestamptz ELSE expires_at END
        WHERE account_id = ${accountId} AND key_id = ${keyId}::uuid AND revoked_at IS NULL
        RETURNING ${sql.literal(COLUMNS)}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    const revoke = (accountId: string, keyId: string) =>
      sql`
        UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
        WHERE account_id = ${accountId} AND key_id = ${keyId}::uuid
        RETURNING key_id`.pipe(Effect.map((rows) => rows.length === 1), Effect.orDie)

    // Every request with a key the cache does not hold: a prepared statement.
    const ownerByHash = prepared.prepare<KeyOwner>(`
        SELECT k.key_id, k.account_id, a.label AS account_label, a.owner_user_id, u.email AS owner_email, k.scopes, k.expires_at
        FROM api_keys k JOIN accounts a ON a.account_id = k.account_id JOIN users u ON u.user_id = a.owner_user_id
        WHERE k.key_hash = $1 AND k.revoked_at IS NULL`)

    /** The live (not revoked) key with this hash, with its account. Expiry is reported, not filtered. */
    const findByHash = (keyHash: string) => ownerByHash([keyHash]).pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    /** At most one write per key per minute, however many nodes serve it (the condition is in SQL). Not prepared: that rare. */
    const touch = (keyId: string) =>
      sql`
        UPDATE api_keys SET last_used_at = now()
        WHERE key_id = ${keyId} AND (last_used_at IS NULL OR last_used_at <= now() - interval '1 minute')`.pipe(Effect.asVoid, Effect.orDie)

    return { insert, list, update, revoke, findByHash, touch } as const
  }),
  dependencies: [PreparedStatements.Default]
}) {}
