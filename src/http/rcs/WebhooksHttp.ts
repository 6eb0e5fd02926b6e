import { Effect } from "effect"
import { Webhooks } from "../../webhooks/Webhooks.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"
import {
  presentAttempts,
  presentCreated,
  presentDeadLetters,
  presentDone,
  presentList,
  presentReplayed,
  presentRotated,
  presentStats,
  presentTest,
  presentUpdated
} from "./webhooksPresent.ts"

export const WebhooksHttpLive = apiGroup(HeraldApi, "webhooks", (handlers) =>
  Effect.map(Webhooks, (webhooks) =>
    handlers
      .handle("list", () => Effect.flatMap(CurrentPrincipal, webhooks.list).pipe(Effect.map(presentList)))
      .handle("stats", () => Effect.flatMap(CurrentPrincipal, webhooks.stats).pipe(Effect.map(presentStats)))
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) =>
          webhooks.create(p, { url: payload.url, events: payload.events, botId: payload.bot_id, includeBroadcastMessages: payload.include_broadcast_messages })).pipe(
            Effect.map(presentCreated)
          ))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) =>
          webhooks.update(p, path.webhook_id, {
            url: payload.url,
            events: payload.events,
            botId: payload.bot_id,
            active: payload.active,
            includeBroadcastMessages: payload.include_broadcast_messages
          })).pipe(Effect.map(presentUpdated)))
      .handle("rotateSecret", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => webhooks.rotateSecret(p, path.webhook_id)).pipe(Effect.map(presentRotated)))
      .handle("remove", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => webhooks.remove(p, path.webhook_id)).pipe(Effect.map(presentDone)))
      .handle("test", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => webhooks.test(p, path.webhook_id)).pipe(Effect.map(presentTest)))
      .handle("deliveries", ({ path, urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (p) => webhooks.deliveries(p, path.webhook_id, urlParams.limit)).pipe(Effect.map(presentAttempts)))
      .handle("deadLetters", () => Effect.flatMap(CurrentPrincipal, webhooks.deadLetters).pipe(Effect.map(presentDeadLetters)))
      .handle("replay", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => webhooks.replay(p, path.delivery_id)).pipe(Effect.map(presentReplayed)))))
