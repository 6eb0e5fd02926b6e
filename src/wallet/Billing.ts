import { Effect } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { type Plan, planRatePerMinute, STARTER_IDENTITY_PER_MINUTE } from "../domain/plans.ts"
import { type LedgerRow, Wallet } from "./Wallet.ts"

/** The account a secret key authenticates (security/SecretKeys.ts, SecretKeyAccount), as billing needs it. */
export interface BilledAccount {
  readonly accountId: string
  readonly label: string
  readonly plan: Plan
  readonly planRatePerMinute: number | null
}

/** What GET /app/me shows of an account. */
export interface AccountSummary {
  readonly account: BilledAccount
  readonly rateLimitPerMinute: number
  readonly wallet: { readonly balance: number; readonly currency: string }
}

/** What GET /app/billing shows: the plan, its rate, the balance, the latest ledger rows and the prices. */
export interface BillingSummary extends AccountSummary {
  readonly transactions: ReadonlyArray<LedgerRow>
  readonly prices: { readonly rcsMessage: number; readonly waMarketing: number; readonly waUtility: number; readonly waAuthentication: number }
}

/** Ledger rows GET /app/billing shows: the latest; the owner's GET /rcs/wallet pages them all. */
export const BILLING_TRANSACTIONS = 20

/**
 * The account as a secret key sees it (docs/app-api.md): GET /app/me (which account and plan a
 * key belongs to, and its balance) and GET /app/billing (plan, rate, balance, the latest ledger
 * rows and the prices a send is charged).
 */
export class Billing extends Effect.Service<Billing>()("herald/wallet/Billing", {
  effect: Effect.gen(function*() {
    const wallet = yield* Wallet
    const config = yield* AppConfig

    const rateOf = (account: BilledAccount) => planRatePerMinute(account.plan, account.planRatePerMinute) ?? STARTER_IDENTITY_PER_MINUTE

    const me = (account: BilledAccount) =>
      Effect.map(wallet.walletOf(account.accountId), (balance): AccountSummary => ({ account, rateLimitPerMinute: rateOf(account), wallet: balance }))

    const billing = (account: BilledAccount) =>
      Effect.gen(function*() {
        const balance = yield* wallet.walletOf(account.accountId)
        const rows = yield* wallet.ledger(account.accountId, undefined, BILLING_TRANSACTIONS)
        return {
          account,
          rateLimitPerMinute: rateOf(account),
          wallet: balance,
          transactions: rows.slice(0, BILLING_TRANSACTIONS),
          prices: {
            rcsMessage: config.messagePrice,
            waMarketing: config.waPrices.MARKETING,
            waUtility: config.waPrices.UTILITY,
            waAuthentication: config.waPrices.AUTHENTICATION
          }
        } satisfies BillingSummary
      })

    return { me, billing } as const
  }),
  dependencies: [Wallet.Default]
}) {}
