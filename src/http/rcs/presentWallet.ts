import type { LedgerRow, WalletPage } from "../../wallet/Wallet.ts"

/** A ledger row as the wallet's and billing's answers show it (LedgerTransaction in WalletApi.ts). */
export const presentLedgerRow = (row: LedgerRow) => ({
  txn_id: row.txnId,
  kind: row.kind,
  amount: Number(row.amount),
  balance_after: row.balanceAfter === null ? null : Number(row.balanceAfter),
  reference: row.reference,
  created_at: new Date(row.createdAt).toISOString()
})

/** GET /api/v1/rcs/wallet's answer. */
export const presentWalletPage = (page: WalletPage) => ({
  success: true as const,
  balance: page.balance,
  currency: page.currency,
  transactions: page.transactions.map(presentLedgerRow),
  next_cursor: page.nextCursor ?? ""
})
