import { Effect } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { type Plan, planRatePerMinute, STARTER_IDENTITY_PER_MINUTE } from "../domain/plans.ts"
import { presentLedgerRow, Wallet } from "./Wallet.ts"

/** The account a secret key authenticates (security/SecretKeys.ts, SecretKeyAccount), as billing needs it. */
export interface BilledAccount {
  readonly accountId: string
  readonly label: string
  readonly plan: Plan
  readonly planRatePerMinute: number | null
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
      Effect.map(wallet.walletOf(account.accountId), (balance) => ({
        success: true as const,
        account: {
          account_id: account.accountId,
          label: account.label,
          plan: account.plan,
          rate_limit_per_minute: rateOf(account),
          wallet: balance
        }
      }))

    const billing = (account: BilledAccount) =>
      Effect.gen(function*() {
        const balance = yield* wallet.walletOf(account.accountId)
        const rows = yield* wallet.ledger(account.accountId, undefined, BILLING_TRANSACTIONS).pipe(Effect.orDie)
        return {
          success: true as const,
          plan: account.plan,
          rate_limit_per_minute: rateOf(account),
          wallet: balance,
          transactions: rows.slice(0, BILLING_TRANSACTIONS).map(presentLedgerRow),
          prices: {
            rcs_message: config.messagePrice,
            wa_marketing: config.waPrices.MARKETING,
            wa_utility: config.waPrices.UTILITY,
            wa_authentication: config.waPrices.AUTHENTICATION
          }
        }
      })

    return { me, billing } as const
  }),
  dependencies: [Wallet.Default]
}) {}
