import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export type BotStatus = "pending" | "active" | "rejected" | "suspended"
export type UseCase = "promotional" | "transactional" | "otp"

export interface BotRow {
  readonly botId: string
  readonly accountId: string
  readonly name: string
  readonly status: BotStatus
  readonly suspendReason: string | null
  readonly useCase: UseCase | null
  readonly createdAt: Date
}

/** can_broadcast (DESIGN.md): true when the use case was never recorded, or is promotional. */
export const canBroadcast = (bot: BotRow): boolean => bot.useCase === null || bot.useCase === "promotional"

export class BotsRepo extends Effect.Service<BotsRepo>()("herald/BotsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const create = (input: { accountId: string; name: string; useCase: UseCase | null; status: BotStatus }) =>
      sql<BotRow>`
        INSERT INTO bots (account_id, name, use_case, status)
        VALUES (${input.accountId}, ${input.name}, ${input.useCase}, ${input.status})
        RETURNING bot_id, account_id, name, status, suspend_reason, use_case, created_at`.pipe(Effect.map((rows) => rows[0]!), Effect.orDie)

    const list = (accountId: string) =>
      sql<BotRow>`
        SELECT bot_id, account_id, name, status, suspend_reason, use_case, created_at
        FROM bots WHERE account_id = ${accountId} ORDER BY created_at DESC`.pipe(Effect.orDie)

    /** The bot if it belongs to the account (another account's bot is as good as unknown). */
    const find = (accountId: string, botId: string) =>
      sql<BotRow>`
        SELECT bot_id, account_id, name, status, suspend_reason, use_case, created_at
        FROM bots WHERE account_id = ${accountId} AND bot_id::text = ${botId}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    return { create, list, find } as const
  })
}) {}
