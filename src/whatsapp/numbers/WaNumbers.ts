import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { randomInt } from "node:crypto"
import { ChangeFeed } from "../../storage/ChangeFeed.ts"
import { makeReadCache } from "../../storage/ReadCache.ts"
import { isUniqueViolation } from "../../storage/sqlState.ts"

export interface WaNumber {
  readonly phoneNumberId: string
  readonly wabaId: string
  readonly accountId: string
  readonly phone: string
  readonly displayName: string | null
  readonly throughput: number
  readonly isDefault: boolean
}

/** Meta's default messaging tier: 80 messages a second per number. */
export const WA_THROUGHPUT_DEFAULT = 80

export class WaNumberTaken extends Schema.TaggedError<WaNumberTaken>()("WaNumberTaken", { message: Schema.String }) {}

/** Meta's ids are 15 or 16 decimal digits; Herald makes its own of the same form for the numbers it onboards. */
const metaId = () => `1${Array.from({ length: 14 }, () => randomInt(10)).join("")}`

/**
 * An account's WhatsApp numbers, onboarded by an operator (`herald admin create-wa-number`). The
 * first is the account's default sender. Read on every public send and every Meta webhook, so kept
 * in memory and dropped by the change feed when a number of the account changes.
 */
export class WaNumbers extends Effect.Service<WaNumbers>()("herald/whatsapp/WaNumbers", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const byAccount = yield* makeReadCache<ReadonlyArray<WaNumber>>({ tables: ["wa_numbers", "accounts"], capacity: 100_000 })
    const byId = yield* makeReadCache<WaNumber>({ tables: ["wa_numbers", "accounts"], capacity: 100_000 })

    const list = (accountId: string) =>
      Effect.map(
        byAccount.get(accountId, () =>
          Effect.map(
            sql<WaNumber>`
              SELECT phone_number_id, waba_id, account_id::text, phone, display_name, throughput, is_default
              FROM wa_numbers WHERE account_id = ${accountId}::uuid ORDER BY created_at, phone_number_id`,
            (rows) => ({ accountId, value: rows })
          )),
        (rows) => rows ?? []
      ).pipe(Effect.orDie)

    /** The number by Meta's id, whichever account has it (webhooks name the number, not the account). */
    const find = (phoneNumberId: string) =>
      byId.get(phoneNumberId, () =>
        Effect.map(
          sql<WaNumber>`
            SELECT phone_number_id, waba_id, account_id::text, phone, display_name, throughput, is_default
            FROM wa_numbers WHERE phone_number_id = ${phoneNumberId}`,
          (rows) => rows[0] && { accountId: rows[0].accountId, value: rows[0] }
        )).pipe(Effect.orDie)

    /** The number an account sends from: the one asked for (when it is the account's), else the default. */
    const sender = (accountId: string, phoneNumberId: string | undefined) =>
      Effect.map(list(accountId), (numbers) =>
        phoneNumberId === undefined ? numbers.find((n) => n.isDefault) : numbers.find((n) => n.phoneNumberId === phoneNumberId))

    const create = (input: { accountId: string; phone: string; displayName: string | null; throughput: number }) =>
      Effect.gen(function*() {
        const phoneNumberId = metaId()
        // Numbers of one account share its WhatsApp Business Account.
        const [existing] = yield* sql<{ wabaId: string }>`SELECT waba_id FROM wa_numbers WHERE account_id = ${input.accountId}::uuid LIMIT 1`
        const wabaId = existing?.wabaId ?? metaId()
        const [row] = yield* sql<WaNumber>`
          INSERT INTO wa_numbers (phone_number_id, waba_id, account_id, phone, display_name, throughput, is_default)
          VALUES (${phoneNumberId}, ${wabaId}, ${input.accountId}::uuid, ${input.phone}, ${input.displayName}, ${input.throughput},
                  NOT EXISTS (SELECT 1 FROM wa_numbers WHERE account_id = ${input.accountId}::uuid AND is_default))
          RETURNING phone_number_id, waba_id, account_id::text, phone, display_name, throughput, is_default`.pipe(
          Effect.catchIf(isUniqueViolation, () => new WaNumberTaken({ message: `${input.phone} is already a WhatsApp number of an account` }))
        )
        return row!
      })

    const setThroughput = (phoneNumberId: string, throughput: number) =>
      Effect.map(
        sql<WaNumber>`
          UPDATE wa_numbers SET throughput = ${throughput} WHERE phone_number_id = ${phoneNumberId}
          RETURNING phone_number_id, waba_id, account_id::text, phone, display_name, throughput, is_default`,
        (rows) => rows[0]
      )

    return { list, find, sender, create, setThroughput } as const
  }),
  dependencies: [ChangeFeed.Default]
}) {}
