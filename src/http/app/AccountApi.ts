import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Plan } from "../../domain/plans.ts"
import { BILLING_TRANSACTIONS } from "../../wallet/Billing.ts"
import { LedgerTransaction } from "../rcs/WalletApi.ts"
import { AppAuthentication, AppIdentity } from "./AppAuthentication.ts"

const WalletBalance = Schema.Struct({ balance: Schema.Number, currency: Schema.String })

/** GET /api/v1/app/me: which account a secret key acts for, its plan's request rate and its balance; every plan. */
export class AccountApi extends HttpApiGroup.make("appAccount")
  .add(
    HttpApiEndpoint.get("me", "/me")
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        account: Schema.Struct({
          account_id: Schema.String,
          label: Schema.String,
          plan: Plan,
          rate_limit_per_minute: Schema.Number.annotations({ description: "the plan's request rate; on Starter, the rate of this path alone" }),
          wallet: WalletBalance
        })
      }))
      .annotate(OpenApi.Summary, "The account, plan and balance of a secret key (answers on every plan)")
  )
  .middleware(AppIdentity)
  .prefix("/api/v1/app") {}

/** GET /api/v1/app/billing: plan, rate, balance, the latest ledger rows and the prices. */
export class BillingApi extends HttpApiGroup.make("appBilling")
  .add(
    HttpApiEndpoint.get("billing", "/billing")
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        plan: Plan,
        rate_limit_per_minute: Schema.Number,
        wallet: WalletBalance,
        transactions: Schema.Array(LedgerTransaction).annotations({ description: `the latest ${BILLING_TRANSACTIONS} ledger rows, newest first` }),
        prices: Schema.Struct({
          rcs_message: Schema.Number.annotations({ description: "one confirmed RCS message" }),
          wa_marketing: Schema.Number.annotations({ description: "one delivered WhatsApp template message of the category" }),
          wa_utility: Schema.Number,
          wa_authentication: Schema.Number
        })
      }))
      .annotate(OpenApi.Summary, "Plan, rate, wallet, the latest ledger rows and prices")
  )
  .middleware(AppAuthentication)
  .prefix("/api/v1/app") {}
