import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Billing } from "../../wallet/Billing.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentAccount } from "./AppAuthentication.ts"

export const AccountHttpLive = HttpApiBuilder.group(HeraldApi, "appAccount", (handlers) =>
  Effect.map(Billing, (billing) => handlers.handle("me", () => Effect.flatMap(CurrentAccount, billing.me))))

export const BillingHttpLive = HttpApiBuilder.group(HeraldApi, "appBilling", (handlers) =>
  Effect.map(Billing, (billing) => handlers.handle("billing", () => Effect.flatMap(CurrentAccount, billing.billing))))
