import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { type PagePosition, positionOf } from "../storage/pageCursor.ts"
import { PreparedStatements } from "../storage/PreparedStatements.ts"

export interface LedgerRow {
  readonly txnId: string
  readonly kind: "credit" | "charge" | "refund"
  readonly amount: string
  readonly balanceAfter: string | null
  readonly reference: string | null
  readonly createdAt: Date
  readonly position: string
}

/**
 * The wallet's reads: an account's balance and its ledger. The ledger is written by
 * ledgerWrites.ts alone, the balance by accounts/AccountsRepo.ts (credits) and the statements
 * ledgerWrites.ts composes (charges, refunds). SQL failures are defects here.
 */
export class WalletRepo extends Effect.Service<WalletRepo>()("herald/wallet/WalletRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Read by every send (the balance check): a prepared statement.
    const walletRow = (yield* PreparedStatements).prepare<{ walletBalance: string; currency: string }>(
      "SELECT wallet_balance, currency FROM accounts WHERE account_id = $1::uuid"
    )

    /** The account's balance and currency (none for an unknown account). */
    const balanceOf = (accountId: string) => walletRow([accountId]).pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    /** One page of the ledger, newest first, after `after` (`limit + 1` rows: the extra one says there is more). */
    const ledger = (accountId: string, after: PagePosition | undefined, limit: number) =>
      sql<LedgerRow>`
        SELECT txn_id::text, kind, amount::text, balance_after::text, reference, created_at, ${sql.literal(positionOf("created_at"))} AS position
        FROM wallet_transactions
        WHERE account_id = ${accountId}::uuid
          ${after === undefined ? sql`` : sql`AND (created_at, txn_id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`}
        ORDER BY created_at DESC, txn_id DESC LIMIT ${limit + 1}`.pipe(Effect.orDie)

    return { balanceOf, ledger } as const
  }),
  dependencies: [PreparedStatements.Default]
}) {}
