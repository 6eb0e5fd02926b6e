import { Effect, Option, Redacted, Schema } from "effect"
import { requireOwnerSession } from "../domain/access.ts"
import { Conflict, InvalidRequest, NotFound } from "../domain/errors.ts"
import { type Email, Password, type Role } from "../domain/identity.ts"
import type { Principal } from "../domain/signIn.ts"
import { Passwords } from "../security/Passwords.ts"
import { type MemberRow, TeamRepo } from "../storage/TeamRepo.ts"
import { ChangeFeed } from "../storage/ChangeFeed.ts"

const present = (m: MemberRow) => ({
  member_id: m.role === "owner" ? "" : m.memberId,
  user_id: m.userId,
  email: m.email,
  role: m.role,
  assigned_bots: m.assignedBots,
  created_at: new Date(m.createdAt).toISOString()
})

const requireOwner = (principal: Principal) => requireOwnerSession(principal, "manage the team")

/**
 * The account's team (DESIGN.md, Team). Roles and bot scopes changed here apply to the member's
 * existing tokens on their next request, since every request re-reads them.
 */
export class Team extends Effect.Service<Team>()("herald/Team", {
  effect: Effect.gen(function*() {
    const repo = yield* TeamRepo
    const feed = yield* ChangeFeed
    const passwords = yield* Passwords

    /** ["*"], or bots of this account (unknown ids are refused, nothing is written). */
    const validBots = (principal: Principal, bots: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        if (bots.length === 0) return yield* InvalidRequest.single("assigned_bots", "must be [\"*\"] or a list of bot ids")
        if (bots.includes("*")) {
          return bots.length === 1 ? bots : yield* InvalidRequest.single("assigned_bots", "\"*\" cannot be combined with bot ids")
        }
        const known = yield* repo.existingBots(principal.accountId, bots)
        const unknown = bots.filter((b) => !known.has(b))
        return unknown.length === 0 ? [...new Set(bots)] : yield* InvalidRequest.single("assigned_bots", `unknown bots: ${unknown.join(", ")}`)
      })

    const list = (principal: Principal) =>
      Effect.map(repo.list(principal.accountId), (members) => ({ success: true as const, members: members.map(present) }))

    const add = (principal: Principal, input: { email: Email; role: Exclude<Role, "owner">; assignedBots: ReadonlyArray<string>; password: Option.Option<Redacted.Redacted<string>> }) =>
      Effect.gen(function*() {
        yield* requireOwner(principal)
        const bots = yield* validBots(principal, input.assignedBots)
        if (Option.isSome(input.password)) {
          yield* Schema.decode(Password)(Redacted.value(input.password.value)).pipe(
            Effect.mapError((e) => InvalidRequest.ofValue("password", e))
          )
        }
        const result = yield* repo.add({
          accountId: principal.accountId,
          email: input.email,
          role: input.role,
          assignedBots: bots,
          passwordHash: () => (Option.isSome(input.password) ? passwords.hash(input.password.value) : Effect.succeed(undefined))
        })
        switch (result._tag) {
          case "PasswordRequired":
            return yield* InvalidRequest.single("password", "is required for a person who has no Herald user yet")
          case "AlreadyMember":
            return yield* new Conflict({ message: `${input.email} is already a member of this account`, key: "email" })
          case "Added":
            return { success: true as const, member: present(result.member), user_created: result.userCreated }
        }
      })

    const update = (principal: Principal, memberId: string, changes: { role?: Exclude<Role, "owner">; assignedBots?: ReadonlyArray<string> }) =>
      Effect.gen(function*() {
        yield* requireOwner(principal)
        const bots = changes.assignedBots === undefined ? undefined : yield* validBots(principal, changes.assignedBots)
        const member = yield* repo.update(principal.accountId, memberId, { role: changes.role, assignedBots: bots })
        if (member === undefined) return yield* new NotFound({ message: `no team member ${memberId}` })
        // This node's cached token subjects forget at once; the change feed tells the others.
        yield* feed.committed("memberships", principal.accountId)
        return { success: true as const, member: present(member) }
      })

    const remove = (principal: Principal, memberId: string) =>
      Effect.gen(function*() {
        yield* requireOwner(principal)
        if (!(yield* repo.remove(principal.accountId, memberId))) return yield* new NotFound({ message: `no team member ${memberId}` })
        yield* feed.committed("memberships", principal.accountId)
        return { success: true as const }
      })

    return { list, add, update, remove } as const
  })
}) {}
