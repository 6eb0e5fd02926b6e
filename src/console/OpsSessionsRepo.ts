import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The one writer of `ops_sessions`: operator sign-ins (the SHA-256 of their cookie). SQL failures are defects here. */
export class OpsSessionsRepo extends Effect.Service<OpsSessionsRepo>()("herald/console/OpsSessionsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** Whether the session is there and not expired. */
    const isLive = (sessionHash: Uint8Array) =>
      sql`SELECT 1 FROM ops_sessions WHERE session_hash = ${sessionHash} AND expires_at > now()`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    const insert = (sessionHash: Uint8Array, expiresAt: Date) =>
      sql`INSERT INTO ops_sessions (session_hash, expires_at) VALUES (${sessionHash}, ${expiresAt})`.pipe(Effect.asVoid, Effect.orDie)

    const remove = (sessionHash: Uint8Array) => sql`DELETE FROM ops_sessions WHERE session_hash = ${sessionHash}`.pipe(Effect.asVoid, Effect.orDie)

    /** Expired rows (refused when read anyway): keeps the table small. Fails as SqlError for the sweep to log. */
    const sweep = sql`DELETE FROM ops_sessions WHERE expires_at < now()`

    return { isLive, insert, remove, sweep } as const
  })
}) {}
