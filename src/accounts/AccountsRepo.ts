import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { AccountNotFound, EmailTaken } from "../domain/errors.ts"
import type { Email } from "../domain/identity.ts"
import { Plan } from "../domain/plans.ts"
import { bookCredit } from "../wallet/ledgerWrites.ts"

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

const isUniqueViolation = (error: { readonly cause?: unknown }) => (error.cause as { code?: string } | undefined)?.code === "23505"

/**
 * Accounts, their owners and their wallets. SQL failures are defects here (STYLE.md): callers see
 * only the domain errors; the HTTP edge turns an unreachable database into 503.
 */
export class AccountsRepo extends Effect.Service<AccountsRepo>()("herald/AccountsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** A new account with its owner: user, account and owner membership in one transaction. */
    const createWithOwner = (input: { email: Email; passwordHash: string; label: string; plan: Plan }) =>
      Effect.gen(function*() {
        const [user] = yield* sql<{ userId: string }>`
          INSERT INTO users ${sql.insert({ email: input.email, passwordHash: input.passwordHash })}
          RETURNING user_id`
        const [account] = yield* sql<{ accountId: string }>`
          INSERT INTO accounts ${sql.insert({ label: input.label, plan: input.plan, ownerUserId: user!.userId })}
          RETURNING account_id`
        const [member] = yield* sql<{ memberId: string }>`
          INSERT INTO memberships ${sql.insert({ accountId: account!.accountId, userId: user!.userId, role: "owner" })}
          RETURNING member_id`
        return { accountId: account!.accountId, userId: user!.userId, memberId: member!.memberId }
      }).pipe(
        sql.withTransaction,
        Effect.catchTag("SqlError", (error) =>
          isUniqueViolation(error)
            ? Effect.fail(new EmailTaken({ message: `a user with e-mail ${input.email} already exists` }))
            : Effect.die(error)),
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

    return { createWithOwner, findById, getById, setPlan, credit } as const
  })
}) {}
