import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { SecretBox } from "../crypto/SecretBox.ts"
import { EmailTaken, UserNotFound } from "../domain/errors.ts"
import type { Email } from "../domain/identity.ts"
import { isUniqueViolation } from "../storage/sqlState.ts"

/**
 * The one writer of `users` and `user_recovery_codes`: people, their passwords and their second
 * factor. Sign-in reads users (security/SignInRepo.ts); accounts and memberships create them here.
 * SQL failures are defects here (STYLE.md).
 */
export class UsersRepo extends Effect.Service<UsersRepo>()("herald/UsersRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const box = yield* SecretBox

    /** A new person; EmailTaken when a user already has the address. */
    const create = (email: Email, passwordHash: string) =>
      sql<{ userId: string }>`
        INSERT INTO users ${sql.insert({ email, passwordHash })}
        RETURNING user_id`.pipe(
        Effect.map((rows) => rows[0]!.userId),
        Effect.catchTag("SqlError", (error) =>
          isUniqueViolation(error)
            ? Effect.fail(new EmailTaken({ message: `a user with e-mail ${email} already exists` }))
            : Effect.die(error)),
        Effect.withSpan("UsersRepo.create")
      )

    /** The user with this address (compared in lower case), if any. */
    const idByEmail = (email: Email) =>
      sql<{ userId: string }>`SELECT user_id FROM users WHERE lower(email) = ${email}`.pipe(
        Effect.map((rows) => rows[0]?.userId),
        Effect.orDie
      )

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

    /** The person's own password change (signed in): as `setPassword`, by user id. */
    const changePassword = (userId: string, passwordHash: string) =>
      sql`
        UPDATE users SET password_hash = ${passwordHash}, tokens_valid_after = now(), updated_at = now()
        WHERE user_id = ${userId}`.pipe(Effect.asVoid, Effect.orDie)

    /** The seed of a 2FA setup not confirmed yet, stored sealed (verifying a code needs the seed itself). */
    const setPendingTotp = (userId: string, secret: string) =>
      sql`UPDATE users SET totp_secret = ${box.seal(secret)}, updated_at = now() WHERE user_id = ${userId} AND NOT totp_enabled`.pipe(Effect.asVoid, Effect.orDie)

    /** Turns 2FA on with a fresh set of recovery codes (only their hashes are stored). */
    const enableTotp = (userId: string, recoveryHashes: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        yield* sql`UPDATE users SET totp_enabled = true, totp_enabled_at = now(), updated_at = now() WHERE user_id = ${userId}`
        yield* sql`DELETE FROM user_recovery_codes WHERE user_id = ${userId}`
        yield* sql`INSERT INTO user_recovery_codes (user_id, code_hash) SELECT ${userId}, unnest(${recoveryHashes}::text[])`
      }).pipe(sql.withTransaction, Effect.orDie)

    const disableTotp = (userId: string) =>
      Effect.gen(function*() {
        yield* sql`UPDATE users SET totp_enabled = false, totp_secret = NULL, totp_enabled_at = NULL, updated_at = now() WHERE user_id = ${userId}`
        yield* sql`DELETE FROM user_recovery_codes WHERE user_id = ${userId}`
      }).pipe(sql.withTransaction, Effect.orDie)

    /** Uses a recovery code once: true when it existed and was unused. */
    const consumeRecoveryCode = (userId: string, codeHash: string) =>
      sql`
        UPDATE user_recovery_codes SET used_at = now()
        WHERE user_id = ${userId} AND code_hash = ${codeHash} AND used_at IS NULL
        RETURNING code_hash`.pipe(Effect.map((rows) => rows.length === 1), Effect.orDie)

    return { create, idByEmail, setPassword, changePassword, setPendingTotp, enableTotp, disableTotp, consumeRecoveryCode } as const
  }),
  dependencies: [SecretBox.Default]
}) {}
