import { Effect } from "effect"
import { botInScope } from "../domain/access.ts"
import { BotNotInScope } from "../domain/errors.ts"
import { isUuid } from "../domain/ids.ts"
import type { Principal } from "../domain/signIn.ts"
import type { BotsCache } from "../bots/BotsCache.ts"
import { BotNotActive } from "./errors.ts"

const STATE: Record<string, string> = { pending: "waiting for the platform's approval", suspended: "suspended", rejected: "rejected" }

/**
 * The bot a send or a broadcast goes out from: an active bot of the caller's account (403
 * bot_not_active otherwise, whether it is another account's, unknown or not active, the message
 * saying which), in the
 * caller's bot scope (403 bot_not_in_scope).
 */
export const activeBot = (bots: BotsCache, principal: Principal, botId: string) =>
  Effect.gen(function*() {
    // The contract answers 403 bot_not_active for any bot_id the caller does not own; the message
    // tells a malformed id, an unknown one and an inactive bot apart.
    if (!isUuid(botId)) return yield* new BotNotActive({ message: `bot_id ${JSON.stringify(botId.slice(0, 64))} is not a bot id: bot ids are UUIDs, as GET /api/v1/rcs/bots lists them` })
    const bot = yield* bots.find(principal.accountId, botId)
    // Unknown and another account's read alike, so ids of other accounts cannot be probed.
    if (bot === undefined) return yield* new BotNotActive({ message: `bot ${botId} is not a bot of this account` })
    if (bot.status !== "active") {
      const why = bot.status === "suspended" && bot.suspendReason ? ` (${bot.suspendReason})` : ""
      return yield* new BotNotActive({ message: `bot ${botId} is ${STATE[bot.status] ?? bot.status}${why}: only an active bot sends` })
    }
    if (!botInScope(principal, botId)) return yield* BotNotInScope.instance()
    return bot
  })
