import { Duration, Schema } from "effect"
import { Role } from "./identity.ts"

/** Sign-in limits of the contract: per e-mail, not per IP. */
export const MAX_WRONG_PASSWORDS = 10
export const MAX_WRONG_CODES = 5
export const LOCK_FOR = Duration.minutes(15)
export const ACCOUNT_PICK_LIFETIME = Duration.minutes(15)

/** Claims of a user token, exactly as the contract lists them. */
export const UserClaims = Schema.Struct({
  type: Schema.Literal("rcs_user"),
  user_id: Schema.UUID,
  email: Schema.String,
  mid: Schema.String,
  role: Role,
  bots: Schema.Array(Schema.String),
  iat: Schema.Int,
  exp: Schema.Int
})
export type UserClaims = typeof UserClaims.Type

/** The short-lived token of the need_account_pick answer: it only permits select-account. */
export const AccountPickClaims = Schema.Struct({
  type: Schema.Literal("rcs_account_pick"),
  person_id: Schema.UUID,
  iat: Schema.Int,
  exp: Schema.Int
})

/** Who a request acts as, re-derived from the database on every request (claims are hints). */
export interface Principal {
  readonly accountId: string
  readonly accountLabel: string
  /** The account owner's user id: `user_id` of the contract. */
  readonly ownerUserId: string
  /** The person signed in (the owner, or the team member). */
  readonly personUserId: string
  readonly email: string
  /** Empty for the owner. */
  readonly memberId: string
  readonly role: Role
  /** ["*"] for every bot, including later ones. */
  readonly bots: ReadonlyArray<string>
  /** How the request authenticated: a user token, or an API key with its scopes. */
  readonly credential: { readonly kind: "user" } | { readonly kind: "api_key"; readonly keyId: string; readonly scopes: ReadonlyArray<string> }
}

/** A membership as sign-in sees it. */
export interface Membership {
  readonly accountId: string
  readonly accountLabel: string
  readonly ownerUserId: string
  readonly memberId: string
  readonly role: Role
  readonly assignedBots: ReadonlyArray<string>
}

/** Owners appear as member "" in tokens and answers; team members by their member id. */
export const contractMemberId = (m: Membership): string => (m.role === "owner" ? "" : m.memberId)
