import { Effect, Layer, Schema } from "effect"
import { botInScope } from "../../domain/access.ts"
import { BotNotInScope, NotFound } from "../../domain/errors.ts"
import { BotsCache } from "../../storage/BotsCache.ts"
import { type BotRow, canBroadcast } from "../../storage/BotsRepo.ts"
import { readRoute } from "../readRoute.ts"
import { BotsListQuery } from "./BotsApi.ts"

const present = (bot: BotRow) => ({
  bot_id: bot.botId,
  name: bot.name,
  status: bot.status,
  can_broadcast: canBroadcast(bot),
  bot_use_case: bot.useCase,
  ...(bot.status === "suspended" && bot.suspendReason !== null ? { suspend_reason: bot.suspendReason } : {}),
  created_at: new Date(bot.createdAt).toISOString()
})

/** GET /api/v1/rcs/bots and /bots/{bot_id}: read routes (see readRoute), declared in BotsApi. */
export const BotsRoutes = Layer.mergeAll(
  readRoute("/api/v1/rcs/bots", BotsListQuery, ({ principal, query }) =>
    BotsCache.pipe(
      Effect.flatMap((bots) => bots.list(principal.accountId)),
      Effect.map((rows) => {
        const visible = rows.filter((b) => botInScope(principal, b.botId))
        const filtered = query.can_broadcast === undefined ? visible : visible.filter((b) => canBroadcast(b) === (query.can_broadcast === "true"))
        return { success: true as const, bots: filtered.map(present) }
      })
    )),
  readRoute("/api/v1/rcs/bots/:bot_id", Schema.Struct({}), ({ params, principal }) =>
    Effect.gen(function*() {
      const botId = params.bot_id ?? ""
      const bot = yield* (yield* BotsCache).find(principal.accountId, botId)
      if (bot === undefined) return yield* new NotFound({ message: `no bot ${botId}` })
      if (!botInScope(principal, bot.botId)) return yield* BotNotInScope.instance()
      return { success: true as const, bot: present(bot) }
    }))
)
