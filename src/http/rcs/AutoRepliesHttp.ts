import { Effect } from "effect"
import { AutoReplies } from "../../autoReplies/AutoReplies.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"
import { apiGroup } from "../adapter/apiRoutes.ts"
import { presentFires, presentOneRule, presentRules } from "./presentAutoReplies.ts"
import { presentDone } from "./listPage.ts"

export const AutoRepliesHttpLive = apiGroup(HeraldApi, "autoReplies", (handlers) =>
  Effect.map(AutoReplies, (autoReplies) =>
    handlers
      .handle("list", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => Effect.map(autoReplies.list(p, path.bot_id), presentRules)))
      .handle("create", ({ path, payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) =>
          autoReplies.create(p, path.bot_id, {
            match: payload.match,
            keyword: payload.keyword,
            reply: payload.reply,
            cooldownSeconds: payload.cooldown_seconds,
            active: payload.active
          }).pipe(Effect.map(presentOneRule))))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentPrincipal, (p) =>
          autoReplies.update(p, path.bot_id, path.rule_id, {
            match: payload.match,
            keyword: payload.keyword,
            reply: payload.reply,
            cooldownSeconds: payload.cooldown_seconds,
            active: payload.active
          }).pipe(Effect.map(presentOneRule))))
      .handle("remove", ({ path }) => Effect.flatMap(CurrentPrincipal, (p) => Effect.map(autoReplies.remove(p, path.bot_id, path.rule_id), presentDone)))
      .handle("fires", ({ path, urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (p) => Effect.map(autoReplies.fires(p, path.bot_id, { limit: urlParams.limit, cursor: urlParams.cursor }), presentFires)))))
