import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Every ledger row carries balance_after (issue 22), charges booked many at a time included. The
 * statement trigger of 0010 moves the balance once per statement; it now also writes each new
 * row's balance_after: the balance before the statement plus the movements of the rows up to it
 * (in txn_id order, the order the ledger lists rows written in one statement). Rows written before
 * this migration keep NULL: their order of application is not known any more.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE OR REPLACE FUNCTION herald_apply_charges() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      -- Lock the accounts in one order: two commits charging the same accounts cannot deadlock.
      -- NO KEY UPDATE (what the UPDATE takes anyway), not UPDATE: the ledger rows' own foreign keys
      -- hold KEY SHARE on the same accounts, and upgrading past it would deadlock two chargers.
      PERFORM 1 FROM accounts WHERE account_id IN (SELECT account_id FROM new_rows WHERE kind IN ('charge', 'refund'))
        ORDER BY account_id FOR NO KEY UPDATE;
      WITH moved AS (
        SELECT txn_id, account_id, CASE kind WHEN 'charge' THEN -amount ELSE amount END AS delta
        FROM new_rows WHERE kind IN ('charge', 'refund') AND balance_after IS NULL
      ), applied AS (
        UPDATE accounts a SET wallet_balance = a.wallet_balance + c.delta, updated_at = now()
        FROM (SELECT account_id, sum(delta) AS delta FROM moved GROUP BY account_id) c
        WHERE a.account_id = c.account_id
        RETURNING a.account_id, a.wallet_balance AS after_all, c.delta AS total
      )
      UPDATE wallet_transactions w SET balance_after = r.balance_after
      FROM (
        SELECT m.txn_id, p.after_all - p.total + sum(m.delta) OVER (PARTITION BY m.account_id ORDER BY m.txn_id) AS balance_after
        FROM moved m JOIN applied p USING (account_id)
      ) r
      WHERE w.txn_id = r.txn_id;
      RETURN NULL;
    END $$`
})
