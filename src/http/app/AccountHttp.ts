import { Effect } from "effect"
import { Billing } from "../../wallet/Billing.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentAccount } from "./AppAuthentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"

export const AccountHttpLive = apiGroup(HeraldApi, "appAccount", (handlers) =>
  Effect.map(Billing, (billing) => handlers.handle("me", () => Effect.flatMap(CurrentAccount, billing.me))))

export const BillingHttpLive = apiGroup(HeraldApi, "appBilling", (handlers) =>
  Effect.map(Billing, (billing) => handlers.handle("billing", () => Effect.flatMap(CurrentAccount, billing.billing))))
