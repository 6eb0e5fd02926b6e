import { Effect } from "effect"
import { CapiConfigs } from "../../conversions/CapiConfigs.ts"
import { Conversions } from "../../conversions/Conversions.ts"
import { IntegrationLogs } from "../../integrations/IntegrationLogs.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { CurrentAccount } from "./AppAuthentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"
import { presentPage } from "../page.ts"
import { presentCapiConfig, presentCapiEvent, presentIntegrationLog } from "./appPresent.ts"

export const CapiConfigHttpLive = apiGroup(HeraldApi, "capiConfig", (handlers) =>
  Effect.gen(function*() {
    const configs = yield* CapiConfigs
    const conversions = yield* Conversions
    return handlers
      .handle("setCapiConfig", ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          configs.put(principal, payload).pipe(Effect.tap(() => conversions.nudge(principal.accountId)), Effect.map(presentCapiConfig))))
      .handle("getCapiConfig", () => Effect.flatMap(CurrentPrincipal, (principal) => Effect.map(configs.get(principal), presentCapiConfig)))
  }))

export const ConversionsHttpLive = apiGroup(HeraldApi, "conversions", (handlers) =>
  Effect.gen(function*() {
    const conversions = yield* Conversions
    const logs = yield* IntegrationLogs
    return handlers
      .handle("sendCapiEvent", ({ payload }) =>
        Effect.flatMap(CurrentAccount, (account) => Effect.map(conversions.one(account, payload), (id) => ({ result: true as const, success: true as const, id }))))
      .handle("sendCapiEvents", ({ payload }) =>
        Effect.flatMap(CurrentAccount, (account) => Effect.map(conversions.many(account, payload.events), (ids) => ({ result: true as const, success: true as const, ids }))))
      .handle("redriveCapiEvents", () =>
        Effect.flatMap(CurrentAccount, (account) => Effect.map(conversions.redrive(account), (requeued) => ({ success: true as const, requeued }))))
      .handle("getCapiEvent", ({ path }) =>
        Effect.flatMap(CurrentAccount, (account) => Effect.map(conversions.get(account, path.id), (event) => ({ success: true as const, event: presentCapiEvent(event) }))))
      .handle("integrationLogs", ({ urlParams }) =>
        Effect.flatMap(CurrentAccount, (account) => Effect.map(logs.list(account, urlParams), (page) => presentPage("logs", page, presentIntegrationLog))))
  }))
