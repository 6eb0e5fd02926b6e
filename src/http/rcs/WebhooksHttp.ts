import { Effect } from "effect"
import { Webhooks } from "../../webhooks/Webhooks.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"

export const WebhooksHttpLive = apiGroup(HeraldApi, "webhooks", (handlers) =>
  Effect.map(Webhooks, (webhooks) =>
    handlers
      .handle("list", () => Effect.flatMap(CurrentPrincipal, webhooks.list))
      .handle("stats", () => Effect.flatMap(CurrentPrincipal, webhooks.stats))
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) =>
          webhooks.create(p, { url: payload.url, events: payload.events, botId: payload.bot_id, includeBroadcastMessages: payload.include_broadcast_messages })))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) =>
          webhooks.update(p, path.webhook_id, {
            url: payload.url,
            events: payload.events,
            botId: payload.bot_id,
            active: payload.active,
            includeBroadcastMessages: payload.include_broadcast_messages
          })))
      .handle("rotateSecret", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => webhooks.rotateSecret(p, path.webhook_id)))
      .handle("remove", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => webhooks.remove(p, path.webhook_id)))
      .handle("test", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => webhooks.test(p, path.webhook_id)))
      .handle("deliveries", ({ path, urlParams }) => Effect.flatMap(CurrentPrincipal, (p) => webhooks.deliveries(p, path.webhook_id, urlParams.limit)))
      .handle("deadLetters", () => Effect.flatMap(CurrentPrincipal, webhooks.deadLetters))
      .handle("replay", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => webhooks.replay(p, path.delivery_id)))))
