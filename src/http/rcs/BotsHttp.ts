import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { botInScope } from "../../domain/access.ts"
import { BotNotInScope, NotFound } from "../../domain/errors.ts"
import { type BotRow, BotsRepo, canBroadcast } from "../../storage/BotsRepo.ts"
import { HeraldApi } from "../Api.ts"
import { CurrentPrincipal } from "../Authentication.ts"

const present = (bot: BotRow) => ({
  bot_id: bot.botId,
  name: bot.name,
  status: bot.status,
  can_broadcast: canBroadcast(bot),
  bot_use_case: bot.useCase,
  ...(bot.status === "suspended" && bot.suspendReason !== null ? { suspend_reason: bot.suspendReason } : {}),
  created_at: new Date(bot.createdAt).toISOString()
})

export const BotsHttpLive = HttpApiBuilder.group(HeraldApi, "bots", (handlers) =>
  Effect.map(BotsRepo, (bots) =>
    handlers
      .handle("list", ({ urlParams }) =>
        Effect.gen(function*() {
          const principal = yield* CurrentPrincipal
          const rows = (yield* bots.list(principal.accountId)).filter((b) => botInScope(principal, b.botId))
          const filtered = urlParams.can_broadcast === undefined ? rows : rows.filter((b) => canBroadcast(b) === (urlParams.can_broadcast === "true"))
          return { success: true as const, bots: filtered.map(present) }
        }))
      .handle("get", ({ path }) =>
        Effect.gen(function*() {
          const principal = yield* CurrentPrincipal
          const bot = yield* bots.find(principal.accountId, path.bot_id)
          if (bot === undefined) return yield* new NotFound({ message: `no bot ${path.bot_id}` })
          if (!botInScope(principal, bot.botId)) return yield* BotNotInScope.instance()
          return { success: true as const, bot: present(bot) }
        }))))
