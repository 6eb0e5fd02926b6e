import { Effect } from "effect"
import { requireRole } from "../domain/access.ts"
import type { Principal } from "../domain/signIn.ts"
import { type CursorScope, ListCursors } from "../storage/ListCursors.ts"
import { type LedgerRow, WalletRepo } from "./WalletRepo.ts"

export type { LedgerRow } from "./WalletRepo.ts"

export const LEDGER_LIMIT_DEFAULT = 100
export const LEDGER_LIMIT_MAX = 1000

/** The ledger's cursors (the wallet's REST read and GraphQL's walletTransactions alike). */
export const ledgerScope = (accountId: string): CursorScope => ({ list: "wallet-transactions", accountId })

/** A page of the ledger with the balance: what the owner reads. */
export interface WalletPage {
  readonly balance: number
  readonly currency: string
  /** Newest first. */
  readonly transactions: ReadonlyArray<LedgerRow>
  /** The next page's cursor; undefined on the last page. */
  readonly nextCursor: string | undefined
}

/**
 * The account's wallet as its owner reads it (billing is the owner's, DESIGN.md Team): the
 * balance and the ledger, newest first. Credits come from `herald admin wallet-credit`; a charge is
 * booked once per confirmed message (reference = message_id), a refund when the gateway rejects a
 * message after taking it. Charges booked many at a time carry no balance_after.
 */
/** How long a balance read for a send's check serves the next checks (see `balanceFor`). */
const BALANCE_FRESH_MS = 1_000

export class Wallet extends Effect.Service<Wallet>()("herald/wallet/Wallet", {
  effect: Effect.gen(function*() {
    const repo = yield* WalletRepo
    const cursors = yield* ListCursors
    /** One page of the ledger, newest first, after a position (`limit + 1` rows: the extra one says there is more). */
    const ledger = repo.ledger

    const read = (principal: Principal, query: { readonly limit?: number | undefined; readonly cursor?: string | undefined }) =>
      Effect.gen(function*() {
        yield* requireRole(principal, "owner", "read the wallet")
        const scope = ledgerScope(principal.accountId)
        const after = yield* cursors.readPosition(scope, query.cursor)
        const limit = Math.min(query.limit ?? LEDGER_LIMIT_DEFAULT, LEDGER_LIMIT_MAX)
        const wallet = yield* walletOf(principal.accountId)
        const rows = yield* ledger(principal.accountId, after, limit)
        const page = cursors.positionPage(scope, rows, limit, (row) => ({ createdAt: row.position, id: row.txnId }))
        return { ...wallet, transactions: page.rows, nextCursor: page.nextCursor } satisfies WalletPage
      }).pipe(Effect.orDie)

    /** The account's balance and its currency. */
    const walletOf = (accountId: string) =>
      Effect.map(repo.balanceOf(accountId), (row) => ({ balance: Number(row?.walletBalance ?? 0), currency: row?.currency ?? "INR" }))

    // Balances read for checks, per account, kept BALANCE_FRESH_MS. Only a balance that covers the
    // price is taken from here: one that does not is read again, so a refusal (402) is always
    // the database's word, and a credit shows at once to a wallet that was short.
    const checked = new Map<string, { balance: number; readAt: number }>()
    const freshBalance = (accountId: string) =>
      Effect.map(walletOf(accountId), (wallet) => {
        checked.set(accountId, { balance: wallet.balance, readAt: Date.now() })
        return wallet.balance
      })

    /**
     * The balance a send of `price` is checked against: a read, not a reservation (the charge is
     * booked by the sender's commit). A send made the wallet read on every request; now one read a
     * second per account and node serves the checks, and the sends this node accepts meanwhile are
     * taken off it (`spent`). Sends on other nodes show within BALANCE_FRESH_MS, no later than
     * they did to concurrent requests before.
     */
    const balanceFor = (accountId: string, price: number) =>
      Effect.suspend(() => {
        const known = checked.get(accountId)
        if (known !== undefined && Date.now() - known.readAt < BALANCE_FRESH_MS && known.balance >= price) return Effect.succeed(known.balance)
        return freshBalance(accountId)
      })

    /** A send of `amount` this node accepted: taken off the balance it checks the next sends against. */
    const spent = (accountId: string, amount: number) =>
      Effect.sync(() => {
        const known = checked.get(accountId)
        if (known !== undefined) known.balance -= amount
      })

    return { read, ledger, walletOf, balanceFor, spent } as const
  }),
  dependencies: [WalletRepo.Default, ListCursors.Default]
}) {}
