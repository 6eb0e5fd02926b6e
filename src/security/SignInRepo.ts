import { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"
import { LOCK_FOR, MAX_WRONG_CODES, MAX_WRONG_PASSWORDS, type Membership, type Principal } from "../domain/signIn.ts"
import type { Email } from "../domain/identity.ts"
import { SecretBox } from "../crypto/SecretBox.ts"
import { PreparedStatements } from "../storage/PreparedStatements.ts"

export interface SignInUser {
  readonly userId: string
  readonly email: string
  readonly passwordHash: string
  readonly totpSecret: string | null
  readonly totpEnabled: boolean
  readonly tokensValidAfter: Date | null
}

/** The person behind a token, their current standing in its account, and their last password change. */
export interface TokenSubject extends Omit<Principal, "credential"> {
  readonly tokensValidAfter: Date | null
}

/**
 * Sign-in's reads (users, their memberships, a token's subject) and the one writer of
 * `sign_in_attempts`, the failed-attempt counters. Users themselves are written by accounts/UsersRepo.ts.
 */
export class SignInRepo extends Effect.Service<SignInRepo>()("herald/SignInRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const prepared = yield* PreparedStatements
    const box = yield* SecretBox

    /** The first row, its TOTP seed opened: it is stored sealed (verifying a code needs the seed itself). */
    const opened = ([row]: ReadonlyArray<SignInUser>) =>
      row === undefined || row.totpSecret === null
        ? Effect.succeed(row)
        : Effect.map(box.revealOrDie(row.totpSecret, "two-factor seed"), (totpSecret): SignInUser => ({ ...row, totpSecret }))

    const findUser = (email: Email) =>
      sql<SignInUser>`
        SELECT user_id, email, password_hash, totp_secret, totp_enabled, tokens_valid_after
        FROM users WHERE lower(email) = ${email}`.pipe(Effect.orDie, Effect.flatMap(opened))

    const findUserById = (userId: string) =>
      sql<SignInUser>`
        SELECT user_id, email, password_hash, totp_secret, totp_enabled, tokens_valid_after
        FROM users WHERE user_id = ${userId}`.pipe(Effect.orDie, Effect.flatMap(opened))

    /** The accounts the person may sign in to: an invitation counts only once accepted. */
    const memberships = (userId: string) =>
      sql<Membership>`
        SELECT m.account_id, a.label AS account_label, a.owner_user_id, m.member_id, m.role, m.assigned_bots
        FROM memberships m JOIN accounts a ON a.account_id = m.account_id
        WHERE m.user_id = ${userId} AND m.status = 'active' ORDER BY a.created_at`.pipe(Effect.orDie)

    // Read by every request with a user token the cache does not hold: prepared statements.
    const ownerSubject = prepared.prepare<TokenSubject>(`
          SELECT a.account_id, a.label AS account_label, a.owner_user_id, u.user_id AS person_user_id, u.email,
                 '' AS member_id, 'owner' AS role, ARRAY['*'] AS bots, u.tokens_valid_after
          FROM accounts a JOIN users u ON u.user_id = a.owner_user_id
          WHERE a.owner_user_id = $1
          ORDER BY a.created_at LIMIT 1`)
    const memberSubject = prepared.prepare<TokenSubject>(`
          SELECT a.account_id, a.label AS account_label, a.owner_user_id, u.user_id AS person_user_id, u.email,
                 m.member_id::text AS member_id, m.role, m.assigned_bots AS bots, u.tokens_valid_after
          FROM memberships m JOIN accounts a ON a.account_id = m.account_id JOIN users u ON u.user_id = m.user_id
          WHERE m.member_id = $1::uuid AND a.owner_user_id = $2::uuid AND m.status = 'active'`)
    /**
     * The subject of a token: the account is the one owned by `ownerUserId`; the person is its owner
     * when `memberId` is empty, else that member. None when the membership is gone.
     */
    const tokenSubject = (ownerUserId: string, memberId: string) =>
      (memberId === "" ? ownerSubject([ownerUserId]) : memberSubject([memberId, ownerUserId])).pipe(
        Effect.map((rows) => rows[0]),
        // No span: this runs for every request with a user token whose subject is not cached, and
        // a span (even with no tracer) copies the fiber's context.
        Effect.orDie
      )

    /** Seconds the e-mail is still locked for, or 0. */
    const lockedFor = (email: Email) =>
      sql<{ seconds: number }>`
        SELECT ceil(extract(epoch FROM locked_until - now()))::int AS seconds
        FROM sign_in_attempts WHERE email = ${email} AND locked_until > now()`.pipe(
        Effect.map((rows) => rows[0]?.seconds ?? 0),
        Effect.orDie
      )

    /**
     * Counts one failure atomically (any number of API nodes may count at once) and locks the
     * e-mail when the count reaches its limit. Returns the seconds locked, 0 when not locked.
     */
    const recordFailure = (email: Email, what: "password" | "code") => {
      const limit = what === "password" ? MAX_WRONG_PASSWORDS : MAX_WRONG_CODES
      const column = what === "password" ? "failed_passwords" : "failed_codes"
      const lock = `${Duration.toSeconds(LOCK_FOR)} seconds`
      return sql<{ count: number }>`
        INSERT INTO sign_in_attempts (email, ${sql(column)}) VALUES (${email}, 1)
        ON CONFLICT (email) DO UPDATE SET ${sql(column)} = sign_in_attempts.${sql(column)} + 1, updated_at = now()
        RETURNING ${sql(column)} AS count`.pipe(
        Effect.flatMap(([row]) =>
          row!.count >= limit
            ? sql`
                UPDATE sign_in_attempts SET locked_until = now() + ${lock}::interval, failed_passwords = 0, failed_codes = 0
                WHERE email = ${email}`.pipe(Effect.as(Duration.toSeconds(LOCK_FOR)))
            : Effect.succeed(0)
        ),
        Effect.orDie
      )
    }

    /** A successful sign-in clears the counters. */
    const clearFailures = (email: Email) => sql`DELETE FROM sign_in_attempts WHERE email = ${email}`.pipe(Effect.asVoid, Effect.orDie)

    return {
      findUser,
      findUserById,
      memberships,
      tokenSubject,
      lockedFor,
      recordFailure,
      clearFailures
    } as const
  }),
  dependencies: [PreparedStatements.Default, SecretBox.Default]
}) {}
