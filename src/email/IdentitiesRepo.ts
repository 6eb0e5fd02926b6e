import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { isUuid } from "../domain/ids.ts"
import type { PagePosition } from "../storage/pageCursor.ts"
import { isUniqueViolation } from "../storage/sqlState.ts"

/** An identity a partner sends from: an address or a domain. */
export interface Identity {
  readonly identityId: string
  readonly identity: string
  readonly type: "EMAIL_ADDRESS" | "DOMAIN"
  readonly status: "PENDING" | "VERIFIED" | "FAILED"
  readonly dkimTokens: ReadonlyArray<string> | null
  /** To the microsecond (`YYYY-MM-DDTHH:MM:SS.ffffffZ`), as a cursor carries it. */
  readonly createdAt: string
}

const COLUMNS = `identity_id::text, identity, type, status, dkim_tokens,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at`

/** The one writer of `email_identities`. */
export class IdentitiesRepo extends Effect.Service<IdentitiesRepo>()("herald/email/IdentitiesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** The new identity; undefined when the partner has it already. */
    const insert = Effect.fn("IdentitiesRepo.insert")(function*(input: {
      readonly partnerId: string
      readonly identity: string
      readonly type: "EMAIL_ADDRESS" | "DOMAIN"
      readonly verifyTokenHash: string | null
      readonly dkimTokens: ReadonlyArray<string> | null
      readonly dkimPrivateKey: string | null
    }) {
      const rows = yield* sql<Identity>`
          INSERT INTO email_identities (partner_id, identity, type, verify_token_hash, dkim_tokens, dkim_private_key)
          VALUES (${input.partnerId}::uuid, ${input.identity}, ${input.type}, ${input.verifyTokenHash},
                  ${input.dkimTokens}, ${input.dkimPrivateKey})
          RETURNING ${sql.literal(COLUMNS)}`.pipe(
        Effect.catchIf(isUniqueViolation, () => Effect.succeed([] as ReadonlyArray<Identity>))
      )
      return rows[0]
    }, Effect.orDie)

    const findById = Effect.fn("IdentitiesRepo.findById")(function*(partnerId: string, id: string) {
      const [row] = isUuid(id)
        ? yield* sql<Identity>`SELECT ${sql.literal(COLUMNS)} FROM email_identities WHERE identity_id = ${id}::uuid AND partner_id = ${partnerId}::uuid`
        : []
      return row
    }, Effect.orDie)

    const page = Effect.fn("IdentitiesRepo.page")(function*(partnerId: string, after: PagePosition | undefined, take: number) {
      return yield* sql<Identity>`
            SELECT ${sql.literal(COLUMNS)} FROM email_identities t
            WHERE ${sql.and([
        sql`partner_id = ${partnerId}::uuid`,
        ...(after === undefined ? [] : [sql`(created_at, identity_id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`])
      ])}
            ORDER BY t.created_at DESC, t.identity_id DESC LIMIT ${take}`
    }, Effect.orDie)

    const remove = Effect.fn("IdentitiesRepo.remove")(function*(id: string) {
      yield* sql`DELETE FROM email_identities WHERE identity_id = ${id}::uuid`
    }, Effect.orDie)

    /** An address the relay refused for good cannot be verified. */
    const markFailed = Effect.fn("IdentitiesRepo.markFailed")(function*(identityId: string) {
      yield* sql`UPDATE email_identities SET status = 'FAILED', verify_token_hash = NULL WHERE identity_id = ${identityId}::uuid`
    }, Effect.orDie)

    /** The link of the verification mail (one use): the identity it verified, or undefined. */
    const verifyByTokenHash = Effect.fn("IdentitiesRepo.verifyByTokenHash")(function*(tokenHash: string) {
      const [row] = yield* sql<{ identity: string }>`
          UPDATE email_identities SET status = 'VERIFIED', verified_at = now(), verify_token_hash = NULL
          WHERE verify_token_hash = ${tokenHash} AND status = 'PENDING' RETURNING identity`
      return row?.identity
    }, Effect.orDie)

    /** The operator's verification; undefined when there is no such identity. */
    const verifyById = Effect.fn("IdentitiesRepo.verifyById")(function*(identityId: string) {
      const [row] = isUuid(identityId)
        ? yield* sql<{ identityId: string; partnerId: string; identity: string; type: string; status: string }>`
              UPDATE email_identities SET status = 'VERIFIED', verified_at = now(), verify_token_hash = NULL
              WHERE identity_id = ${identityId}::uuid RETURNING identity_id::text, partner_id::text, identity, type, status`
        : []
      return row
    }, Effect.orDie)

    /** The verified identities among these names (addresses and domains). */
    const verifiedNames = Effect.fn("IdentitiesRepo.verifiedNames")(function*(partnerId: string, names: ReadonlyArray<string>) {
      const rows = yield* sql<{ identity: string }>`
          SELECT identity FROM email_identities
          WHERE partner_id = ${partnerId}::uuid AND status = 'VERIFIED' AND identity = ANY(${names}::text[])`
      return rows.map((row) => row.identity)
    }, Effect.orDie)

    /** The verified sending domains among these with a (sealed) signing key. */
    const dkimRows = Effect.fn("IdentitiesRepo.dkimRows")(function*(partnerId: string, domains: ReadonlyArray<string>) {
      return yield* sql<{ identity: string; dkimTokens: ReadonlyArray<string>; dkimPrivateKey: string }>`
          SELECT identity, dkim_tokens, dkim_private_key FROM email_identities
          WHERE partner_id = ${partnerId}::uuid AND type = 'DOMAIN' AND status = 'VERIFIED'
            AND dkim_private_key IS NOT NULL AND identity = ANY(${domains}::text[])`
    }, Effect.orDie)

    return { insert, findById, page, remove, markFailed, verifyByTokenHash, verifyById, verifiedNames, dkimRows } as const
  })
}) {}
