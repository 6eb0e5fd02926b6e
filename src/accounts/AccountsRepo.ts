import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { AccountNotFound } from "../domain/errors.ts"
import type { Email } from "../domain/identity.ts"
import { Plan } from "../domain/plans.ts"
import { PreparedStatements } from "../storage/PreparedStatements.ts"
import { bookCredit } from "../wallet/ledgerWrites.ts"
import { MembershipsRepo } from "./MembershipsRepo.ts"
import { UsersRepo } from "./UsersRepo.ts"

export class Account extends Schema.Class<Account>("Account")({
  accountId: Schema.UUID,
  label: Schema.String,
  plan: Plan,
  planRatePerMinute: Schema.NullOr(Schema.Number),
  ownerUserId: Schema.UUID,
  walletBalance: Schema.NumberFromString,
  currency: Schema.String,
  createdAt: Schema.DateFromSelf
}) {}

const decodeAccount = Schema.decodeUnknown(Account)

/** What a secret key's requests need of its account (security/SecretKeys.ts caches it per key). */
export interface SecretKeyHolder {
  readonly accountId: string
  readonly label: string
  readonly plan: Plan
  readonly planRatePerMinute: number | null
}

/**
 * The one writer of `accounts`: accounts, their owners, their plans, their secret keys and their
 * wallets. SQL failures are defects here (STYLE.md): callers see only the domain errors; the HTTP
 * edge turns an unreachable database into 503.
 */
export class AccountsRepo extends Effect.Service<AccountsRepo>()("herald/AccountsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const users = yield* UsersRepo
    const memberships = yield* MembershipsRepo
    // Every request with a secret key the cache does not hold: a prepared statement.
    const holderByHash = (yield* PreparedStatements).prepare<SecretKeyHolder>(
      "SELECT account_id, label, plan, plan_rate_per_minute FROM accounts WHERE secret_key_hash = $1"
    )

    /** A new account with its owner: user, account and owner membership in one transaction. */
    const createWithOwner = (input: { email: Email; passwordHash: string; label: string; plan: Plan }) =>
      Effect.gen(function*() {
        const userId = yield* users.create(input.email, input.passwordHash)
        const [account] = yield* sql<{ accountId: string }>`
          INSERT INTO accounts ${sql.insert({ label: input.label, plan: input.plan, ownerUserId: userId })}
          RETURNING account_id`
        const memberId = yield* memberships.insertOwner(account!.accountId, userId)
        return { accountId: account!.accountId, userId, memberId }
      }).pipe(
        sql.withTransaction,
        Effect.catchTag("SqlError", Effect.die),
        Effect.withSpan("AccountsRepo.createWithOwner")
      )

    const findById = (accountId: string) =>
      sql`SELECT * FROM accounts WHERE account_id = ${accountId}`.pipe(
        Effect.flatMap((rows) => (rows[0] === undefined ? Effect.succeed(Option.none()) : Effect.map(decodeAccount(rows[0]), Option.some))),
        Effect.orDie,
        Effect.withSpan("AccountsRepo.findById")
      )

    const getById = (accountId: string) =>
      Effect.flatMap(findById(accountId), (o) =>
        Option.match(o, {
          onNone: () => Effect.fail(new AccountNotFound({ message: `no account ${accountId}` })),
          onSome: Effect.succeed
        }))

    const setPlan = (accountId: string, plan: Plan, ratePerMinute: number | null) =>
      sql`
        UPDATE accounts SET plan = ${plan}, plan_rate_per_minute = ${ratePerMinute}, updated_at = now()
        WHERE account_id = ${accountId}
        RETURNING account_id`.pipe(
        Effect.orDie,
        Effect.flatMap((rows) => (rows.length === 0 ? Effect.fail(new AccountNotFound({ message: `no account ${accountId}` })) : getById(accountId))),
        Effect.withSpan("AccountsRepo.setPlan")
      )

    /** Tops up the wallet and books the credit in the ledger; returns the new balance. */
    const credit = (accountId: string, amount: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ walletBalance: string }>`
          UPDATE accounts SET wallet_balance = wallet_balance + ${amount}::numeric, updated_at = now()
          WHERE account_id = ${accountId}
          RETURNING wallet_balance`
        const row = rows[0]
        if (row === undefined) return yield* new AccountNotFound({ message: `no account ${accountId}` })
        yield* bookCredit(sql, { accountId, amount, balanceAfter: row.walletBalance })
        return Number(row.walletBalance)
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), Effect.withSpan("AccountsRepo.credit"))

    /** The account whose secret key has this SHA-256, if any. */
    const findBySecretKeyHash = (hash: string) => holderByHash([hash]).pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    /** Replaces the account's secret key (only its hash and last four characters are kept). */
    const setSecretKey = (accountId: string, hash: string, lastFour: string) =>
      sql`
        UPDATE accounts SET secret_key_hash = ${hash}, secret_key_last_four = ${lastFour}, secret_key_created_at = now()
        WHERE account_id = ${accountId}`.pipe(Effect.asVoid, Effect.orDie)

    /** The id of the account, if there is one (an operator named it). */
    const idOf = (accountId: string) =>
      sql<{ accountId: string }>`SELECT account_id FROM accounts WHERE account_id = ${accountId}::uuid`.pipe(
        Effect.map((rows) => rows[0]?.accountId),
        Effect.orDie
      )

    /** The accounts owned by the user with this e-mail address (lower case), oldest first. */
    const idsOwnedBy = (email: Email) =>
      sql<{ accountId: string }>`
        SELECT a.account_id FROM accounts a JOIN users u ON u.user_id = a.owner_user_id
        WHERE lower(u.email) = ${email} ORDER BY a.created_at, a.account_id`.pipe(
        Effect.map((rows) => rows.map((r) => r.accountId)),
        Effect.orDie
      )

    return { createWithOwner, findById, getById, setPlan, credit, findBySecretKeyHash, setSecretKey, idOf, idsOwnedBy } as const
  }),
  dependencies: [UsersRepo.Default, MembershipsRepo.Default, PreparedStatements.Default]
}) {}
