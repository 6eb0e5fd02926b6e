import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Email, Role } from "../domain/identity.ts"
import { UsersRepo } from "./UsersRepo.ts"

/** `active` counts; `invited` waits for the person to accept it (migration 0035) and grants nothing. */
export type MemberStatus = "active" | "invited"

export interface MemberRow {
  readonly memberId: string
  readonly userId: string
  readonly email: string
  readonly role: Role
  readonly assignedBots: ReadonlyArray<string>
  readonly status: MemberStatus
  readonly createdAt: Date
}

/** A pending invitation as the invited person sees it: the account that invites them and how. */
export interface InvitationRow {
  readonly memberId: string
  readonly accountId: string
  readonly accountLabel: string
  /** Owners' memberships are made active with their account: never invited. */
  readonly role: Exclude<Role, "owner">
  readonly assignedBots: ReadonlyArray<string>
  readonly createdAt: Date
}

/**
 * The one writer of `memberships`: who belongs to which account, in what role, with which bots
 * (the team, and each account's owner). SQL failures are defects here (STYLE.md).
 */
export class MembershipsRepo extends Effect.Service<MembershipsRepo>()("herald/MembershipsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const users = yield* UsersRepo

    const list = (accountId: string) =>
      sql<MemberRow>`
        SELECT m.member_id, m.user_id, u.email, m.role, m.assigned_bots, m.status, m.created_at
        FROM memberships m JOIN users u ON u.user_id = m.user_id
        WHERE m.account_id = ${accountId} ORDER BY m.created_at`.pipe(Effect.orDie)

    const find = (accountId: string, memberId: string) =>
      sql<MemberRow>`
        SELECT m.member_id, m.user_id, u.email, m.role, m.assigned_bots, m.status, m.created_at
        FROM memberships m JOIN users u ON u.user_id = m.user_id
        WHERE m.account_id = ${accountId} AND m.member_id::text = ${memberId}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    /** Bots of the account among `botIds` (to validate an assignment). */
    const existingBots = (accountId: string, botIds: ReadonlyArray<string>) =>
      sql<{ botId: string }>`SELECT bot_id FROM bots WHERE account_id = ${accountId} AND bot_id::text = ANY(${botIds}::text[])`.pipe(
        Effect.map((rows) => new Set(rows.map((r) => r.botId))),
        Effect.orDie
      )

    /**
     * Adds a member. An e-mail without a user gets one with `passwordHash` (which the caller must
     * then provide) and an active membership; a person who already has a user keeps their password
     * and sign-in, and is only invited: the membership waits for them to accept it.
     */
    const add = (input: { accountId: string; email: Email; role: Role; assignedBots: ReadonlyArray<string>; passwordHash: () => Effect.Effect<string | undefined> }) =>
      Effect.gen(function*() {
        let userId = yield* users.idByEmail(input.email)
        const status: MemberStatus = userId === undefined ? "active" : "invited"
        if (userId === undefined) {
          const hash = yield* input.passwordHash()
          if (hash === undefined) return { _tag: "PasswordRequired" } as const
          userId = yield* users.create(input.email, hash)
        }
        const rows = yield* sql<MemberRow>`
          INSERT INTO memberships (account_id, user_id, role, assigned_bots, status)
          VALUES (${input.accountId}, ${userId}, ${input.role}, ${input.assignedBots}::text[], ${status})
          ON CONFLICT (account_id, user_id) DO NOTHING
          RETURNING member_id, user_id, ${input.email} AS email, role, assigned_bots, status, created_at`
        if (rows[0] === undefined) return { _tag: "AlreadyMember" } as const
        return { _tag: "Added", member: rows[0] } as const
      }).pipe(
        sql.withTransaction,
        // Two owners adding the same new e-mail at once: one creates the user, the other retries.
        Effect.retry({ times: 1, while: (e) => e._tag === "EmailTaken" }),
        Effect.catchTag("SqlError", Effect.die),
        Effect.catchTag("EmailTaken", Effect.die)
      )

    /** The owner's membership of a new account (accounts/AccountsRepo.ts creates both in one transaction). */
    const insertOwner = (accountId: string, userId: string) =>
      sql<{ memberId: string }>`
        INSERT INTO memberships ${sql.insert({ accountId, userId, role: "owner" })}
        RETURNING member_id`.pipe(Effect.map((rows) => rows[0]!.memberId), Effect.orDie)

    const update = (accountId: string, memberId: string, changes: { role?: Role; assignedBots?: ReadonlyArray<string> }) =>
      sql<MemberRow>`
        UPDATE memberships m SET
          role = COALESCE(${changes.role ?? null}, m.role),
          assigned_bots = COALESCE(${changes.assignedBots ?? null}::text[], m.assigned_bots)
        FROM users u
        WHERE m.account_id = ${accountId} AND m.member_id::text = ${memberId} AND m.role <> 'owner' AND u.user_id = m.user_id
        RETURNING m.member_id, m.user_id, u.email, m.role, m.assigned_bots, m.status, m.created_at`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    const remove = (accountId: string, memberId: string) =>
      sql`DELETE FROM memberships WHERE account_id = ${accountId} AND member_id::text = ${memberId} AND role <> 'owner' RETURNING member_id`.pipe(
        Effect.map((rows) => rows.length === 1),
        Effect.orDie
      )

    /** The person's pending invitations, oldest first. */
    const invitations = (userId: string) =>
      sql<InvitationRow>`
        SELECT m.member_id, m.account_id, a.label AS account_label, m.role, m.assigned_bots, m.created_at
        FROM memberships m JOIN accounts a ON a.account_id = m.account_id
        WHERE m.user_id = ${userId} AND m.status = 'invited' ORDER BY m.created_at`.pipe(Effect.orDie)

    /** Makes the person's own invitation an active membership; undefined when they have no such invitation. */
    const accept = (userId: string, memberId: string) =>
      sql<InvitationRow>`
        UPDATE memberships m SET status = 'active'
        FROM accounts a
        WHERE m.member_id::text = ${memberId} AND m.user_id = ${userId} AND m.status = 'invited' AND a.account_id = m.account_id
        RETURNING m.member_id, m.account_id, a.label AS account_label, m.role, m.assigned_bots, m.created_at`.pipe(
        Effect.map((rows) => rows[0]),
        Effect.orDie
      )

    /** Deletes the person's own invitation; the account id it was for, undefined when they have no such invitation. */
    const decline = (userId: string, memberId: string) =>
      sql<{ accountId: string }>`
        DELETE FROM memberships WHERE member_id::text = ${memberId} AND user_id = ${userId} AND status = 'invited'
        RETURNING account_id`.pipe(Effect.map((rows) => rows[0]?.accountId), Effect.orDie)

    return { list, find, existingBots, add, insertOwner, update, remove, invitations, accept, decline } as const
  }),
  dependencies: [UsersRepo.Default]
}) {}
