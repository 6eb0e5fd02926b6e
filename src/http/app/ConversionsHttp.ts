import { Effect } from "effect"
import { CapiConfigs } from "../../conversions/CapiConfigs.ts"
import { Conversions } from "../../conversions/Conversions.ts"
import { IntegrationLogs } from "../../integrations/IntegrationLogs.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { CurrentAccount } from "./AppAuthentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"

export const CapiConfigHttpLive = apiGroup(HeraldApi, "capiConfig", (handlers) =>
  Effect.gen(function*() {
    const configs = yield* CapiConfigs
    const conversions = yield* Conversions
    return handlers
      .handle("setCapiConfig", ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => Effect.tap(configs.put(principal, payload), () => conversions.nudge(principal.accountId))))
      .handle("getCapiConfig", () => Effect.flatMap(CurrentPrincipal, configs.get))
  }))

export const ConversionsHttpLive = apiGroup(HeraldApi, "conversions", (handlers) =>
  Effect.gen(function*() {
    const conversions = yield* Conversions
    const logs = yield* IntegrationLogs
    return handlers
      .handle("sendCapiEvent", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => conversions.one(account, payload)))
      .handle("sendCapiEvents", ({ payload }) => Effect.flatMap(CurrentAccount, (account) => conversions.many(account, payload.events)))
      .handle("redriveCapiEvents", () => Effect.flatMap(CurrentAccount, conversions.redrive))
      .handle("getCapiEvent", ({ path }) => Effect.flatMap(CurrentAccount, (account) => conversions.get(account, path.id)))
      .handle("integrationLogs", ({ urlParams }) => Effect.flatMap(CurrentAccount, (account) => logs.list(account, urlParams)))
  }))
