import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { planRatePerMinute } from "../../domain/plans.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentAccount } from "./AppAuthentication.ts"

export const AccountHttpLive = HttpApiBuilder.group(HeraldApi, "appAccount", (handlers) =>
  handlers.handle("me", () =>
    Effect.map(CurrentAccount, (account) => ({
      success: true as const,
      account: {
        account_id: account.accountId,
        label: account.label,
        plan: account.plan,
        // Never null here: the middleware has already refused plans without API access.
        rate_limit_per_minute: planRatePerMinute(account.plan, account.planRatePerMinute) ?? 0
      }
    }))))
