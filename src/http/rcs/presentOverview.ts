import type { AccountOverview } from "../../overview/Overview.ts"

/** GET /api/v1/rcs/overview's answer. */
export const presentOverview = (overview: AccountOverview) => ({
  success: true as const,
  account: { account_id: overview.account.accountId, label: overview.account.label, plan: overview.account.plan },
  wallet: overview.wallet === undefined ? null : { balance: overview.wallet.balance, currency: overview.wallet.currency },
  messages_today: { since: overview.messagesToday.since.toISOString(), total: overview.messagesToday.total, by_status: overview.messagesToday.byStatus },
  last_24_hours: overview.last24Hours
})
