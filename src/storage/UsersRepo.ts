import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { UserNotFound } from "../domain/errors.ts"
import type { Email } from "../domain/identity.ts"

export class UsersRepo extends Effect.Service<UsersRepo>()("herald/UsersRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * Replaces the password and bumps the token version, which invalidates every token issued
     * before (tokens carry the version they were issued under).
     */
    const setPassword = (email: Email, passwordHash: string) =>
      sql<{ userId: string; tokenVersion: number }>`
        UPDATE users SET password_hash = ${passwordHash}, token_version = token_version + 1, updated_at = now()
        WHERE lower(email) = ${email}
        RETURNING user_id, token_version`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) =>
          rows[0] === undefined ? Effect.fail(new UserNotFound({ message: `no user with e-mail ${email}` })) : Effect.succeed(rows[0])
        ),
        Effect.withSpan("UsersRepo.setPassword")
      )

    return { setPassword } as const
  })
}) {}
