import type { AccountSummary, BillingSummary } from "../../wallet/Billing.ts"
import { presentLedgerRow } from "../rcs/presentWallet.ts"

/** GET /api/v1/app/me's answer. */
export const presentMe = (summary: AccountSummary) => ({
  success: true as const,
  account: {
    account_id: summary.account.accountId,
    label: summary.account.label,
    plan: summary.account.plan,
    rate_limit_per_minute: summary.rateLimitPerMinute,
    wallet: summary.wallet
  }
})

/** GET /api/v1/app/billing's answer. */
export const presentBilling = (billing: BillingSummary) => ({
  success: true as const,
  plan: billing.account.plan,
  rate_limit_per_minute: billing.rateLimitPerMinute,
  wallet: billing.wallet,
  transactions: billing.transactions.map(presentLedgerRow),
  prices: {
    rcs_message: billing.prices.rcsMessage,
    wa_marketing: billing.prices.waMarketing,
    wa_utility: billing.prices.waUtility,
    wa_authentication: billing.prices.waAuthentication
  }
})

/** POST /api/v1/app/developer/secret-key's answer: the new key, shown this once. */
export const presentSecretKey = (generated: { readonly secretKey: string }) => ({
  success: true as const,
  secret_key: generated.secretKey,
  warning: "Store this key now: it is shown only once. Generating another one invalidates this one at once."
})
