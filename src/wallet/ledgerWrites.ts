import type { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"

/**
 * The one writer of `wallet_transactions`, the accounts' ledger (a trigger keeps
 * accounts.wallet_balance). A charge is booked in the statement or the commit that records what it
 * pays for, never after, so each builder here is composed into its caller's transaction: a
 * statement, a CTE of a larger statement, a prepared statement's text or an actor's commit. A
 * charge's or refund's reference (a message id) is unique per kind, so booking one twice books it
 * once.
 */

/** Charges `amount` for `reference` once. */
export const chargeOnce = (sql: SqlClient.SqlClient, entry: { readonly accountId: string; readonly amount: string | number; readonly reference: string }) =>
  sql`
    INSERT INTO wallet_transactions (account_id, kind, amount, reference)
    VALUES (${entry.accountId}::uuid, 'charge', ${entry.amount}::numeric, ${entry.reference})
    ON CONFLICT DO NOTHING`

/** `chargeOnce` as a prepared statement's text: $1 account, $2 amount, $3 reference. */
export const CHARGE_ONCE_PREPARED = `
  INSERT INTO wallet_transactions (account_id, kind, amount, reference)
  VALUES ($1, 'charge', $2::numeric, $3)
  ON CONFLICT DO NOTHING`

/** Gives back the charge booked for `reference` (if one was), once. */
export const refundCharge = (sql: SqlClient.SqlClient, accountId: string, reference: string) =>
  sql`
    INSERT INTO wallet_transactions (account_id, kind, amount, reference)
    SELECT account_id, 'refund', amount, reference FROM wallet_transactions
    WHERE account_id = ${accountId} AND kind = 'charge' AND reference = ${reference}
    ON CONFLICT DO NOTHING`

/**
 * Books the rows `select` gives as (account_id, kind, amount, reference), for a CTE of a larger
 * statement (a broadcast chunk's charges, the charges and refunds of a batch of reports).
 */
export const bookSelected = (sql: SqlClient.SqlClient, select: Fragment) =>
  sql`INSERT INTO wallet_transactions (account_id, kind, amount, reference) ${select} ON CONFLICT DO NOTHING`

/** An operator's credit, with the balance it leaves. */
export const bookCredit = (sql: SqlClient.SqlClient, entry: { readonly accountId: string; readonly amount: string | number; readonly balanceAfter: string }) =>
  sql`INSERT INTO wallet_transactions ${sql.insert({ accountId: entry.accountId, kind: "credit", amount: entry.amount, balanceAfter: entry.balanceAfter })}`

/** A charge staged in an actor's commit (rows of one commit share one INSERT). */
export const stageCharge = (
  context: { readonly insert: (table: string, row: Readonly<Record<string, unknown>>) => void },
  entry: { readonly accountId: string; readonly amount: string | number; readonly reference: string }
) => context.insert("wallet_transactions", { account_id: entry.accountId, kind: "charge", amount: entry.amount, reference: entry.reference })
