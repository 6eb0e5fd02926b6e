import { Effect } from "effect"
import { Broadcasts } from "../../broadcasts/Broadcasts.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"
import { presentBroadcast, presentBroadcasts, presentTargets } from "./presentBroadcasts.ts"

/** Handlers of BroadcastsApi. */
export const BroadcastsHttpLive = apiGroup(HeraldApi, "broadcasts", (handlers) =>
  Effect.map(Broadcasts, (broadcasts) =>
    handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) =>
          broadcasts.create(p, {
            name: payload.name,
            botId: payload.bot_id,
            templateId: payload.template_id,
            listId: payload.contact_list_id,
            scheduledAt: payload.scheduled_at,
            variables: payload.variables
          }).pipe(Effect.map(presentBroadcast))))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => Effect.map(broadcasts.list(p, urlParams), presentBroadcasts)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => Effect.map(broadcasts.get(p, path.id), presentBroadcast)))
      .handle("targets", ({ path, urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => Effect.map(broadcasts.targets(p, path.id, urlParams), presentTargets)))
      .handle("cancel", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => Effect.map(broadcasts.cancel(p, path.id), presentBroadcast)))
      .handle("retryFailed", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => Effect.map(broadcasts.retryFailed(p, path.id), presentBroadcast)))))
