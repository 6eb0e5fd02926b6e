import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** A console session's row: the user token it acts with is sealed (SecretBox). */
export interface ConsoleSessionRow {
  readonly accountId: string
  readonly sealedToken: string
  readonly csrfToken: string
  readonly expiresAt: Date
}

/** The one writer of `console_sessions` (rows keyed by the SHA-256 of the cookie's value). SQL failures are defects here. */
export class ConsoleSessionsRepo extends Effect.Service<ConsoleSessionsRepo>()("herald/console/ConsoleSessionsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = (sessionHash: Uint8Array, row: ConsoleSessionRow) =>
      sql`
        INSERT INTO console_sessions (session_hash, account_id, sealed_token, csrf_token, expires_at)
        VALUES (${sessionHash}, ${row.accountId}::uuid, ${row.sealedToken}, ${row.csrfToken}, ${row.expiresAt})`.pipe(Effect.asVoid, Effect.orDie)

    const find = (sessionHash: Uint8Array) =>
      sql<ConsoleSessionRow>`
        SELECT account_id::text, sealed_token, csrf_token, expires_at FROM console_sessions
        WHERE session_hash = ${sessionHash}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    const remove = (sessionHash: Uint8Array) =>
      sql`DELETE FROM console_sessions WHERE session_hash = ${sessionHash}`.pipe(Effect.asVoid, Effect.orDie)

    /** Expired rows (refused when read anyway): keeps the table small. Fails as SqlError for the sweep to log. */
    const sweep = sql`DELETE FROM console_sessions WHERE expires_at < now()`

    return { insert, find, remove, sweep } as const
  })
}) {}
