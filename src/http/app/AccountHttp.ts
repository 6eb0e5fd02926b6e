import { Effect } from "effect"
import { Billing } from "../../wallet/Billing.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentAccount } from "./AppAuthentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"
import { presentBilling, presentMe } from "./presentAccount.ts"

export const AccountHttpLive = apiGroup(HeraldApi, "appAccount", (handlers) =>
  Effect.map(Billing, (billing) => handlers.handle("me", () => CurrentAccount.pipe(Effect.flatMap(billing.me), Effect.map(presentMe)))))

export const BillingHttpLive = apiGroup(HeraldApi, "appBilling", (handlers) =>
  Effect.map(Billing, (billing) => handlers.handle("billing", () => CurrentAccount.pipe(Effect.flatMap(billing.billing), Effect.map(presentBilling)))))
