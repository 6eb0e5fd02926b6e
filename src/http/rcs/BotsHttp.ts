import { Effect, Layer, Schema } from "effect"
import { botInScope } from "../../domain/access.ts"
import { BotNotInScope, NotFound } from "../../domain/errors.ts"
import { BotsCache } from "../../bots/BotsCache.ts"
import { type BotRow, canBroadcast } from "../../bots/BotsRepo.ts"
import { readRoute, renderedOnce } from "../readRoute.ts"
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

const listBody = (rows: ReadonlyArray<BotRow>, canBroadcastFilter: string) => ({
  success: true as const,
  bots: (canBroadcastFilter === "" ? rows : rows.filter((b) => canBroadcast(b) === (canBroadcastFilter === "true"))).map(present)
})

const everyBot = renderedOnce(listBody)

/** GET /api/v1/rcs/bots and /bots/{bot_id}: read routes (see readRoute), declared in BotsApi. */
export const BotsRoutes = Layer.mergeAll(
  readRoute(
    "/api/v1/rcs/bots",
    BotsListQuery,
    Effect.map(BotsCache, (bots) => ({ principal, query }) =>
      Effect.map(bots.list(principal.accountId), (rows) =>
        // Callers who see every bot (API keys, most members) share one rendering per filter.
        principal.bots.includes("*")
          ? everyBot(rows, query.can_broadcast ?? "")
          : listBody(rows.filter((b) => botInScope(principal, b.botId)), query.can_broadcast ?? "")))
  ),
  readRoute(
    "/api/v1/rcs/bots/:bot_id",
    Schema.Struct({}),
    Effect.map(BotsCache, (bots) => ({ params, principal }) =>
      Effect.gen(function*() {
        const botId = params.bot_id ?? ""
        const bot = yield* bots.find(principal.accountId, botId)
        if (bot === undefined) return yield* new NotFound({ message: `no bot ${botId}` })
        if (!botInScope(principal, bot.botId)) return yield* BotNotInScope.instance()
        return { success: true as const, bot: present(bot) }
      }))
  )
)
