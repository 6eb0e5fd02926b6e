import { Effect, Option, Redacted, Schema } from "effect"
import { requireOwnerSession } from "../domain/access.ts"
import { ApiKeyEndpointNotAllowed, Conflict, InvalidRequest, NotFound } from "../domain/errors.ts"
import { type Email, Password, type Role } from "../domain/identity.ts"
import type { Principal } from "../domain/signIn.ts"
import { Passwords } from "../security/Passwords.ts"
import { MembershipsRepo } from "../accounts/MembershipsRepo.ts"
import { ChangeFeed } from "../storage/ChangeFeed.ts"

const requireOwner = (principal: Principal) => requireOwnerSession(principal, "manage the team")

/** Invitations are the person's own business: a signed-in person, whatever their role; never a key. */
const requirePerson = (principal: Principal) =>
  principal.credential.kind === "user" ? Effect.void : Effect.fail(new ApiKeyEndpointNotAllowed({ message: "API keys cannot answer invitations" }))

const noInvitation = (memberId: string) => new NotFound({ message: `you have no pending invitation ${memberId}` })

/**
 * The account's team (DESIGN.md, Team). Roles and bot scopes changed here apply to the member's
 * existing tokens on their next request, since every request re-reads them. A person who already
 * has a Herald user is invited rather than added: nothing about them reaches the account, and
 * their sign-in does not change until they accept.
 */
export class Team extends Effect.Service<Team>()("herald/Team", {
  effect: Effect.gen(function*() {
    const repo = yield* MembershipsRepo
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
      repo.list(principal.accountId)

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
            return yield* new Conflict({ message: `${input.email} is already a member of this account or invited to it`, key: "email" })
          case "Added":
            // Active: a new user was made for them; invited: they had one already.
            return result.member
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
        return member
      })

    const remove = (principal: Principal, memberId: string) =>
      Effect.gen(function*() {
        yield* requireOwner(principal)
        if (!(yield* repo.remove(principal.accountId, memberId))) return yield* new NotFound({ message: `no team member ${memberId}` })
        yield* feed.committed("memberships", principal.accountId)
      })

    /** The signed-in person's pending invitations, whichever account their token is for. */
    const invitations = (principal: Principal) =>
      Effect.gen(function*() {
        yield* requirePerson(principal)
        const rows = yield* repo.invitations(principal.personUserId)
        return rows
      })

    const accept = (principal: Principal, memberId: string) =>
      Effect.gen(function*() {
        yield* requirePerson(principal)
        const accepted = yield* repo.accept(principal.personUserId, memberId)
        if (accepted === undefined) return yield* noInvitation(memberId)
        yield* feed.committed("memberships", accepted.accountId)
        return accepted
      })

    const decline = (principal: Principal, memberId: string) =>
      Effect.gen(function*() {
        yield* requirePerson(principal)
        const accountId = yield* repo.decline(principal.personUserId, memberId)
        if (accountId === undefined) return yield* noInvitation(memberId)
        yield* feed.committed("memberships", accountId)
      })

    return { list, add, update, remove, invitations, accept, decline } as const
  }),
  dependencies: [MembershipsRepo.Default, ChangeFeed.Default, Passwords.Default]
}) {}
