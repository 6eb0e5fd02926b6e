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
  /** Upstream messages per second: NULL the platform default, 0 unlimited. */
  readonly throughput: number | null
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
        RETURNING bot_id, account_id, name, status, suspend_reason, use_case, throughput, created_at`.pipe(Effect.map((rows) => rows[0]!), Effect.orDie)

    const list = (accountId: string) =>
      sql<BotRow>`
        SELECT bot_id, account_id, name, status, suspend_reason, use_case, throughput, created_at
        FROM bots WHERE account_id = ${accountId} ORDER BY created_at DESC`.pipe(Effect.orDie)

    /** The bot if it belongs to the account (another account's bot is as good as unknown). */
    const find = (accountId: string, botId: string) =>
      sql<BotRow>`
        SELECT bot_id, account_id, name, status, suspend_reason, use_case, throughput, created_at
        FROM bots WHERE account_id = ${accountId} AND bot_id::text = ${botId}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    /**
     * Claims the GSTIN and the site for the account, then registers the bot, in one transaction.
     * Returns the fields another account holds already (nothing is written then).
     */
    const apply = (input: {
      readonly accountId: string
      readonly name: string
      readonly useCase: UseCase
      readonly companyName: string
      readonly companyGstin: string
      readonly brandWebsite: string
      readonly brandSite: string
    }) =>
      Effect.gen(function*() {
        const claims = [["company_gstin", input.companyGstin], ["brand_website", input.brandSite]] as const
        yield* sql`
          INSERT INTO bot_identity_claims (field, value, account_id)
          SELECT f, v, ${input.accountId}::uuid FROM unnest(${claims.map((c) => c[0])}::text[], ${claims.map((c) => c[1])}::text[]) AS t(f, v)
          ON CONFLICT (field, value) DO NOTHING`
        const taken = yield* sql<{ field: "company_gstin" | "brand_website" }>`
          SELECT field FROM bot_identity_claims
          WHERE (field, value) IN ((${claims[0][0]}, ${claims[0][1]}), (${claims[1][0]}, ${claims[1][1]}))
            AND account_id <> ${input.accountId}::uuid
          ORDER BY field DESC`
        // Failing rolls the transaction back: the claims just made go with it.
        if (taken.length > 0) return yield* Effect.fail({ taken: taken.map((t) => t.field) })
        const [bot] = yield* sql<BotRow>`
          INSERT INTO bots (account_id, name, use_case, status, company_name, company_gstin, brand_website)
          VALUES (${input.accountId}, ${input.name}, ${input.useCase}, 'pending', ${input.companyName}, ${input.companyGstin}, ${input.brandWebsite})
          RETURNING bot_id, account_id, name, status, suspend_reason, use_case, throughput, created_at`
        return bot!
      }).pipe(
        sql.withTransaction,
        Effect.catchTag("SqlError", Effect.die),
        Effect.either,
        Effect.map((result) =>
          result._tag === "Right" ? ({ _tag: "Registered", bot: result.right } as const) : ({ _tag: "Taken", fields: result.left.taken } as const)
        )
      )

    /** An operator's decision on a bot (admin); the reason is kept while it is suspended. */
    const setStatus = (botId: string, status: Exclude<BotStatus, "pending">, reason: string | null) =>
      sql<BotRow>`
        UPDATE bots SET status = ${status}, suspend_reason = ${status === "suspended" ? reason : null}, updated_at = now()
        WHERE bot_id::text = ${botId}
        RETURNING bot_id, account_id, name, status, suspend_reason, use_case, throughput, created_at`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    /** `herald admin bot-throughput`: messages per second upstream, 0 for unlimited. */
    const setThroughput = (botId: string, throughput: number) =>
      sql<BotRow>`
        UPDATE bots SET throughput = ${throughput}, updated_at = now()
        WHERE bot_id::text = ${botId}
        RETURNING bot_id, account_id, name, status, suspend_reason, use_case, throughput, created_at`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    /** A bot by id alone, for the nodes that send for it (the sender actor's owner). */
    const findById = (botId: string) =>
      sql<BotRow>`
        SELECT bot_id, account_id, name, status, suspend_reason, use_case, throughput, created_at
        FROM bots WHERE bot_id::text = ${botId}`.pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    return { create, list, find, findById, apply, setStatus, setThroughput } as const
  })
}) {}
