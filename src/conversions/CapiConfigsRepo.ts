import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** An account's Conversions API configuration as stored: the token sealed (SecretBox), its last four apart. */
export interface CapiConfigRow {
  readonly datasetId: string
  readonly accessTokenSealed: string
  readonly tokenLast4: string
  readonly testEventCode: string | null
  readonly updatedAt: Date
}

/** `capi_configs`: one row per account, the table's one writer. */
export class CapiConfigsRepo extends Effect.Service<CapiConfigsRepo>()("herald/conversions/CapiConfigsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const find = Effect.fn("CapiConfigsRepo.find")(function*(accountId: string) {
      const [row] = yield* sql<CapiConfigRow>`
        SELECT dataset_id, access_token_sealed, token_last4, test_event_code, updated_at
        FROM capi_configs WHERE account_id = ${accountId}`.pipe(Effect.orDie)
      return row
    })

    /** Sets the account's configuration (replacing the one it had). */
    const save = Effect.fn("CapiConfigsRepo.save")(function*(
      accountId: string,
      input: { readonly datasetId: string; readonly accessTokenSealed: string; readonly tokenLast4: string; readonly testEventCode: string | null }
    ) {
      const [saved] = yield* sql<CapiConfigRow>`
        INSERT INTO capi_configs (account_id, dataset_id, access_token_sealed, token_last4, test_event_code)
        VALUES (${accountId}, ${input.datasetId}, ${input.accessTokenSealed}, ${input.tokenLast4}, ${input.testEventCode})
        ON CONFLICT (account_id) DO UPDATE SET dataset_id = excluded.dataset_id, access_token_sealed = excluded.access_token_sealed,
          token_last4 = excluded.token_last4, test_event_code = excluded.test_event_code, updated_at = now()
        RETURNING dataset_id, access_token_sealed, token_last4, test_event_code, updated_at`.pipe(Effect.orDie)
      return saved!
    })

    /**
     * Where an account's events go, in one read per request: whether it has a configuration, and
     * its default WhatsApp number's WABA (the events' `messaging_channel` context).
     */
    const targetOf = Effect.fn("CapiConfigsRepo.targetOf")(function*(accountId: string) {
      const [row] = yield* sql<{ configured: boolean; wabaId: string | null }>`
        SELECT EXISTS (SELECT 1 FROM capi_configs WHERE account_id = ${accountId}) AS configured,
               (SELECT waba_id FROM wa_numbers WHERE account_id = ${accountId} AND is_default) AS waba_id`.pipe(Effect.orDie)
      return row!
    })

    return { find, save, targetOf } as const
  })
}) {}
