import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Plan } from "../../domain/plans.ts"
import { BILLING_TRANSACTIONS } from "../../wallet/Billing.ts"
import { documented } from "../openApiAnnotations.ts"
import { LedgerTransaction } from "../rcs/WalletApi.ts"
import { AppAuthentication, AppIdentity } from "./AppAuthentication.ts"

const WalletBalance = Schema.Struct({
  balance: Schema.Number.annotations({ description: "What the wallet holds, in its currency's main unit (rupees for INR): sends are charged to it." }),
  currency: Schema.String.annotations({ description: "The wallet's currency, an ISO 4217 code (INR)." })
}).annotations({ description: "The account's prepaid wallet." })

const AccountPlan = Plan.annotations({ description: "The account's plan: starter (no API access but GET /api/v1/app/me), growth, advanced or enterprise." })
const RatePerMinute = Schema.Number.annotations({
  description: "Requests a minute the plan allows the secret key, shared by /api/v1/app, the public API and GraphQL (Growth 300, Advanced 600, " +
    "Enterprise as set for the account); on Starter, 60: the rate of GET /api/v1/app/me alone."
})

const WALLET = { balance: 1250.5, currency: "INR" }

/** GET /api/v1/app/me: which account a secret key acts for, its plan's request rate and its balance; every plan. */
export class AccountApi extends HttpApiGroup.make("appAccount")
  .add(
    HttpApiEndpoint.get("me", "/me")
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        account: Schema.Struct({
          account_id: Schema.String.annotations({ description: "The account's id." }),
          label: Schema.String.annotations({ description: "The account's name." }),
          plan: AccountPlan,
          rate_limit_per_minute: RatePerMinute,
          wallet: WalletBalance
        }).annotations({ description: "The account the secret key belongs to." })
      }))
      .annotateContext(documented({
        summary: "Read the account, plan and balance of a secret key",
        description: "Which account and plan a secret key belongs to, its request rate and its wallet. Answers on every plan, Starter included (from " +
          "a bucket of 60 requests a minute there), so that a client can always tell; every other secret-key path is 403 `feature_locked` on Starter.",
        response: {
          success: true,
          account: { account_id: "3f2e1d0c-9b8a-4765-8432-10fedcba9876", label: "Acme Retail", plan: "growth", rate_limit_per_minute: 300, wallet: WALLET }
        },
        returns: "The key's account."
      }))
  )
  .middleware(AppIdentity)
  .prefix("/api/v1/app")
  .annotate(OpenApi.Description, "The account a secret key acts for: its plan, request rate and wallet (docs/app-api.md).") {}

/** GET /api/v1/app/billing: plan, rate, balance, the latest ledger rows and the prices. */
export class BillingApi extends HttpApiGroup.make("appBilling")
  .add(
    HttpApiEndpoint.get("billing", "/billing")
      .addSuccess(Schema.Struct({
        success: Schema.Literal(true),
        plan: AccountPlan,
        rate_limit_per_minute: RatePerMinute,
        wallet: WalletBalance,
        transactions: Schema.Array(LedgerTransaction).annotations({
          description: `The latest ${BILLING_TRANSACTIONS} rows of the wallet's ledger, newest first (the owner's GET /api/v1/rcs/wallet pages them all).`
        }),
        prices: Schema.Struct({
          rcs_message: Schema.Number.annotations({ description: "One RCS message, charged once the gateway confirms it." }),
          wa_marketing: Schema.Number.annotations({
            description: "One MARKETING WhatsApp template message, charged on its first delivered or read status, never when it fails."
          }),
          wa_utility: Schema.Number.annotations({ description: "One UTILITY WhatsApp template message, charged as a marketing one is." }),
          wa_authentication: Schema.Number.annotations({ description: "One AUTHENTICATION WhatsApp template message, charged as a marketing one is." })
        }).annotations({ description: "What a send is charged, in the wallet's currency. WhatsApp texts and media inside the customer's 24-hour window are free." })
      }))
      .annotateContext(documented({
        summary: "Read the plan, rate, wallet, latest ledger rows and prices",
        description: `The account's plan and request rate, its wallet with the latest ${BILLING_TRANSACTIONS} ledger rows, and the price of each kind ` +
          "of send. A secret key, on Growth and up.",
        response: {
          success: true,
          plan: "growth",
          rate_limit_per_minute: 300,
          wallet: WALLET,
          transactions: [
            {
              txn_id: "0d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6",
              kind: "charge",
              amount: 0.12,
              balance_after: 1250.5,
              reference: "7e8f9a0b-1c2d-4e3f-8a4b-5c6d7e8f9a0b",
              created_at: "2026-03-02T08:15:03.000Z"
            },
            {
              txn_id: "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d",
              kind: "credit",
              amount: 1000,
              balance_after: 1250.62,
              reference: null,
              created_at: "2026-03-01T09:00:00.000Z"
            }
          ],
          prices: { rcs_message: 0.1, wa_marketing: 0.8, wa_utility: 0.12, wa_authentication: 0.12 }
        },
        returns: "The account's billing."
      }))
  )
  .middleware(AppAuthentication)
  .prefix("/api/v1/app")
  .annotate(OpenApi.Description, "The account's billing as a secret key sees it: plan, rate, wallet, the latest ledger rows and the prices (docs/app-api.md).") {}
