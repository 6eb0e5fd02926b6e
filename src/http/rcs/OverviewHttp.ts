import { Effect } from "effect"
import { Overview } from "../../overview/Overview.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"
import { presentOverview } from "./presentOverview.ts"

export const OverviewHttpLive = apiGroup(HeraldApi, "overview", (handlers) =>
  Effect.map(Overview, (overview) =>
    handlers.handle("read", ({ urlParams }) =>
      CurrentPrincipal.pipe(Effect.flatMap((principal) => overview.read(principal, urlParams)), Effect.map(presentOverview)))))
