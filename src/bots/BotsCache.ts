import { Effect } from "effect"
import { type BotRow, BotsRepo } from "./BotsRepo.ts"
import { ChangeFeed } from "../storage/ChangeFeed.ts"
import { makeReadCache } from "../storage/ReadCache.ts"

/**
 * The bots of an account as the API reads them on every bot-scoped request, kept in memory and
 * dropped by the change feed when any bot of the account changes.
 */
export class BotsCache extends Effect.Service<BotsCache>()("herald/BotsCache", {
  scoped: Effect.gen(function*() {
    const repo = yield* BotsRepo
    const cache = yield* makeReadCache<ReadonlyArray<BotRow>>({ tables: ["bots", "accounts"], capacity: 50_000 })

    const list = (accountId: string) =>
      Effect.map(
        cache.get(accountId, () => Effect.map(repo.list(accountId), (bots) => ({ accountId, value: bots }))),
        (bots) => bots ?? []
      )

    /** The bot if it belongs to the account (another account's bot is as good as unknown). */
    const find = (accountId: string, botId: string) => Effect.map(list(accountId), (bots) => bots.find((b) => b.botId === botId))

    return { list, find } as const
  }),
  dependencies: [BotsRepo.Default, ChangeFeed.Default]
}) {}
