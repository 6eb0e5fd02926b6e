import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { requireRole } from "../domain/access.ts"
import type { Principal } from "../domain/signIn.ts"
import { type PagePosition, pageOf, positionOf, readCursor } from "../storage/pageCursor.ts"

export const LEDGER_LIMIT_DEFAULT = 100
export const LEDGER_LIMIT_MAX = 1000

export interface LedgerRow {
  readonly txnId: string
  readonly kind: "credit" | "charge" | "refund"
  readonly amount: string
  readonly balanceAfter: string | null
  readonly reference: string | null
  readonly createdAt: Date
  readonly position: string
}

/** A ledger row as the wallet's and billing's answers show it. */
export const presentLedgerRow = (row: LedgerRow) => ({
  txn_id: row.txnId,
  kind: row.kind,
  amount: Number(row.amount),
  balance_after: row.balanceAfter === null ? null : Number(row.balanceAfter),
  reference: row.reference,
  created_at: new Date(row.createdAt).toISOString()
})

/**
 * The account's wallet as its owner reads it (billing is the owner's, DESIGN.md Team): the
 * balance and the ledger, newest first. Credits come from `herald admin wallet-credit`; a charge is
 * booked once per confirmed message (reference = message_id), a refund when the gateway rejects a
 * message after taking it. Charges booked many at a time carry no balance_after.
 */
export class Wallet extends Effect.Service<Wallet>()("herald/wallet/Wallet", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /** One page of the ledger, newest first, after `after` (`limit + 1` rows: the extra one says there is more). */
    const ledger = (accountId: string, after: PagePosition | undefined, limit: number) =>
      sql<LedgerRow>`
        SELECT txn_id::text, kind, amount::text, balance_after::text, reference, created_at, ${sql.literal(positionOf("created_at"))} AS position
        FROM wallet_transactions
        WHERE account_id = ${accountId}::uuid
          ${after === undefined ? sql`` : sql`AND (created_at, txn_id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`}
        ORDER BY created_at DESC, txn_id DESC LIMIT ${limit + 1}`

    const read = (principal: Principal, query: { readonly limit?: number | undefined; readonly cursor?: string | undefined }) =>
      Effect.gen(function*() {
        yield* requireRole(principal, "owner", "read the wallet")
        const after = yield* readCursor(query.cursor)
        const limit = Math.min(query.limit ?? LEDGER_LIMIT_DEFAULT, LEDGER_LIMIT_MAX)
        const wallet = yield* walletOf(principal.accountId)
        const rows = yield* ledger(principal.accountId, after, limit)
        const page = pageOf(rows, limit, (row) => ({ createdAt: row.position, id: row.txnId }))
        return {
          success: true as const,
          ...wallet,
          transactions: page.rows.map(presentLedgerRow),
          next_cursor: page.nextCursor ?? ""
        }
      }).pipe(Effect.orDie)

    /** The account's balance and its currency. */
    const walletOf = (accountId: string) =>
      sql<{ walletBalance: string; currency: string }>`SELECT wallet_balance, currency FROM accounts WHERE account_id = ${accountId}::uuid`.pipe(
        Effect.map(([row]) => ({ balance: Number(row?.walletBalance ?? 0), currency: row?.currency ?? "INR" })),
        Effect.orDie
      )

    /** The balance a send is checked against (a read, not a reservation). */
    const balanceOf = (accountId: string) => Effect.map(walletOf(accountId), (wallet) => wallet.balance)

    return { read, ledger, walletOf, balanceOf } as const
  })
}) {}
