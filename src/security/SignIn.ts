import { Duration, Effect, Option, Redacted, Schema } from "effect"
import type { JWTPayload } from "jose"
import { InvalidCode, InvalidCredentials, InvalidRequest, TooManyAttempts, Unauthorized } from "../domain/errors.ts"
import { type Email, Password } from "../domain/identity.ts"
import {
  ACCOUNT_PICK_LIFETIME,
  AccountPickClaims,
  contractMemberId,
  type Membership,
  type Principal,
  UserClaims
} from "../domain/signIn.ts"
import { UsersRepo } from "../accounts/UsersRepo.ts"
import { ChangeFeed } from "../storage/ChangeFeed.ts"
import { makeReadCache } from "../storage/ReadCache.ts"
import { SignInRepo, type SignInUser, type TokenSubject } from "./SignInRepo.ts"
import { Passwords } from "./Passwords.ts"
import { randomCode, sha256 } from "../crypto/secrets.ts"
import { SigningKeys, TOKEN_LIFETIME } from "./SigningKeys.ts"
import { newTotpSecret, totpUri, verifyTotp } from "./Totp.ts"

/** A person signed in to one account: the token and who it names (src/http/rcs/presentSignIn.ts presents it). */
export interface SignedIn {
  readonly _tag: "SignedIn"
  readonly token: string
  readonly role: Membership["role"]
  readonly userId: string
  readonly email: string
  readonly accountLabel: string
  readonly memberId: string
  readonly assignedBots: ReadonlyArray<string>
}

/** What a password (and code) sign-in comes to: a token, a second factor to give, or an account to pick. */
export type LoginOutcome =
  | SignedIn
  | { readonly _tag: "SecondFactorRequired"; readonly message: string }
  | {
    readonly _tag: "AccountPick"
    readonly sessionToken: string
    readonly accounts: ReadonlyArray<{ readonly accountId: string; readonly role: Membership["role"]; readonly label: string; readonly memberId: string | undefined }>
  }

const RECOVERY_CODES = 10

// Verified when the e-mail is unknown, so that answering takes as long as for a known one.
const DUMMY_HASH = "$argon2id$v=19$m=19456,t=2,p=1$vmB92+jxAOlWIcdVSLbafQ$84Ql1x9WP4I1NwpT4goUoNuY5IAVBxGjenVUVEPVmrY"

const nowSeconds = () => Math.floor(Date.now() / 1000)

const notUserToken = Unauthorized.because("the token is not a user token (an account-pick session token only goes to /auth/select-account)")
const membershipGone = Unauthorized.because("the person or the account membership this token stands for no longer exists")
const passwordChanged = Unauthorized.because("the token was issued before the last password change; sign in again")
const expired = (exp: number) => Unauthorized.because(`the token expired at ${new Date(exp * 1000).toISOString()}; sign in again (POST /api/v1/rcs/auth/login)`)

/** Checked tokens kept per node; past it the memory starts over (a re-check costs one verify). */
const CHECKED_TOKENS_MAX = 50_000

/** Whether a token issued at `iat` (seconds) predates the person's last password change. */
const issuedBeforeChange = (iat: number, tokensValidAfter: Date | null) =>
  tokensValidAfter !== null && iat <= Math.floor(tokensValidAfter.getTime() / 1000)

/**
 * Sign-in (contract, "Login" state table): password, then the second factor when enabled, then the
 * account when the person belongs to several. Failures are counted per e-mail in Postgres, so the
 * lock holds whichever API node answers.
 */
export class SignIn extends Effect.Service<SignIn>()("herald/SignIn", {
  scoped: Effect.gen(function*() {
    const repo = yield* SignInRepo
    const users = yield* UsersRepo
    const passwords = yield* Passwords
    const keys = yield* SigningKeys
    const feed = yield* ChangeFeed
    // What a token stands for (account, role, scope, cut-off), read on every request: kept in
    // memory and dropped by the change feed when the membership, the person or the account
    // changes (migration 0014), so a removal or a password change still applies at once.
    const subjects = yield* makeReadCache<TokenSubject>({ tables: ["memberships", "users", "accounts"], capacity: 100_000 })
    // Tokens whose signature was checked, by their exact text: a signature check is an async
    // webcrypto call, and a client sends the same token with every request. Expiry is checked
    // again on every use.
    const checkedTokens = new Map<string, JWTPayload>()

    const verified = (token: string) =>
      Effect.suspend(() => {
        const known = checkedTokens.get(token)
        if (known !== undefined) {
          return (known.exp ?? 0) * 1000 > Date.now() ? Effect.succeed(known) : Effect.fail(expired(known.exp ?? 0))
        }
        return Effect.map(keys.verify(token).pipe(Effect.mapError((e) => Unauthorized.because(e.message))), (payload) => {
          if (checkedTokens.size >= CHECKED_TOKENS_MAX) checkedTokens.clear()
          checkedTokens.set(token, payload)
          return payload
        })
      })

    const ensureNotLocked = (email: Email) =>
      Effect.flatMap(repo.lockedFor(email), (seconds) =>
        seconds > 0
          ? Effect.fail(new TooManyAttempts({ message: `too many failed sign-ins; try again in ${Math.ceil(seconds / 60)} minutes`, retry_after_seconds: seconds }))
          : Effect.void)

    const fail = (email: Email, what: "password" | "code") =>
      Effect.flatMap(repo.recordFailure(email, what), (locked): Effect.Effect<never, TooManyAttempts | InvalidCredentials | InvalidCode> =>
        locked > 0
          ? Effect.fail(new TooManyAttempts({ message: "too many failed sign-ins; try again in 15 minutes", retry_after_seconds: locked }))
          : what === "password"
          ? Effect.fail(new InvalidCredentials({ message: "invalid e-mail or password" }))
          : Effect.fail(new InvalidCode({ message: "invalid two-factor code" })))

    /** An authenticator code, or an unused recovery code (used up by this call). */
    const secondFactorValid = (user: SignInUser, code: string) =>
      Effect.suspend(() => {
        const trimmed = code.replace(/\s+/g, "")
        if (user.totpSecret !== null && verifyTotp(user.totpSecret, trimmed)) return Effect.succeed(true)
        return /^[a-z0-9-]{6,32}$/i.test(trimmed)
          ? users.consumeRecoveryCode(user.userId, sha256(trimmed.toLowerCase().replace(/-/g, "")))
          : Effect.succeed(false)
      })

    /**
     * Tokens issued in or before the second of the last password change are refused (claims have
     * second precision). Right after a change, sign-in waits for the next second, so that its token
     * is valid now and still falls to any later change.
     */
    const issuedAt = (tokensValidAfter: Date | null): Effect.Effect<number> =>
      Effect.suspend(() => {
        const iat = nowSeconds()
        if (!issuedBeforeChange(iat, tokensValidAfter)) return Effect.succeed(iat)
        // Timers may wake a millisecond early: wait, then check again.
        const wait = (Math.floor(tokensValidAfter!.getTime() / 1000) + 1) * 1000 - Date.now()
        return Effect.zipRight(Effect.sleep(Duration.millis(Math.max(1, wait))), issuedAt(tokensValidAfter))
      })

    const tokenFor = (user: SignInUser, membership: Membership) =>
      Effect.gen(function*() {
        const iat = yield* issuedAt(user.tokensValidAfter)
        const claims = yield* Schema.encode(UserClaims)({
          type: "rcs_user",
          user_id: membership.ownerUserId,
          email: user.email,
          mid: contractMemberId(membership),
          role: membership.role,
          bots: membership.assignedBots,
          iat,
          exp: iat + Duration.toSeconds(TOKEN_LIFETIME)
        }).pipe(Effect.orDie)
        const token = yield* keys.sign(claims)
        return {
          _tag: "SignedIn",
          token,
          role: membership.role,
          userId: membership.ownerUserId,
          email: user.email,
          accountLabel: membership.accountLabel,
          memberId: contractMemberId(membership),
          assignedBots: membership.assignedBots
        } satisfies SignedIn
      })

    const login = (input: { email: Email; password: Redacted.Redacted<string>; totpCode: Option.Option<string> }) =>
      Effect.gen(function*() {
        yield* ensureNotLocked(input.email)
        const user = yield* repo.findUser(input.email)
        const passwordOk = yield* passwords.verify(user?.passwordHash ?? DUMMY_HASH, input.password)
        if (user === undefined || !passwordOk) return yield* fail(input.email, "password")
        if (user.totpEnabled) {
          if (Option.isNone(input.totpCode)) {
            return { _tag: "SecondFactorRequired", message: "two-factor code required" } satisfies LoginOutcome
          }
          if (!(yield* secondFactorValid(user, input.totpCode.value))) return yield* fail(input.email, "code")
        }
        yield* repo.clearFailures(input.email)
        const memberships = yield* repo.memberships(user.userId)
        if (memberships.length === 0) return yield* fail(input.email, "password")
        if (memberships.length === 1) return yield* tokenFor(user, memberships[0]!)
        const iat = nowSeconds()
        const sessionToken = yield* keys.sign(
          yield* Schema.encode(AccountPickClaims)({ type: "rcs_account_pick", person_id: user.userId, iat, exp: iat + Duration.toSeconds(ACCOUNT_PICK_LIFETIME) }).pipe(Effect.orDie)
        )
        return {
          _tag: "AccountPick",
          sessionToken,
          accounts: memberships.map((m) => ({
            accountId: m.accountId,
            role: m.role,
            label: m.accountLabel,
            memberId: m.role === "owner" ? undefined : m.memberId
          }))
        } satisfies LoginOutcome
      }).pipe(Effect.withSpan("SignIn.login"))

    const selectAccount = (input: { sessionToken: string; accountId: string }) =>
      Effect.gen(function*() {
        const payload = yield* keys.verify(input.sessionToken).pipe(Effect.mapError((e) => Unauthorized.because(`session_token: ${e.message}`)))
        const claims = yield* Schema.decodeUnknown(AccountPickClaims)(payload).pipe(
          Effect.mapError(() => Unauthorized.because("session_token is not the session token of a sign-in that asked for an account pick"))
        )
        const user = yield* repo.findUserById(claims.person_id)
        if (user === undefined) return yield* membershipGone
        if (issuedBeforeChange(claims.iat, user.tokensValidAfter)) return yield* passwordChanged
        const membership = (yield* repo.memberships(user.userId)).find((m) => m.accountId === input.accountId)
        if (membership === undefined) return yield* InvalidRequest.single("account_id", "is not an account of this person")
        return yield* tokenFor(user, membership)
      })

    /**
     * The principal of a bearer token. Signature, algorithm and expiry first; then role and bot
     * scope are read from the database (the claims are only hints), and tokens issued before the
     * person's last password change are refused.
     */
    const authenticate = (token: string) =>
      Effect.gen(function*() {
        const payload = yield* verified(token)
        const claims = yield* Schema.decodeUnknown(UserClaims)(payload).pipe(Effect.mapError(() => notUserToken))
        const subject = yield* subjects.get(
          `${claims.user_id}:${claims.mid}`,
          () => Effect.map(repo.tokenSubject(claims.user_id, claims.mid), (found) => found === undefined ? undefined : { accountId: found.accountId, value: found })
        )
        if (subject === undefined) return yield* membershipGone
        const { tokensValidAfter, ...standing } = subject
        if (issuedBeforeChange(claims.iat, tokensValidAfter)) return yield* passwordChanged
        return { ...standing, credential: { kind: "user" } } satisfies Principal
      })

    const person = (principal: Principal) =>
      Effect.flatMap(repo.findUserById(principal.personUserId), (user) => (user === undefined ? Effect.fail(membershipGone) : Effect.succeed(user)))

    /** Every token of the person stops working at once (tokens_valid_after moves to now). */
    const changePassword = (principal: Principal, current: Redacted.Redacted<string>, next: Redacted.Redacted<string>) =>
      Effect.gen(function*() {
        const user = yield* person(principal)
        const email = user.email.toLowerCase() as Email
        yield* ensureNotLocked(email)
        if (!(yield* passwords.verify(user.passwordHash, current))) return yield* fail(email, "password")
        yield* Schema.decode(Password)(Redacted.value(next)).pipe(
          Effect.mapError((e) => InvalidRequest.ofValue("new_password", e))
        )
        yield* users.changePassword(user.userId, yield* passwords.hash(next))
        // This node forgets the person's token subjects at once; the change feed tells the others.
        yield* feed.committed("users", principal.accountId)
        for (const membership of yield* repo.memberships(user.userId)) yield* feed.committed("users", membership.accountId)
      }).pipe(Effect.withSpan("SignIn.changePassword"))

    const setupTwoFactor = (principal: Principal) =>
      Effect.gen(function*() {
        const user = yield* person(principal)
        if (user.totpEnabled) return yield* InvalidRequest.single("", "two-factor authentication is already enabled")
        const secret = newTotpSecret()
        yield* users.setPendingTotp(user.userId, secret)
        return { secret, otpauthUri: totpUri(secret, user.email) }
      })

    const enableTwoFactor = (principal: Principal, code: string) =>
      Effect.gen(function*() {
        const user = yield* person(principal)
        if (user.totpEnabled) return yield* InvalidRequest.single("", "two-factor authentication is already enabled")
        if (user.totpSecret === null) return yield* InvalidRequest.single("", "call /auth/2fa/setup first")
        if (!verifyTotp(user.totpSecret, code.replace(/\s+/g, ""))) return yield* new InvalidCode({ message: "invalid two-factor code" })
        const codes = Array.from({ length: RECOVERY_CODES }, () => randomCode(10))
        yield* users.enableTotp(user.userId, codes.map((c) => sha256(c)))
        return { recoveryCodes: codes.map((c) => `${c.slice(0, 5)}-${c.slice(5)}`) }
      })

    const disableTwoFactor = (principal: Principal, password: Redacted.Redacted<string>, code: string) =>
      Effect.gen(function*() {
        const user = yield* person(principal)
        const email = user.email.toLowerCase() as Email
        yield* ensureNotLocked(email)
        if (!user.totpEnabled) return yield* InvalidRequest.single("", "two-factor authentication is not enabled")
        if (!(yield* passwords.verify(user.passwordHash, password))) return yield* fail(email, "password")
        if (!(yield* secondFactorValid(user, code))) return yield* fail(email, "code")
        yield* users.disableTotp(user.userId)
      })

    return { login, selectAccount, authenticate, changePassword, setupTwoFactor, enableTwoFactor, disableTwoFactor } as const
  }),
  dependencies: [SignInRepo.Default, UsersRepo.Default, Passwords.Default, SigningKeys.Default, ChangeFeed.Default]
}) {}
