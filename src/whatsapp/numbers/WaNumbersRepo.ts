import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export interface WaNumber {
  readonly phoneNumberId: string
  readonly wabaId: string
  readonly accountId: string
  readonly phone: string
  readonly displayName: string | null
  readonly throughput: number
  readonly isDefault: boolean
}

const COLUMNS = "phone_number_id, waba_id, account_id::text, phone, display_name, throughput, is_default"

/** `wa_numbers`: the one writer, and its reads (WaNumbers keeps them in memory). */
export class WaNumbersRepo extends Effect.Service<WaNumbersRepo>()("herald/whatsapp/WaNumbersRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(COLUMNS)

    /** The account's numbers, oldest first. */
    const ofAccount = Effect.fn("WaNumbersRepo.ofAccount")((accountId: string) =>
      sql<WaNumber>`
        SELECT ${columns}
        FROM wa_numbers WHERE account_id = ${accountId}::uuid ORDER BY created_at, phone_number_id`)

    /** The number by Meta's id, whichever account has it. */
    const find = Effect.fn("WaNumbersRepo.find")(function*(phoneNumberId: string) {
      const rows = yield* sql<WaNumber>`SELECT ${columns} FROM wa_numbers WHERE phone_number_id = ${phoneNumberId}`
      return rows[0]
    })

    /** The WhatsApp Business Account of the account's numbers, if it has one. */
    const wabaOf = Effect.fn("WaNumbersRepo.wabaOf")(function*(accountId: string) {
      const [existing] = yield* sql<{ wabaId: string }>`SELECT waba_id FROM wa_numbers WHERE account_id = ${accountId}::uuid LIMIT 1`
      return existing?.wabaId
    })

    /** A number; the account's default when it has none yet. Fails with the unique violation when the phone is taken. */
    const insert = Effect.fn("WaNumbersRepo.insert")(function*(input: {
      readonly phoneNumberId: string
      readonly wabaId: string
      readonly accountId: string
      readonly phone: string
      readonly displayName: string | null
      readonly throughput: number
    }) {
      const [row] = yield* sql<WaNumber>`
        INSERT INTO wa_numbers (phone_number_id, waba_id, account_id, phone, display_name, throughput, is_default)
        VALUES (${input.phoneNumberId}, ${input.wabaId}, ${input.accountId}::uuid, ${input.phone}, ${input.displayName}, ${input.throughput},
                NOT EXISTS (SELECT 1 FROM wa_numbers WHERE account_id = ${input.accountId}::uuid AND is_default))
        RETURNING ${columns}`
      return row!
    })

    const setThroughput = Effect.fn("WaNumbersRepo.setThroughput")(function*(phoneNumberId: string, throughput: number) {
      const rows = yield* sql<WaNumber>`
        UPDATE wa_numbers SET throughput = ${throughput} WHERE phone_number_id = ${phoneNumberId}
        RETURNING ${columns}`
      return rows[0]
    })

    return { ofAccount, find, wabaOf, insert, setThroughput } as const
  })
}) {}
