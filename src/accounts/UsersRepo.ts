import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { UserNotFound } from "../domain/errors.ts"
import type { Email } from "../domain/identity.ts"

export class UsersRepo extends Effect.Service<UsersRepo>()("herald/UsersRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * Replaces the password; every token issued up to this second stops working (an issued-after
     * check: the contract's claims carry no version).
     */
    const setPassword = (email: Email, passwordHash: string) =>
      sql<{ userId: string }>`
        UPDATE users SET password_hash = ${passwordHash}, tokens_valid_after = now(), updated_at = now()
        WHERE lower(email) = ${email}
        RETURNING user_id`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) =>
          rows[0] === undefined ? Effect.fail(new UserNotFound({ message: `no user with e-mail ${email}` })) : Effect.succeed(rows[0])
        ),
        Effect.withSpan("UsersRepo.setPassword")
      )

    return { setPassword } as const
  })
}) {}
