import { Effect } from "effect"
import { botInScope } from "../domain/access.ts"
import { BotNotInScope } from "../domain/errors.ts"
import type { Principal } from "../domain/signIn.ts"
import type { BotsCache } from "../storage/BotsCache.ts"
import { BotNotActive } from "./errors.ts"

/**
 * The bot a send or a broadcast goes out from: an active bot of the caller's account (403
 * bot_not_active otherwise, whether it is another account's, unknown or not active), in the
 * caller's bot scope (403 bot_not_in_scope).
 */
export const activeBot = (bots: BotsCache, principal: Principal, botId: string) =>
  Effect.gen(function*() {
    const bot = yield* bots.find(principal.accountId, botId)
    if (bot === undefined || bot.status !== "active") {
      return yield* new BotNotActive({ message: `bot ${botId} is not an active bot of this account` })
    }
    if (!botInScope(principal, botId)) return yield* BotNotInScope.instance()
    return bot
  })
